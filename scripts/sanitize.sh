#!/usr/bin/env bash
# The CPU-only suite under sanitizers, each in its own build tree (never ./build):
#
#   scripts/sanitize.sh asan [ctest args]   clang-14, ASan + UBSan (LeakSanitizer on), the libFuzzer
#                                           targets too; build-asan; every test (gpu ones skip)
#   scripts/sanitize.sh tsan [ctest args]   clang-14, TSan; build-tsan; the simulator, coordinator
#                                           and fixture tests, and the tests whose code runs on
#                                           several threads, `serve` among them (ctest -L
#                                           'sim|fixture|threads')
#   scripts/sanitize.sh build asan|tsan     configure and build only
#
# A finding fails the test that ran into it (halt_on_error; UBSan does not recover). Builds go
# through ccache; on two cores a cold sanitizer tree takes a while, so it is niced.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: scripts/sanitize.sh asan|tsan|build asan|tsan [ctest args]}
shift
build_only=0
if [ "$mode" = build ]; then
  build_only=1
  mode=${1:?usage: scripts/sanitize.sh build asan|tsan}
  shift
fi

export CCACHE_BASEDIR="$PWD"
export CXX=${CXX:-clang++-14}
# The C ABI's C caller (tests/capi) is compiled with the same flags: the same compiler for C.
export CC=${CC:-clang-14}
case "$mode" in
  asan)
    dir=build-asan
    cmake_args=(-DSTAGEHAND_SANITIZE=address,undefined -DSTAGEHAND_FUZZ=ON)
    targets=(all)
    labels=()
    ;;
  tsan)
    dir=build-tsan
    # -O1: at -O2 the TSan instrumentation leaves src/math's Montgomery assembly short of registers.
    cmake_args=(-DSTAGEHAND_SANITIZE=thread "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g -DNDEBUG")
    targets=(stagehand device_facts_test simulator_checks_test simulator_test groth16_kernels_test vram_budget_test
             policy_incidents_test policy_throughput_test job_failures_test run_config_errors_test backend_open_test porep_timing_jobs_test
             h200_model_test partition_program_test fault_adaptor_test faults_test sim_kernel_registry_test multi_gpu_test host_staging_test fixtures_test
             picture_test engine_proofs_test engine_config_test engine_runs_test engine_keys_test engine_queue_test
             proof_batch_test groth16_readers_test groth16_reader_limits_test groth16_proving_test groth16_checks_test
             groth16_staged_upload_test groth16_binfile_test stagehand_make_circuit bn254_kernels_test
             groth16_bn254_proving_test service_proof_wait_test engine_params_test extra_input_test kept_pinned_test)
    labels=(-L 'sim|fixture|threads')
    ;;
  *) echo "sanitize: unknown mode '$mode' (asan or tsan)" >&2; exit 2 ;;
esac

command -v "$CXX" >/dev/null || { echo "sanitize: $CXX not found (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 1; }
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTAGEHAND_CUDA=OFF "${cmake_args[@]}" >/dev/null
start=$(date +%s)
nice -n 10 cmake --build "$dir" -j "$(nproc)" --target "${targets[@]}"
echo "sanitize: $mode build took $(( $(date +%s) - start )) s"
[ "$build_only" = 1 ] && exit 0

# Symbolised stacks; a finding stops the process with an error; leaks are checked at exit.
symbolizer=$(command -v llvm-symbolizer-14 || command -v llvm-symbolizer || true)
if [ -n "$symbolizer" ]; then
  export ASAN_SYMBOLIZER_PATH="$symbolizer"
  export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1} external_symbolizer_path=$symbolizer"
else
  export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# STAGEHAND_SANITIZE_EXCLUDE: a ctest regular expression of tests to leave out (none by default).
exclude=${STAGEHAND_SANITIZE_EXCLUDE-}
exclude_args=()
[ -n "$exclude" ] && exclude_args=(-E "$exclude")
start=$(date +%s)
status=0
ctest --test-dir "$dir" "${exclude_args[@]}" --output-on-failure --no-tests=error -j "$(nproc)" "${labels[@]}" "$@" || status=$?
echo "sanitize: $mode tests took $(( $(date +%s) - start )) s"
exit $status
