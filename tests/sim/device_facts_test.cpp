// The Device contract (docs/device-facts.md) on SimDevice: the H200 model must reproduce every fact
// measured on the H200, the RTX 5070 Ti model the pool behaviour of the incident's card. After
// each fact the checker must find nothing leaked and no unsynchronised read.
#define BOOST_TEST_MODULE device_facts
#include <boost/test/unit_test.hpp>

#include "contract/device_contract.hpp"
#include "support/sim_harness.hpp"

using namespace stagehand;
using Fact = boost::asio::awaitable<void> (*)(Device&, contract::DeviceExpectations);

namespace {
void run_fact(const std::string& model, Fact fact) {
  testing::SimHarness harness(model);
  contract::DeviceExpectations expect;
  expect.malloc_reclaims_idle_pool = harness.device.model().malloc_reclaims_idle_pool;
  expect.virtual_host_memory = true;
  harness.run([&](testing::SimHarness& h) { return fact(h.device, expect); });
  auto report = harness.device.check();
  BOOST_TEST(report.clean(), report.describe());
}
}  // namespace

#define FACT(model, name) \
  BOOST_AUTO_TEST_CASE(name##_on_##model) { run_fact(model##_file, &contract::name); }

namespace {
const std::string h200_file = "h200";
const std::string rtx5070ti_file = "rtx5070ti-16g";
}  // namespace

BOOST_AUTO_TEST_SUITE(transfers)
FACT(h200, pinned_copy_to_device_runs_at_55_gbps)
FACT(h200, pinned_copy_to_host_runs_at_55_gbps)
FACT(h200, both_directions_at_once_reach_100_gbps)
FACT(h200, pageable_copy_is_seven_times_slower_and_blocks_the_host)
FACT(h200, registered_memory_copies_at_the_pinned_rate)
FACT(h200, registering_costs_41_ms_per_gib)
FACT(h200, unregistering_costs_17_ms_per_gib)
FACT(h200, the_device_has_three_copy_engines)
FACT(h200, pinned_upload_overlaps_a_kernel_without_slowing_it)
BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(waiting_calls)
FACT(h200, free_waits_for_a_running_kernel)
FACT(h200, malloc_memory_info_and_trim_do_not_wait)
FACT(h200, registering_does_not_wait_for_a_kernel)
FACT(h200, pool_allocation_costs_milliseconds_when_growing)
BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(pool)
FACT(h200, default_release_threshold_is_zero)
FACT(h200, pending_free_blocks_malloc_until_the_stream_syncs)
FACT(h200, pool_allocation_reuses_a_pending_free_from_another_stream)
FACT(h200, high_threshold_hides_free_memory_from_memory_info)
FACT(h200, trim_releases_idle_pool_memory_at_once)
// The incident's 16 GiB card: the same pending-free block, and no reclaim by cudaMalloc.
FACT(rtx5070ti, pending_free_blocks_malloc_until_the_stream_syncs)
FACT(rtx5070ti, pool_allocation_reuses_a_pending_free_from_another_stream)
FACT(rtx5070ti, high_threshold_hides_free_memory_from_memory_info)
BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(interface)
FACT(h200, a_callback_is_told_when_its_stream_reached_it)
BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(failures)
FACT(h200, a_failed_kernel_loses_the_device_for_every_later_call)
BOOST_AUTO_TEST_SUITE_END()
