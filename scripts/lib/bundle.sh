# Helpers for the scripts that build here and carry binaries to a GPU machine, which has the CUDA
# runtime but none of the build's other shared libraries. Source it: . scripts/lib/bundle.sh

# bundle_libraries DIR BINARY...: copies the shared libraries the binaries need and the GPU
# machine lacks (Boost, fmt, TOML++, the CUDA runtime) into DIR/lib.
bundle_libraries() {
  local dir=$1 binary
  shift
  mkdir -p "$dir/lib"
  for binary in "$@"; do
    ldd "$binary" | awk '/=> \// {print $3}' | grep -E 'boost|fmt|toml|cudart' | xargs -r -I{} cp -L {} "$dir/lib/"
  done
}

# describe_machine: the date, the host's cores and memory, and each GPU (name, driver, memory), for
# the head of a GPU run's log.
describe_machine() {
  date -u '+%Y-%m-%d %H:%M:%S UTC'
  echo "host: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
}

# unpack_binaries DIR TARGET: decompresses DIR/*.xz into TARGET, executable.
unpack_binaries() {
  local dir=$1 target=$2 packed
  mkdir -p "$target"
  for packed in "$dir"/*.xz; do xz -dc "$packed" >"$target/$(basename "$packed" .xz)"; done
  chmod +x "$target"/*
}
