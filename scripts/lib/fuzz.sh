# Shared by scripts/fuzz.sh and scripts/fuzz-campaign.sh. Source it: . scripts/lib/fuzz.sh
#
# fuzz_targets: every libFuzzer target (tests/fuzz/TARGET_fuzz.cpp, tests/fuzz/CMakeLists.txt).
fuzz_targets=(zkey wtns r1cs params run_config fixture)

# fuzz_check_target NAME: exits 2 with the list where NAME is not a target.
fuzz_check_target() {
  [[ " ${fuzz_targets[*]} " == *" $1 "* ]] || { echo "fuzz: unknown target '$1' (${fuzz_targets[*]})" >&2; exit 2; }
}

# fuzz_build TARGET...: builds fuzz_TARGET in build-asan (clang-14, ASan + UBSan, libFuzzer),
# niced so that a campaign in the background leaves the machine usable.
fuzz_build() {
  export CCACHE_BASEDIR="$PWD"
  export CXX=${CXX:-clang++-14}
  # The same compiler for C (the C ABI's example caller), as scripts/sanitize.sh sets it: the tree is shared.
  export CC=${CC:-clang-14}
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTAGEHAND_CUDA=OFF \
        -DSTAGEHAND_SANITIZE=address,undefined -DSTAGEHAND_FUZZ=ON >/dev/null
  nice -n 10 cmake --build build-asan --target "${@/#/fuzz_}" >/dev/null
}

# fuzz_sanitizer_options: what a finding does (stop, with a stack).
fuzz_sanitizer_options() {
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
}

# The options every run shares: a 10 s input is a hang, 2 GiB a blow-up; inputs up to 64 KiB (the
# readers' structure is in their headers; larger inputs only slow the search).
fuzz_common_options=(-timeout=10 -rss_limit_mb=2048 -max_len=65536)
