#include "workloads/key_streaming.hpp"

#include "device/errors.hpp"
#include "util/assert.hpp"

#include <algorithm>
#include <utility>

namespace stagehand::groth16 {

std::string_view batch_set_name(std::size_t set) {
  return set == kMatrixChunks ? std::string_view{"the constraint matrix"} : std::string_view{kKeySetNames.at(set)};
}

Bytes StreamedBatch::bytes() const {
  Bytes end = 0;
  for (const auto& piece : pieces) end = std::max(end, piece.offset + piece.source.bytes);
  return end;
}

std::vector<StreamedBatch> streamed_batches(const KeyProgramShape& shape, std::span<const std::size_t> order,
                                            const std::function<HostRange(std::size_t set)>& set_host) {
  std::vector<StreamedBatch> batches;
  for (const auto set : order) {
    const auto& s = shape.sets.at(set);
    if (s.placement != SetPlacement::streamed || s.points == 0) continue;
    const HostRange host = set_host(set);
    STAGEHAND_ASSERT(host.bytes >= s.bytes(), "set {}: {} host bytes for {} points of {}", kKeySetNames[set],
                     host.bytes, s.points, s.point_bytes);
    for (std::uint64_t first = 0; first < s.points; first += s.points_per_batch) {
      const std::uint64_t count = std::min(s.points_per_batch, s.points - first);
      batches.push_back({set, first, count, {BatchPiece{0, host.sub(first * s.point_bytes, count * s.point_bytes)}}});
    }
  }
  return batches;
}

std::vector<StreamedBatch> matrix_batches(std::span<const MatrixChunk> chunks,
                                          const kernel::ConstraintMatrixLayout& whole, HostRange matrix) {
  STAGEHAND_ASSERT(chunks.empty() || matrix.bytes >= whole.total_bytes(),
                   "the constraint matrix: {} host bytes for a layout of {}", matrix.bytes, whole.total_bytes());
  std::vector<StreamedBatch> batches;
  for (std::size_t chunk = 0; chunk < chunks.size(); ++chunk) {
    StreamedBatch batch{kMatrixChunks, chunk, 0, {}};
    for (const auto& part : chunks[chunk].parts(whole)) {
      if (part.bytes > 0) batch.pieces.push_back({part.destination, matrix.sub(part.source, part.bytes)});
    }
    STAGEHAND_ASSERT(batch.bytes() <= chunks[chunk].layout().total_bytes(), "matrix chunk {}: parts of {} bytes in {}",
                     chunk, batch.bytes(), chunks[chunk].layout().total_bytes());
    batches.push_back(std::move(batch));
  }
  return batches;
}

KeyStream::KeyStream(Device& device, const std::vector<StreamedBatch>& batches) : device_(device), batches_(batches) {}

KeyStream::~KeyStream() {
  for (const auto& events : {filled_, free_}) {
    for (const auto event : events) {
      if (!event) continue;
      try {
        device_.destroy_event(event);
      } catch (const DeviceError&) {
        // A lost device has no handles left to destroy.
      }
    }
  }
}

asio::awaitable<void> KeyStream::start(JobContext& context, Bytes buffer_bytes) {
  STAGEHAND_ASSERT(next_upload_ == 0 && !buffers_[0], "a KeyStream starts once");
  if (batches_.empty()) co_return;
  for (const auto& batch : batches_) {
    STAGEHAND_ASSERT(batch.bytes() <= buffer_bytes, "a batch of {} of {} bytes, buffers of {}",
                     batch_set_name(batch.set), batch.bytes(), buffer_bytes);
  }
  buffer_bytes_ = buffer_bytes;
  for (std::size_t slot = 0; slot < 2; ++slot) {
    buffers_[slot] = co_await context.memory.allocate(buffer_bytes_, context.compute);
    filled_[slot] = device_.create_event();
    free_[slot] = device_.create_event();
  }
  while (next_upload_ < std::min<std::size_t>(2, batches_.size())) co_await enqueue_next(context);
}

// The next batch into its buffer on the upload stream, once the kernel that read the buffer last
// (recorded on the compute stream before this call) is done with it.
asio::awaitable<void> KeyStream::enqueue_next(JobContext& context) {
  const auto index = next_upload_++;
  const auto slot = index % 2;
  // Enqueued all at once, a large key's batches would block the executor's thread in the
  // enqueueing calls (the device's work queues are bounded) and with it the other workers' host
  // steps: batch `index` waits, without holding the thread, for the MSM of batch index - 3 (the
  // buffer's last reader, index - 2, is then on the device, and its wait stays there).
  if (index >= 3) co_await device_.wait_event(free_[(index - 3) % 2]);
  if (index >= 2) device_.stream_wait_event(context.upload, free_[slot]);
  for (const auto& piece : batches_[index].pieces) {
    co_await claimed_upload(device_, context.link, buffers_[slot] + piece.offset, piece.source, context.upload);
  }
  device_.record_event(filled_[slot], context.upload);
}

asio::awaitable<void> KeyStream::run_set(JobContext& context, std::size_t set, const LaunchBatch& launch) {
  while (next_compute_ < batches_.size() && batches_[next_compute_].set == set) {
    const auto index = next_compute_++;
    const auto slot = index % 2;
    STAGEHAND_ASSERT(buffers_[slot], "{}'s batches run before the stream started", batch_set_name(set));
    device_.stream_wait_event(context.compute, filled_[slot]);
    launch(buffers_[slot], batches_[index]);
    device_.record_event(free_[slot], context.compute);
    if (next_upload_ < batches_.size()) co_await enqueue_next(context);
  }
}

asio::awaitable<void> KeyStream::release(JobContext& context) {
  STAGEHAND_ASSERT(next_compute_ == batches_.size() || !buffers_[0], "{} of {} batches computed at release",
                   next_compute_, batches_.size());
  for (auto& buffer : buffers_) {
    if (buffer) co_await context.memory.release(std::exchange(buffer, DevicePointer{}), context.compute);
  }
}

}  // namespace stagehand::groth16
