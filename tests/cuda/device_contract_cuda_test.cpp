// The Device contract (docs/device-facts.md) on CudaDevice: the same tests the simulator passes, on a
// real GPU. The rest of the card is held by a ballast allocation where a fact needs a 16 GiB
// card, as in the measurement. Where no GPU is present this reports itself skipped (exit 77).
#define BOOST_TEST_NO_MAIN
#define BOOST_TEST_ALTERNATIVE_INIT_API
#include <boost/test/unit_test.hpp>

#include "contract/device_contract.hpp"
#include "cuda_device.hpp"

#include <cstdio>

using namespace stagehand;
using Fact = asio::awaitable<void> (*)(Device&, contract::DeviceExpectations);

namespace {
void run_fact(Fact fact) {
  asio::io_context io;
  cuda::CudaDevice device(0, io.get_executor());
  contract::DeviceExpectations expect;
  expect.malloc_reclaims_idle_pool = true;  // the H200's driver (docs/device-facts.md)
  expect.tolerance_percent = 15.0;          // single readings on a shared machine
  expect.host_tolerance_percent = 45.0;     // host-side work: the host's load decides
  std::exception_ptr failure;
  bool finished = false;
  asio::co_spawn(io, fact(device, expect), [&](std::exception_ptr error) {
    failure = error;
    finished = true;
  });
  io.run();
  if (failure) std::rethrow_exception(failure);
  BOOST_REQUIRE(finished);
}
}  // namespace

#define FACT(name) \
  BOOST_AUTO_TEST_CASE(name) { run_fact(&contract::name); }

FACT(pinned_copy_to_device_runs_at_55_gbps)
FACT(pinned_copy_to_host_runs_at_55_gbps)
FACT(both_directions_at_once_reach_100_gbps)
FACT(pageable_copy_is_seven_times_slower_and_blocks_the_host)
FACT(registered_memory_copies_at_the_pinned_rate)
FACT(registering_costs_41_ms_per_gib)
FACT(unregistering_costs_17_ms_per_gib)
FACT(the_device_has_three_copy_engines)
FACT(pinned_upload_overlaps_a_kernel_without_slowing_it)
FACT(free_waits_for_a_running_kernel)
FACT(malloc_memory_info_and_trim_do_not_wait)
FACT(registering_does_not_wait_for_a_kernel)
FACT(pool_allocation_costs_milliseconds_when_growing)
FACT(default_release_threshold_is_zero)
FACT(pending_free_blocks_malloc_until_the_stream_syncs)
FACT(pool_allocation_reuses_a_pending_free_from_another_stream)
FACT(high_threshold_hides_free_memory_from_memory_info)
FACT(trim_releases_idle_pool_memory_at_once)
FACT(a_callback_is_told_when_its_stream_reached_it)
FACT(a_callback_is_told_when_its_stream_reached_it_while_the_thread_is_busy)

// The context it loses stays lost until the process ends, so this fact is left out of the run of
// all the others and has a ctest of its own (tests/cuda/CMakeLists.txt) that names it.
BOOST_AUTO_TEST_CASE(a_failed_kernel_loses_the_device_for_every_later_call, *boost::unit_test::disabled()) {
  run_fact(&contract::a_failed_kernel_loses_the_device_for_every_later_call);
}

bool init_unit_test() {
  boost::unit_test::framework::master_test_suite().p_name.value = "cuda_device_contract";
  return true;
}

int main(int argc, char* argv[]) {
  if (cuda::device_count() == 0) {
    std::puts("cuda_device_contract: no CUDA device present: skipped");
    return 77;
  }
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
