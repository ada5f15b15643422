#pragma once
// The GPU program of one PoRep-shaped partition, written once against the Device interface and
// run unchanged by every policy on every backend. It follows the production prover: inverse NTT
// then coset NTT of a, b and c; H = (a*b - c)/Z on the coset; inverse coset NTT; b and c freed
// early; the H MSM over points streamed in batches; batch additions over L, A, B_G1, B_G2; tail
// MSMs; results to the host.

#include "coordinator/partition.hpp"
#include "device/device.hpp"

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace stagehand {

// How the program gets and returns device memory: the policy decides (the budget and the pool,
// or the historical mix of cudaMalloc and the pool).
class ProgramMemory {
 public:
  virtual ~ProgramMemory() = default;
  // Working memory on the compute stream.
  virtual asio::awaitable<DevicePointer> allocate(Bytes bytes, StreamHandle stream) = 0;
  virtual asio::awaitable<void> release(DevicePointer pointer, StreamHandle stream) = 0;
  // The inputs, when the program is done with them: b and c after H is formed, a after the H MSM.
  virtual asio::awaitable<void> release_b_and_c(StreamHandle stream) = 0;
  virtual asio::awaitable<void> release_a(StreamHandle stream) = 0;
  // Memory beyond the job's plan, only if it is free right now (never waits); none by default.
  // The program uses it to fetch PCIe-bound data early, while the link is idle.
  virtual asio::awaitable<std::optional<DevicePointer>> try_allocate_spare(Bytes bytes, StreamHandle stream) {
    co_return std::nullopt;
  }
};

// a, b and c on the device, each with the event that says its upload is done (none: already
// ordered before the compute stream). The NTTs of a start as soon as a is there.
struct PartitionInputs {
  DevicePointer a;
  DevicePointer b;
  DevicePointer c;
  EventHandle a_uploaded;
  EventHandle b_uploaded;
  EventHandle c_uploaded;
};

// The proving key's points in pinned host memory, shared by all partitions on a device.
struct ProvingKeyHost {
  HostRange h, l, a, b_g1, b_g2, tail;
};

// How a program tells its worker's GPU when it uses the host-to-device link, so that pre-staging
// of the next job keeps off it meanwhile (a copy engine serves host-to-device copies in turn: a
// chunk queued behind one of the program's uploads waits for all of it).
struct LinkClaimHooks {
  // The PCIe-bound phases (the batch additions and tail MSMs stream 11.6 GiB at 2^26 for about a
  // quarter second of kernels), told from the compute stream: true on entering, false on leaving.
  std::function<void(bool)> phase;
  // An upload enqueued on the upload stream starts when `started` completes: the event is the
  // hook's from here on, and is queried on the device, without a host round trip, so that no
  // chunk is issued in the time a callback would take to say the upload began.
  std::function<void(EventHandle started)> upload_enqueued;
  // That upload has ended, told from the upload stream.
  std::function<void(EventHandle started)> upload_done;
};

// A host-to-device copy on `stream`, told to `link` (where it has the upload hooks) when it
// starts and when it ends, so that pre-staging keeps off the link meanwhile.
asio::awaitable<void> claimed_upload(Device& device, LinkClaimHooks link, DevicePointer destination,
                                     HostRange source, StreamHandle stream);

struct ProgramSettings {
  MsmCollect msm_collect = MsmCollect::deferred;
  LinkClaimHooks link;
};

// What the program measured.
struct ProgramTimes {
  // From the program's start until the compute stream could begin (inputs uploaded).
  Nanoseconds waited_for_inputs_ns = 0;
  // The streamed sets fetched during the H MSM, by name joined with '+' ("L+A"; gpu_program.cpp);
  // empty if none.
  std::string fetched_ahead;
};

// The ntt kernel's kind argument (NttKind's order in cuda/kernels/ntt.hpp).
inline constexpr std::uint64_t kNttForward = 0, kNttInverse = 1, kNttCosetForward = 2, kNttCosetInverse = 3;

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
  asio::awaitable<ProgramTimes> run(PartitionInputs inputs, ProgramMemory& memory, const std::vector<HostRange>& results);

  StreamHandle compute_stream() const { return compute_; }

  // The MSM scratch `device` needs for one partition of `shape` (0 on the simulator), which a job
  // holds from the H MSM on: its memory plan adds it after b and c are freed.
  static Bytes scratch_bytes(Device& device, const PartitionShape& shape);
  // The NTTs' twiddle buffer, held for the whole program: the shape's 16 bytes per element, or
  // more where the device's kernels ask for more (the CUDA domain's fixed tables, 41-45 KiB,
  // exceed it below 2^12 elements).
  static Bytes twiddle_bytes(Device& device, const PartitionShape& shape);
  StreamHandle upload_stream() const { return upload_; }

 private:
  struct StreamedSet {
    const char* name;  // the proving key's set: H, L, A, B_G1, B_G2, tail
    const char* kernel;
    HostRange host;
    std::uint64_t items;
    Bytes item_bytes;
    bool collect;  // an MSM whose bucket results the host folds (the H MSM)
    Bytes sum_offset;  // where in buckets[0] the set's running sum lives (not the H MSM)
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
  std::vector<StreamedSet> streamed_sets() const;
  asio::awaitable<void> stream_points(const std::vector<StreamedSet>& sets, DevicePointer scalars, ProgramMemory& memory,
                                      const std::vector<DevicePointer>& buffers, const std::vector<DevicePointer>& buckets,
                                      const std::vector<HostRange>& results);
  std::vector<Segment> resident_segments(const std::vector<StreamedSet>& sets, std::size_t index) const;
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
  void kernel(const char* name, std::uint64_t work_units, std::vector<std::uint64_t> arguments, std::vector<BufferUse> reads,
              std::vector<BufferUse> writes);
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
  BufferUse msm_scratch_{};   // the H MSM's buckets between batches, where the device needs them
  BufferUse tail_scratch_{};  // the tail MSMs' working memory
};

}  // namespace stagehand
