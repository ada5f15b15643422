#!/usr/bin/env bash
# Installs what Stagehand needs to build and test on Debian 12, skipping what is already there.
# Node.js and npm are needed by the tests (reference vectors from @noble/curves, snarkjs);
# librsvg2-bin (rsvg-convert) by the tests that render the trace pictures to PNG; golang-go by
# the test that builds the Go caller of the C ABI (examples/go); curl by the `stagehand serve`
# tests and scripts/bench-serve.sh; cargo and rustc (Debian's) by the test of the Rust crate
# bindings/rust/supraseal-c2, which builds offline with no crates.io dependency; clang-format-14 by
# scripts/format.sh --check, the first step of scripts/test.sh.
# --sanitizers: also clang 14 with its sanitizer and libFuzzer runtimes, for scripts/sanitize.sh
# and scripts/fuzz.sh (not needed by the main build).
set -euo pipefail

packages=(build-essential cmake ninja-build ccache pkg-config git
          libboost-dev libboost-test-dev librange-v3-dev libtomlplusplus-dev
          libfmt-dev libcli11-dev nlohmann-json3-dev
          librsvg2-bin golang-go curl clang-format-14 cargo rustc)
if [ "${1:-}" = --sanitizers ]; then
  packages+=(clang-14 libclang-rt-14-dev llvm-14)
fi
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
# Any Node.js 18 or newer will do; install Debian's only where none is on PATH.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
