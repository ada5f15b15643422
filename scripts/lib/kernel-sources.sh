# The kernel library's sources for the nvcc-only scripts, from the one list that CMake reads too
# (cuda/kernels/sources.txt). Source this file; paths are relative to the repository root.
#   kernel_sources [cu|cpp]   every listed source (or only the .cu or the .cpp ones), one a line
#   kernel_source NAME        the listed path ending in /NAME (e.g. batch_addition.cu); fails if none
kernel_sources_list="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/cuda/kernels/sources.txt"

kernel_sources() {
  local only=${1:-} line
  while IFS= read -r line || [[ -n $line ]]; do
    line=${line%%#*}
    line=${line//[[:space:]]/}
    [[ -n $line ]] || continue
    [[ -z $only || $line == *."$only" ]] || continue
    echo "cuda/kernels/$line"
  done <"$kernel_sources_list"
}

kernel_source() {
  local path
  path=$(kernel_sources | grep -E "(^|/)$1\$" | head -1)
  [[ -n $path ]] || { echo "kernel_source: $1 is not in $kernel_sources_list" >&2; return 1; }
  echo "$path"
}

