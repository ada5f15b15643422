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

# pack_binaries DIR BINARY...: DIR afresh with each binary stripped, the shared libraries they need
# (bundle_libraries) and the binaries compressed (unpack_binaries restores them).
pack_binaries() {
  local dir=$1 binary
  shift
  rm -rf "$dir" && mkdir -p "$dir"
  for binary in "$@"; do strip -o "$dir/$(basename "$binary")" "$binary"; done
  local packed=()
  for binary in "$@"; do packed+=("$dir/$(basename "$binary")"); done
  bundle_libraries "$dir" "${packed[@]}"
  xz -T2 -6 "${packed[@]}"
  du -sh "$dir"
}

# start_run DIR NAME: on the GPU machine, the bundle DIR's binaries unpacked into $bin and its
# libraries on the path; $out ($OUT, else /tmp/NAME) and an empty $work (/tmp/NAME-work); $log
# ($out/scale.log) begun with the machine's description; $status 0.
start_run() {
  local dir=$1 name=$2
  export LD_LIBRARY_PATH="$PWD/$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  out="${OUT:-/tmp/$name}"
  work=/tmp/$name-work
  rm -rf "$work" && mkdir -p "$out" "$work"
  bin=$dir/bin
  unpack_binaries "$dir" "$bin"
  log=$out/scale.log
  describe_machine >"$log"
  status=0
}
