#!/usr/bin/env bash
# The project's layout (.clang-format) over every C, C++ and CUDA file git tracks.
#   scripts/format.sh           rewrites the files in place
#   scripts/format.sh --check   changes nothing; lists the files whose layout differs, exit 1 if any
# clang-format 14 (Debian 12's): another version may lay the same code out differently.
set -euo pipefail
cd "$(dirname "$0")/.."
formatter=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$formatter" ]; then
  echo "format: clang-format-14 is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh' | grep -v '^tests/circuits/node_modules/')
if [ "${1:-}" = --check ]; then
  differ=()
  for file in "${files[@]}"; do
    "$formatter" --style=file "$file" | cmp -s - "$file" || differ+=("$file")
  done
  if [ ${#differ[@]} -gt 0 ]; then
    printf 'format: %s is not laid out as .clang-format says\n' "${differ[@]}" >&2
    echo "format: ${#differ[@]} of ${#files[@]} files differ; scripts/format.sh rewrites them" >&2
    exit 1
  fi
  echo "format: all ${#files[@]} files laid out as .clang-format says"
  exit 0
fi
printf '%s\0' "${files[@]}" | xargs -0 -P "$(nproc)" -n 16 "$formatter" --style=file -i
echo "format: ${#files[@]} files laid out"
