// The partition program's kernel launches carry what the real kernels need
// (cuda/kernels/partition_launchers.hpp, batch_addition.hpp), checked without a GPU: the program
// runs through the coordinator on the simulator's functional mode with host functions standing in
// for the kernels, each reading its launch as the CUDA launchers do (device/partition_launches.hpp)
// and checking its arguments and buffers; PoRepWorkload's real-data
// path (a key filled once per device, a, b and c copied from a template) reaches the kernels.
#define BOOST_TEST_MODULE partition_program
#include <boost/test/unit_test.hpp>

#include "coordinator/coordinator.hpp"
#include "device/kernel_abi.hpp"
#include "device/partition_launches.hpp"
#include "support/functional_run.hpp"
#include "workloads/porep/porep_workload.hpp"
#include "sim/device_model.hpp"
#include "sim/run.hpp"
#include "sim/sim_device.hpp"
#include "sim/sim_system.hpp"

#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace stagehand;

namespace {

// What the stand-in kernels saw.
struct Seen {
  std::map<std::string, int> launches;
  std::vector<std::string> problems;
  int inverse_ntts_on_the_template = 0;
  std::map<std::uint64_t, int> sum_starts;              // by sum slot (batch additions, tail MSM): sums begun
  std::uint64_t smallest_twiddles = ~std::uint64_t{0};  // bytes of the twiddle buffers kernels got
  std::uint64_t tail_items = 0;                         // accumulated since the tail MSM last began
  std::uint64_t h_scratch = 0;                          // the H MSM's scratch, which the tail MSM takes over
  bool h_reduced = false;                               // msm_reduce consumed the H MSM's buckets
  int key_fills = 0;

  void expect(bool ok, const std::string& what) {
    if (!ok) problems.push_back(what);
  }
};

// The launch as its typed value reads it (device/partition_launches.hpp), as the CUDA launchers
// read it; nothing, with the refusal noted, where it cannot be read.
template <class Typed>
std::optional<Typed> decoded(Seen& seen, sim::KernelContext& context) {
  try {
    return Typed::from_launch(context.launch());
  } catch (const std::invalid_argument& error) {
    seen.expect(false, error.what());
    return std::nullopt;
  }
}

// The NTT phase: twiddles, the NTTs of a, b and c, and H on the coset.
void register_ntt_checks(sim::SimSystem& system, const PartitionShape& shape, const std::vector<std::byte>& input,
                         Seen& seen) {
  const std::uint64_t n = shape.domain();
  const auto log_size = static_cast<std::uint64_t>(shape.domain_log2);
  system.register_kernel(kernel::ntt_twiddles, [&seen, log_size](sim::KernelContext& context) {
    ++seen.launches[kernel::ntt_twiddles];
    const auto typed = decoded<kernel::NttTwiddlesLaunch>(seen, context);
    if (!typed) return;
    seen.expect(typed->log_size == log_size, "ntt_twiddles: the domain's log_size");
    seen.smallest_twiddles = std::min(seen.smallest_twiddles, typed->twiddles.bytes);
  });
  system.register_kernel(kernel::ntt, [&seen, &input, log_size, n](sim::KernelContext& context) {
    ++seen.launches[kernel::ntt];
    // In place, and of a kind 0..3: from_launch refuses others.
    const auto typed = decoded<kernel::NttLaunch>(seen, context);
    if (!typed) return;
    seen.expect(typed->log_size == log_size && typed->kind != kernel::NttKind::forward, "ntt: [log_size, kind 1..3]");
    seen.smallest_twiddles = std::min(seen.smallest_twiddles, typed->twiddles.bytes);
    // The stand-ins change nothing, so every inverse NTT of a, b or c still sees the host's data.
    if (typed->kind == kernel::NttKind::inverse && context.write(0).size() >= 32 * n &&
        std::memcmp(context.write(0).data(), input.data(), 32 * n) == 0) {
      ++seen.inverse_ntts_on_the_template;
    }
  });
  system.register_kernel(kernel::h_pointwise, [&seen](sim::KernelContext& context) {
    ++seen.launches[kernel::h_pointwise];
    seen.expect(context.launch().reads.size() == 2 && context.launch().writes.size() == 1,
                "h_pointwise: reads [b, c], writes [a]");
  });
}

// The H MSM's batches and their reduction.
void register_msm_checks(sim::SimSystem& system, const PartitionShape& shape, Seen& seen) {
  const std::uint64_t n = shape.domain();
  system.register_kernel(kernel::msm_batch, [&seen, &shape, n](sim::KernelContext& context) {
    ++seen.launches[kernel::msm_batch];
    const auto typed = decoded<kernel::PartitionMsmBatchLaunch>(seen, context);
    if (!typed) return;
    seen.expect(typed->capacity == shape.h_batch_points(), "msm_batch: capacity is the H batch");
    seen.expect(typed->points <= typed->capacity, "msm_batch: a batch within the capacity");
    seen.expect(typed->first + typed->points <= n, "msm_batch: scalars within the polynomial");
    seen.expect(typed->start == (typed->first == 0), "msm_batch: start exactly on the first batch");
    seen.expect(context.read(1).size() >= 32 * (typed->first + typed->points), "msm_batch: the scalars read");
    seen.expect(typed->scratch.has_value(), "msm_batch: writes [results, scratch]");
    if (typed->scratch) seen.h_scratch = typed->scratch->pointer.address;
    if (typed->start) seen.h_reduced = false;
  });
  system.register_kernel(kernel::msm_reduce, [&seen, &shape](sim::KernelContext& context) {
    ++seen.launches[kernel::msm_reduce];
    const auto typed = decoded<kernel::PartitionMsmReduceLaunch>(seen, context);
    if (!typed) return;
    seen.expect(typed->capacity == shape.h_batch_points(), "msm_reduce: [capacity]");
    seen.h_reduced = true;
  });
}

// The batch additions' and the tail MSM's sums.
void register_sum_checks(sim::SimSystem& system, const PartitionShape& shape, Seen& seen) {
  auto sums = [&seen](const char* name) {
    return [&seen, name](sim::KernelContext& context) {
      ++seen.launches[name];
      const auto typed = decoded<kernel::BatchAdditionLaunch>(seen, context);
      if (!typed) return;
      // A slot's first launch ever must begin a sum; the count of sums begun is checked at the end.
      seen.expect(typed->start || seen.sum_starts.count(typed->offset) == 1,
                  std::string(name) + ": adds to a sum never begun");
      if (typed->start) ++seen.sum_starts[typed->offset];
      seen.expect(typed->offset >= 64 * 1024 && typed->offset % 16 == 0 &&
                      typed->offset + 384 + 384 * 1024 <= context.write(0).size(),
                  std::string(name) + ": the sum slot clear of the window sums and the scratch");
    };
  };
  system.register_kernel(kernel::batch_addition_g1, sums(kernel::batch_addition_g1));
  system.register_kernel(kernel::batch_addition_g2, sums(kernel::batch_addition_g2));
  // The tail MSM accumulates into its scratch, then tail_reduce writes its sum slot, once.
  system.register_kernel(kernel::tail_msm, [&seen](sim::KernelContext& context) {
    ++seen.launches[kernel::tail_msm];
    const auto typed = decoded<kernel::TailMsmLaunch>(seen, context);
    if (!typed) return;
    seen.expect(typed->item_count <= typed->capacity, "tail_msm: within its capacity");
    seen.expect(typed->start || seen.tail_items > 0, "tail_msm: adds to buckets never begun");
    if (typed->start) seen.tail_items = 0;
    seen.tail_items += typed->item_count;
    // One scratch buffer serves both MSMs: the tail takes it over once msm_reduce is done with
    // the H MSM's buckets (both on the compute stream, in this order).
    seen.expect(context.launch().writes.size() == 1 && typed->scratch.has_value(), "tail_msm: writes only its scratch");
    if (typed->scratch)
      seen.expect(typed->scratch->pointer.address == seen.h_scratch, "tail_msm: in the H MSM's scratch");
    seen.expect(seen.h_reduced, "tail_msm: after msm_reduce consumed the H MSM's buckets");
  });
  system.register_kernel(kernel::tail_reduce, [&seen, &shape](sim::KernelContext& context) {
    ++seen.launches[kernel::tail_reduce];
    const auto typed = decoded<kernel::TailReduceLaunch>(seen, context);
    if (!typed) return;
    seen.expect(seen.tail_items == shape.tail_points(), "tail_reduce: after every tail item was accumulated");
    seen.tail_items = 0;
    ++seen.sum_starts[typed->offset];
    seen.expect(typed->offset >= 64 * 1024 && typed->offset % 16 == 0 && typed->offset + 384 <= context.write(0).size(),
                "tail_reduce: the sum slot clear of the window sums");
  });
}

void register_checking_kernels(sim::SimSystem& system, const PartitionShape& shape, const std::vector<std::byte>& input,
                               Seen& seen) {
  register_ntt_checks(system, shape, input, seen);
  register_msm_checks(system, shape, seen);
  register_sum_checks(system, shape, seen);
}

struct Outcome {
  RunReport report;
  Seen seen;
  JobMemoryPlan plan;  // the workload's, after the run set it up
};

// twiddle_bytes: what the device's kernels ask for the NTT domain (0: the shape's 16 bytes per
// element suffice, as on the simulator's models).
Outcome run_partitions(Policy policy, int domain_log2 = 12, Bytes twiddle_bytes = 0,
                       StreamOrder order = StreamOrder::in_order) {
  Outcome outcome;
  PartitionShape shape;
  shape.domain_log2 = domain_log2;
  std::vector<std::byte> input(shape.polynomial_bytes());
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<std::byte>((i * 131 + 7) & 0xff);

  sim::SimOptions options;
  options.functional = true;
  options.keep_trace_events = false;
  sim::SimSystem system(options);
  auto model = sim::load_device_model(sim::find_device_model("h200"));
  model.kernels[kernel::ntt_twiddles].scratch_fixed_bytes = static_cast<double>(twiddle_bytes);
  // The MSMs' scratch, as the CUDA launchers ask (the tail's is the larger, as at 2^26).
  model.kernels[kernel::msm_batch].scratch_fixed_bytes = 1 << 20;
  model.kernels[kernel::tail_msm].scratch_fixed_bytes = 2 << 20;
  auto& device = system.add_device(std::move(model));
  register_checking_kernels(system, shape, input, outcome.seen);

  PoRepData data;
  data.fill_key = [&outcome, &shape](Device&, const ProvingKeyHost& key) -> asio::awaitable<void> {
    ++outcome.seen.key_fills;
    outcome.seen.expect(key.h.bytes == shape.h_points() * PartitionShape::kG1AffineBytes &&
                            key.tail.bytes == shape.tail_points() * PartitionShape::kTailBytesPerPoint,
                        "fill_key: the pinned sets of the shape");
    co_return;
  };
  data.input_template = input;
  CoordinatorSettings settings;
  settings.policy = policy;
  settings.prewarm_pinned_pool = true;
  PoRepSettings porep;
  porep.shape = shape;
  porep.proofs = 1;
  porep.partitions_per_proof = 3;
  porep.program.stream_order = order;
  PoRepWorkload workload(porep, data);
  outcome.report = testing::run_functional(system, device, settings, workload);
  outcome.plan = workload.memory_plan(0);
  return outcome;
}

}  // namespace

// In either stream order: the mixed one places every set's points in each half beside the others'.
BOOST_AUTO_TEST_CASE(every_kernel_launch_carries_what_the_real_kernels_need) {
  const std::pair<StreamOrder, const char*> orders[] = {{StreamOrder::in_order, "in order"},
                                                        {StreamOrder::mixed, "mixed"}};
  for (const auto& [order, order_name] : orders) {
    for (auto policy : {Policy::serial, Policy::prestage, Policy::two_lock, Policy::budgeted}) {
      BOOST_TEST_CONTEXT(to_string(policy) << ", " << order_name) {
        const auto outcome = run_partitions(policy, 12, 0, order);
        const auto& seen = outcome.seen;
        BOOST_CHECK_EQUAL(outcome.report.partitions_completed, 3);
        BOOST_TEST(seen.problems.empty(), (seen.problems.empty() ? std::string() : seen.problems.front()));
        BOOST_CHECK_EQUAL(seen.key_fills, 1);
        // a, b and c of every partition reached the device as the host step wrote them.
        BOOST_CHECK_EQUAL(seen.inverse_ntts_on_the_template, 3 * 3);
        for (const char* name :
             {kernel::ntt_twiddles, kernel::ntt, kernel::h_pointwise, kernel::msm_batch, kernel::msm_reduce,
              kernel::batch_addition_g1, kernel::batch_addition_g2, kernel::tail_msm, kernel::tail_reduce}) {
          BOOST_TEST(seen.launches.count(name) == 1, name << " launched");
        }
        BOOST_CHECK_EQUAL(seen.launches.at(kernel::msm_reduce), 3);
        BOOST_CHECK_EQUAL(seen.launches.at(kernel::tail_reduce), 3);
        // Five sums per partition (L, A, B_G1, B_G2, tail), each in its own slot, begun once per partition.
        BOOST_CHECK_EQUAL(seen.sum_starts.size(), 5u);
        for (const auto& [offset, starts] : seen.sum_starts) BOOST_TEST(starts == 3, "slot " << offset);
      }
    }
  }
}

// Up to 2^22 elements the CUDA domain (an exact twiddle per element, about 32 bytes; below 2^12
// its fixed tables, 41-45 KiB) exceeds the shape's 16 bytes per element; the program then takes what the device asks for, and the job's memory plan
// reserves it in every phase (a plan short of it would stall or fail the allocation).
BOOST_AUTO_TEST_CASE(the_twiddles_take_what_the_device_asks_for_beyond_the_shape) {
  PartitionShape shape;
  shape.domain_log2 = 10;
  const Bytes asked = 45 * kKiB;
  BOOST_TEST_REQUIRE(asked > shape.ntt_scratch_bytes());
  const Bytes extra = asked - shape.ntt_scratch_bytes();
  for (auto policy : {Policy::serial, Policy::budgeted}) {
    BOOST_TEST_CONTEXT(to_string(policy)) {
      const auto outcome = run_partitions(policy, shape.domain_log2, asked);
      BOOST_CHECK_EQUAL(outcome.report.partitions_completed, 3);
      BOOST_TEST(outcome.seen.problems.empty(),
                 (outcome.seen.problems.empty() ? std::string() : outcome.seen.problems.front()));
      BOOST_CHECK_EQUAL(outcome.seen.smallest_twiddles, asked);
      // The plan holds the extra twiddle bytes in every phase.
      const auto plain = run_partitions(policy, shape.domain_log2).plan;
      BOOST_CHECK_EQUAL(outcome.plan.peak_bytes, plain.peak_bytes + extra);
      BOOST_CHECK_EQUAL(outcome.plan.peak_after_b_and_c_bytes, plain.peak_after_b_and_c_bytes + extra);
      BOOST_CHECK_EQUAL(outcome.plan.peak_after_a_bytes, plain.peak_after_a_bytes + extra);
    }
  }
  // Where the shape's bytes suffice, nothing changes.
  const auto outcome = run_partitions(Policy::budgeted);
  BOOST_CHECK_EQUAL(outcome.seen.smallest_twiddles, 16 * (std::uint64_t{1} << 12));
}
