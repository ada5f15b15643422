#pragma once
// The GPU program of one PoRep-shaped partition, written once against the Device interface and
// run unchanged by every policy on every backend. It follows the production prover: inverse NTT
// then coset NTT of a, b and c; H = (a*b - c)/Z on the coset; inverse coset NTT; b and c freed
// early; the H MSM over points streamed in batches; batch additions over L, A, B_G1, B_G2; tail
// MSMs; results to the host.

#include "coordinator/job.hpp"
#include "workloads/porep/partition_shape.hpp"

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stagehand {

// The proving key's points in pinned host memory, shared by all partitions on a device.
struct ProvingKeyHost {
  HostRange h, l, a, b_g1, b_g2, tail;
};

// How the sets after the H MSM share the stream buffers' halves. in_order: one set after another
// (the program measured on the H200, bench/RESULTS.md). mixed: every half holds each set left in
// proportion to what it has left, so that a set whose kernels are faster than its points cross
// PCIe (the tail MSM) never has the halves to itself.
enum class StreamOrder { in_order, mixed };

struct ProgramSettings {
  MsmCollect msm_collect = MsmCollect::deferred;
  StreamOrder stream_order = StreamOrder::in_order;
  // Sets fetched ahead, during the H MSM, into memory free at the time (the most PCIe-bound
  // first); 0: none, which leaves that memory to the next job's pre-staged inputs.
  int fetch_ahead_sets = 2;
  LinkClaimHooks link;
};

class PartitionProgram {
 public:
  // The worker owns the streams: it pre-stages on `upload` before the program exists.
  PartitionProgram(Device& device, const PartitionShape& shape, const ProvingKeyHost& key, ProgramSettings settings,
                   StreamHandle compute, StreamHandle upload);
  ~PartitionProgram();
  PartitionProgram(const PartitionProgram&) = delete;
  PartitionProgram& operator=(const PartitionProgram&) = delete;

  // Runs the program on the compute stream; `results` (pinned, 2 x bucket results) receives the
  // MSM buckets. Returns when the results are on the host.
  asio::awaitable<JobTimes> run(JobInputs inputs, JobMemory& memory, const std::vector<HostRange>& results);

  StreamHandle compute_stream() const { return compute_; }

  // The MSM scratch `device` needs for one partition of `shape` (0 on the simulator), which a job
  // holds from the H MSM on: its memory plan adds it after b and c are freed.
  static Bytes scratch_bytes(Device& device, const PartitionShape& shape);
  // The NTTs' twiddle buffer, held for the whole program: the shape's 16 bytes per element, or
  // more where the device's kernels ask for more (the CUDA domain, with an exact twiddle per
  // element, takes about 32 bytes per element up to 2^22 elements).
  static Bytes twiddle_bytes(Device& device, const PartitionShape& shape);
  StreamHandle upload_stream() const { return upload_; }

 private:
  struct StreamedSet {
    const char* name;    // the proving key's set: H, L, A, B_G1, B_G2, tail
    const char* kernel;  // kernel_abi.hpp
    HostRange host;
    std::uint64_t items;
    Bytes item_bytes;
    bool collect;                 // an MSM whose bucket results the host folds (the H MSM)
    Bytes sum_offset;             // where in buckets[0] the set's running sum lives (not the H MSM)
    DevicePointer resident = {};  // where the set was fetched to in advance, if it was
  };
  struct Segment {
    std::size_t set;
    std::uint64_t first_item;  // in the set
    std::uint64_t items;
    Bytes offset;  // in the buffer half
    Bytes bytes;
    bool ends_set;
  };
  class PointStream;
  asio::awaitable<DevicePointer> to_h_coefficients(const JobInputs& inputs, JobMemory& memory,
                                                   std::shared_ptr<Nanoseconds> upload_wait_ns);
  asio::awaitable<DevicePointer> allocate_msm_scratch(JobMemory& memory);
  asio::awaitable<std::vector<DevicePointer>> fetch_ahead(std::vector<StreamedSet>& sets, JobMemory& memory,
                                                          JobTimes& times);
  std::vector<StreamedSet> streamed_sets() const;
  asio::awaitable<void> stream_points(const std::vector<StreamedSet>& sets, DevicePointer scalars, JobMemory& memory,
                                      const std::vector<DevicePointer>& buffers,
                                      const std::vector<DevicePointer>& buckets, const std::vector<HostRange>& results);
  std::vector<Segment> resident_segments(const std::vector<StreamedSet>& sets, std::size_t index) const;
  // What the next half of `buffer_bytes` holds: (set, items) in the order to place them, given
  // each set's next item and whether its last items were placed, and which resident sets' kernels
  // are queued (in order, the half ends at a resident set not yet reached).
  std::vector<std::pair<std::size_t, std::uint64_t>> plan_half(const std::vector<StreamedSet>& sets,
                                                               const std::vector<std::uint64_t>& next_item,
                                                               const std::vector<bool>& placed,
                                                               const std::vector<bool>& queued,
                                                               Bytes buffer_bytes) const;
  void launch_segment(const StreamedSet& set, const Segment& segment, DevicePointer buffer, DevicePointer scalars,
                      DevicePointer buckets);
  void reduce_buckets(const std::vector<DevicePointer>& buckets);
  static bool is_tail(const StreamedSet& set);
  std::vector<std::size_t> prefetch_order(const std::vector<StreamedSet>& sets) const;
  void finish_set(const StreamedSet& set, DevicePointer buckets);
  // A host-to-device copy on the upload stream, told to settings_.link.
  asio::awaitable<void> upload(DevicePointer destination, HostRange source);
  // Tells settings_.link.phase when the compute stream gets here.
  void pcie_bound_phase(bool entering);
  void launch(const KernelLaunch& launch);
  static std::uint64_t tail_items_per_kernel(const PartitionShape& shape);

  Device& device_;
  PartitionShape shape_;
  ProvingKeyHost key_;
  ProgramSettings settings_;
  StreamHandle compute_;
  StreamHandle upload_;
  std::array<EventHandle, 2> buffer_free_;
  std::array<EventHandle, 2> buffer_filled_;
  std::array<EventHandle, 2> results_ready_;
  EventHandle prefetched_;
  EventHandle done_;
  std::optional<BufferUse> msm_scratch_;   // the H MSM's buckets between batches, where the device needs them
  std::optional<BufferUse> tail_scratch_;  // the tail MSMs' working memory, where the device needs it
};

}  // namespace stagehand
