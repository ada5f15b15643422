#pragma once
// A proof's streamed key sets (KeyPlacement's `streamed`) through two stream buffers of the
// proof's own memory: each batch goes up on the upload stream into one buffer while the MSM of
// the batch before it computes from the other on the compute stream. The batches are cut as
// shape_key_program cuts them (KeySetShape::points_per_batch), in the order the program's MSMs
// take the sets; each buffer is filled again once the MSM that read it is done (an event on the
// compute stream), and the host stays about two batches ahead of the device.
//
// Written for any program over KeyPlacement's sets: the assignments' program streams through it
// (workloads/assignment/). The Groth16 program keeps its own copy of the same loop
// (Groth16Program::enqueue_batch and run_set_msms, which also interleave the constraint matrix's
// chunks) until it moves onto this one.

#include "coordinator/job.hpp"
#include "workloads/groth16/key_placement.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace stagehand::groth16 {

// Points [first, first + count) of `set`, uploaded from `source` (those points' host bytes).
struct StreamedBatch {
  std::size_t set = 0;
  std::uint64_t first = 0;
  std::uint64_t count = 0;
  HostRange source;
};

// Every streamed set's batches, the sets in `order` (the program's order of MSMs), each cut as
// `shape` says; `set_host(set)` gives a set's points in the device layout on the host.
std::vector<StreamedBatch> streamed_batches(const KeyProgramShape& shape, std::span<const std::size_t> order,
                                            const std::function<HostRange(std::size_t set)>& set_host);

// One proof's pass over the batches. start() takes the two buffers and sends the first two
// batches; run_set() hands each batch of a set to the caller's launch once its buffer is filled
// (on the compute stream); release() gives the buffers back. Sets must be run in the batches'
// order. The events it makes go with it.
class KeyStream {
 public:
  using LaunchBatch = std::function<void(DevicePointer buffer, const StreamedBatch& batch)>;

  KeyStream(Device& device, const std::vector<StreamedBatch>& batches);
  ~KeyStream();
  KeyStream(const KeyStream&) = delete;
  KeyStream& operator=(const KeyStream&) = delete;

  // Each buffer holds `buffer_bytes` (at least the largest batch's bytes); nothing without batches.
  asio::awaitable<void> start(JobContext& context, Bytes buffer_bytes);
  // `launch` for each batch of `set`, in turn, the compute stream made to wait for its buffer.
  asio::awaitable<void> run_set(JobContext& context, std::size_t set, const LaunchBatch& launch);
  // The buffers back to the job's memory, in the compute stream's order (after the last MSM).
  asio::awaitable<void> release(JobContext& context);

 private:
  asio::awaitable<void> enqueue_next(JobContext& context);

  Device& device_;
  const std::vector<StreamedBatch>& batches_;
  Bytes buffer_bytes_ = 0;
  std::array<DevicePointer, 2> buffers_{};
  std::array<EventHandle, 2> filled_{};
  std::array<EventHandle, 2> free_{};
  std::size_t next_upload_ = 0;   // the next batch to enqueue on the upload stream
  std::size_t next_compute_ = 0;  // the next batch an MSM takes
};

}  // namespace stagehand::groth16
