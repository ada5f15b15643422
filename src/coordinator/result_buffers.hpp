#pragma once
// ResultBuffers: the pinned host buffers a GPU's workers' programs bring their results back into,
// two a worker, each of at least the job's plan's result_bytes. Beside the lane's staging pool,
// and kept between runs as it is: where the caller keeps pinned memory between its runs
// (CoordinatorHooks::kept_pinned, the engine), a run's workers take the buffers an earlier run on
// the GPU left, grow them only where the run's plan needs more, and give them back at its end, so
// that a run like the last one pins nothing, on an idle GPU as on a busy one (pinned allocation
// holds the GPU's other calls on real hardware). Otherwise each worker makes its own and frees
// them at its end.

#include "device/device.hpp"

#include <cstddef>
#include <vector>

namespace stagehand {

class ResultBuffers {
 public:
  static constexpr std::size_t kPerWorker = 2;

  explicit ResultBuffers(Device& device) : device_(device) {}

  // From this run on, the buffers workers give back are kept for the caller (take_kept) instead
  // of freed; `buffers` (pinned on this device by an earlier run) are the first workers take.
  void adopt(std::vector<HostRange> buffers);
  // A worker's two: kept ones while there are, else empty ranges that fit() makes.
  std::vector<HostRange> take();
  // Each of a worker's buffers smaller than `bytes` freed and made again of `bytes`.
  asio::awaitable<void> fit(std::vector<HostRange>& buffers, Bytes bytes);
  // A worker's at its end: kept, or freed (a lost device's errors dropped: it has nothing left).
  asio::awaitable<void> give_back(std::vector<HostRange> buffers);
  // At the run's end, once every worker has given its back: the kept buffers, for the caller.
  std::vector<HostRange> take_kept();
  // At the run's end: frees what was kept and not taken (a lost GPU's, whose caller keeps none).
  asio::awaitable<void> shutdown();

 private:
  asio::awaitable<void> free_quietly(HostRange buffer);

  Device& device_;
  bool keeping_ = false;
  std::vector<HostRange> idle_;   // kept, not with a worker
  std::size_t with_workers_ = 0;  // pinned buffers workers hold
};

}  // namespace stagehand
