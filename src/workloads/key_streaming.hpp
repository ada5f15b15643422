#pragma once
// A proof's streamed key sets (KeyPlacement's `streamed`) through two stream buffers of the
// proof's own memory: each batch goes up on the upload stream into one buffer while the kernel
// over the batch before it computes from the other on the compute stream. The batches are cut as
// shape_key_program cuts them (KeySetShape::points_per_batch), in the order the program's MSMs
// take the sets; each buffer is filled again once the kernel that read it is done (an event on
// the compute stream), and the host stays about two batches ahead of the device.
//
// Written once for every program over KeyPlacement's sets: the Groth16 program
// (workloads/groth16/), whose streamed a/b/c step sends the constraint matrix's chunks through
// the same buffers ahead of the sets (matrix_batches), and the assignments' program
// (workloads/assignment/).

#include "coordinator/job.hpp"
#include "groth16/constraint_matrix.hpp"
#include "workloads/groth16/key_placement.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace stagehand::groth16 {

// The set of the constraint matrix's batches: batch `first` of it is the matrix's chunk `first`.
inline constexpr std::size_t kMatrixChunks = kKeySetCount;
// A batch's set in messages: the key set's name, or "the constraint matrix".
std::string_view batch_set_name(std::size_t set);

// Part of a batch's bytes: `source` into its buffer at `offset`.
struct BatchPiece {
  Bytes offset = 0;
  HostRange source;
};

// Points [first, first + count) of `set`, one piece (those points' host bytes); or, with set
// kMatrixChunks, the matrix's chunk `first`, one piece for each non-empty part of it (count 0).
struct StreamedBatch {
  std::size_t set = 0;
  std::uint64_t first = 0;
  std::uint64_t count = 0;
  std::vector<BatchPiece> pieces;
  // The bytes of its buffer it fills (up to the end of its furthest piece).
  Bytes bytes() const;
};

// Every streamed set's batches, the sets in `order` (the program's order of MSMs), each cut as
// `shape` says; `set_host(set)` gives a set's points in the device layout on the host.
std::vector<StreamedBatch> streamed_batches(const KeyProgramShape& shape, std::span<const std::size_t> order,
                                            const std::function<HostRange(std::size_t set)>& set_host);

// The constraint matrix's `chunks` as batches of kMatrixChunks, in order: each chunk's parts
// from `matrix` (the whole matrix's bytes on the host, laid out as `whole`) into their places in
// the chunk's own layout.
std::vector<StreamedBatch> matrix_batches(std::span<const MatrixChunk> chunks,
                                          const kernel::ConstraintMatrixLayout& whole, HostRange matrix);

// One proof's pass over the batches. start() takes the two buffers and sends the first two
// batches; run_set() hands each batch of a set (or of the matrix) to the caller's launch once its
// buffer is filled (on the compute stream); release() gives the buffers back. Sets must be run in
// the batches' order. The events it makes go with it.
class KeyStream {
 public:
  using LaunchBatch = std::function<void(DevicePointer buffer, const StreamedBatch& batch)>;

  KeyStream(Device& device, const std::vector<StreamedBatch>& batches);
  ~KeyStream();
  KeyStream(const KeyStream&) = delete;
  KeyStream& operator=(const KeyStream&) = delete;

  // Each buffer holds `buffer_bytes` (at least the largest batch's bytes); nothing without batches.
  asio::awaitable<void> start(JobContext& context, Bytes buffer_bytes);
  // `launch` for each batch of `set`, in turn, the compute stream made to wait for its buffer; the
  // batch's buffer is free again for the batch after next once what `launch` enqueued is done.
  asio::awaitable<void> run_set(JobContext& context, std::size_t set, const LaunchBatch& launch);
  // The buffers back to the job's memory, in the compute stream's order (after the last kernel).
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
