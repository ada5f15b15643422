#pragma once
// The Device contract: one test per fact in docs/device-facts.md, written once against the Device
// interface. tests/sim runs them on SimDevice (H200 and RTX 5070 Ti models); the gpu suite runs
// them on CudaDevice where a GPU is present. Each returns after checking with Boost.Test macros.

#include "device/busy_wait.hpp"
#include "device/device.hpp"

#include "device/asio.hpp"

namespace stagehand::contract {

// What differs between the devices the facts were read on.
struct DeviceExpectations {
  // A failing cudaMalloc releases idle pool memory and retries (the H200's driver does).
  bool malloc_reclaims_idle_pool = true;
  // Relative tolerance, in percent, for timings and rates (the facts are single readings).
  double tolerance_percent = 10.0;
  // For work the host does itself (pinning and unpinning pages, mapping pool memory, staging
  // pageable copies), which varies with the host's load far more than the device does: over
  // three runs on the H200 machine, 2 GiB unpinned in 32.8 to 38.7 ms, pinned in 79 to 115 ms,
  // copied from pageable memory at 6.0 to 8.5 GB/s; a 1 GiB pool growth took 11.6 ms.
  double host_tolerance_percent = 10.0;
  // The simulator's timing mode needs no bytes behind host ranges; a real device does.
  bool virtual_host_memory = false;
};

using stagehand::busy_wait;
using stagehand::faulting_busy_wait;

// ---- Transfers over PCIe ----
asio::awaitable<void> pinned_copy_to_device_runs_at_55_gbps(Device& device, DeviceExpectations expect);
asio::awaitable<void> pinned_copy_to_host_runs_at_55_gbps(Device& device, DeviceExpectations expect);
asio::awaitable<void> both_directions_at_once_reach_100_gbps(Device& device, DeviceExpectations expect);
asio::awaitable<void> pageable_copy_is_seven_times_slower_and_blocks_the_host(Device& device,
                                                                              DeviceExpectations expect);
asio::awaitable<void> registered_memory_copies_at_the_pinned_rate(Device& device, DeviceExpectations expect);
asio::awaitable<void> registering_costs_41_ms_per_gib(Device& device, DeviceExpectations expect);
asio::awaitable<void> unregistering_costs_17_ms_per_gib(Device& device, DeviceExpectations expect);
asio::awaitable<void> the_device_has_three_copy_engines(Device& device, DeviceExpectations expect);
asio::awaitable<void> pinned_upload_overlaps_a_kernel_without_slowing_it(Device& device, DeviceExpectations expect);

// ---- Which calls wait for the device (a 300 ms kernel on another stream) ----
asio::awaitable<void> free_waits_for_a_running_kernel(Device& device, DeviceExpectations expect);
asio::awaitable<void> malloc_memory_info_and_trim_do_not_wait(Device& device, DeviceExpectations expect);
asio::awaitable<void> registering_does_not_wait_for_a_kernel(Device& device, DeviceExpectations expect);
asio::awaitable<void> pool_allocation_costs_milliseconds_when_growing(Device& device, DeviceExpectations expect);

// ---- The stream-ordered pool against plain cudaMalloc, on a card held to 16 GiB ----
asio::awaitable<void> default_release_threshold_is_zero(Device& device, DeviceExpectations expect);
asio::awaitable<void> pending_free_blocks_malloc_until_the_stream_syncs(Device& device, DeviceExpectations expect);
asio::awaitable<void> pool_allocation_reuses_a_pending_free_from_another_stream(Device& device,
                                                                                DeviceExpectations expect);
asio::awaitable<void> high_threshold_hides_free_memory_from_memory_info(Device& device, DeviceExpectations expect);
asio::awaitable<void> trim_releases_idle_pool_memory_at_once(Device& device, DeviceExpectations expect);

// ---- The interface itself ----
// host_callback_reached tells the time the stream reached the callback: after the kernel before
// it ended, and even while the executor's thread is busy, before that thread runs the callback
// (pre-staging times its chunks by it). The second holds the thread for 200 ms of real time:
// for real devices only.
asio::awaitable<void> a_callback_is_told_when_its_stream_reached_it(Device& device, DeviceExpectations expect);
asio::awaitable<void> a_callback_is_told_when_its_stream_reached_it_while_the_thread_is_busy(Device& device,
                                                                                             DeviceExpectations expect);

// ---- Failures ----
// A kernel that faults loses the device, as it loses a CUDA context for the rest of the process: a
// wait in flight on another stream ends with device_lost (it does not hang), and every later
// wait, synchronise, event query, allocation and launch, on every stream, throws device_lost
// again; nothing clears it. A CUDA process cannot use the GPU after this one: the gpu suite runs
// it in a process of its own.
asio::awaitable<void> a_failed_kernel_loses_the_device_for_every_later_call(Device& device, DeviceExpectations expect);

}  // namespace stagehand::contract
