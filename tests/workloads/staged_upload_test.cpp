// upload_through_pinned (workloads/groth16/staged_upload.hpp) on the functional simulator: every
// byte lands where it was sent, through two pinned buffers made and freed inside, whatever the
// sizes against the chunk; a failed pinning fails the call and leaves nothing behind.
#define BOOST_TEST_MODULE staged_upload
#include <boost/test/unit_test.hpp>

#include "support/sim_harness.hpp"
#include "workloads/groth16/staged_upload.hpp"

#include <cstdint>
#include <vector>

using namespace stagehand;
using stagehand::testing::SimHarness;

namespace {

std::vector<std::uint8_t> pattern(std::size_t bytes, std::uint8_t seed) {
  std::vector<std::uint8_t> out(bytes);
  for (std::size_t i = 0; i < bytes; ++i) out[i] = static_cast<std::uint8_t>(seed + 31 * i + (i >> 8));
  return out;
}

HostRange range_of(std::vector<std::uint8_t>& bytes) {
  return HostRange{reinterpret_cast<std::uintptr_t>(bytes.data()), bytes.size()};
}

sim::SimOptions functional() {
  sim::SimOptions options;
  options.functional = true;
  return options;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_byte_lands_where_it_was_sent) {
  SimHarness harness("h200-measured", functional());
  HostWork host_work(0);
  // Sizes below, at and across the chunk (1000 bytes), and an empty one.
  std::vector<std::vector<std::uint8_t>> sources{pattern(1000, 1), pattern(2500, 2), pattern(0, 3), pattern(999, 4),
                                                 pattern(7, 5)};
  std::vector<std::vector<std::uint8_t>> landed(sources.size());
  harness.run([&](SimHarness& h) -> asio::awaitable<void> {
    auto& device = h.device;
    std::vector<groth16::PageableUpload> uploads;
    for (auto& source : sources)
      uploads.push_back({co_await device.allocate(std::max<Bytes>(source.size(), 1)), range_of(source)});
    co_await groth16::upload_through_pinned(device, host_work, uploads, 1000);
    auto stream = device.create_stream();
    for (std::size_t i = 0; i < sources.size(); ++i) {
      landed[i].resize(sources[i].size());
      if (!landed[i].empty()) co_await device.copy_to_host(range_of(landed[i]), uploads[i].target, stream);
    }
    co_await device.synchronize_stream(stream);
    device.destroy_stream(stream);
    for (const auto& upload : uploads) co_await device.free(upload.target);
  });
  for (std::size_t i = 0; i < sources.size(); ++i) BOOST_TEST(landed[i] == sources[i], "upload " << i);
  BOOST_TEST(harness.device.counters().pinned_host_allocations == 2u);
  BOOST_TEST(harness.device.check().clean(), harness.device.check().describe());
}

BOOST_AUTO_TEST_CASE(a_failed_pinning_fails_the_upload_and_frees_the_other_buffer) {
  FaultPlan faults;
  faults.fail_host_pin_number = 2;  // the second staging buffer
  SimHarness harness("h200-measured", functional(), faults);
  HostWork host_work(0);
  auto source = pattern(3000, 9);
  bool failed = false;
  harness.run([&](SimHarness& h) -> asio::awaitable<void> {
    auto& device = h.device;
    const auto target = co_await device.allocate(source.size());
    const std::vector<groth16::PageableUpload> uploads{groth16::PageableUpload{target, range_of(source)}};
    try {
      co_await groth16::upload_through_pinned(device, host_work, uploads, 1000);
    } catch (const DeviceError& error) {
      failed = error.errc() == DeviceErrc::host_pin_failed;
    }
    co_await device.free(target);
  });
  BOOST_TEST(failed);
  BOOST_TEST(harness.device.counters().pinned_host_allocations == 1u);
  BOOST_TEST(harness.device.check().clean(), harness.device.check().describe());
}
