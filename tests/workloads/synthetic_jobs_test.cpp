// The Groth16 program's jobs over synthetic bytes (Groth16TimingJobs::SyntheticData, what `bench
// policies` runs on a GPU) with a PoRep partition's key sizes (workloads/porep/porep_as_groth16.hpp)
// on the functional simulator: every job's five MSM sums are the CPU's over the same points and
// scalars, with the key's sets of unequal sizes, the witness's C part after the constant 1, and
// each set resident or streamed in batches.
#define BOOST_TEST_MODULE groth16_synthetic_jobs
#include <boost/test/unit_test.hpp>

#include "coordinator/coordinator.hpp"
#include "groth16/encoding.hpp"
#include "math/h_polynomial.hpp"
#include "math/msm.hpp"
#include "support/functional_groth16_device.hpp"
#include "support/functional_run.hpp"
#include "util/assert.hpp"
#include "workloads/porep/porep_as_groth16.hpp"

#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

using namespace stagehand;
using namespace stagehand::groth16;

namespace {

// first·G, (first + 1)·G, ... in the key's encoding; `affine` keeps them for the CPU's MSM.
template <class Curve>
std::vector<std::byte> multiples(std::uint64_t first, std::uint64_t count, Bytes point_bytes,
                                 std::vector<math::AffinePoint<Curve>>& affine) {
  std::vector<math::ProjectivePoint<Curve>> points;
  const auto generator = Curve::generator();
  auto point = math::ProjectivePoint<Curve>::from_affine(generator).multiply(math::Fr::from_uint64(first));
  for (std::uint64_t i = 0; i < count; ++i) {
    points.push_back(point);
    point += generator;
  }
  affine.resize(count);
  math::batch_to_affine<Curve>(points, affine);
  std::vector<std::byte> bytes(count * point_bytes);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::vector<std::uint8_t> encoded;
    if constexpr (std::is_same_v<Curve, math::G1Curve>) {
      encode_g1(affine[i], encoded);
    } else {
      encode_g2(affine[i], encoded);
    }
    BOOST_REQUIRE_EQUAL(encoded.size(), point_bytes);
    std::memcpy(bytes.data() + i * point_bytes, encoded.data(), point_bytes);
  }
  return bytes;
}

HostRange range_of(std::vector<std::byte>& bytes) {
  return HostRange{reinterpret_cast<std::uintptr_t>(bytes.data()), bytes.size()};
}

// A PoRep partition's key, witness and polynomial for the CPU and the device alike.
struct PartitionData {
  std::vector<math::G1Affine> h, a, b1, c;
  std::vector<math::G2Affine> b2;
  std::array<std::vector<std::byte>, kKeySetCount> set_bytes;
  std::vector<math::Fr> witness;
  std::vector<math::Fr> polynomial;
};

PartitionData make_partition_data(const KeySizes& sizes) {
  PartitionData data;
  // The key's sets: distinct multiples of G across the G1 sets.
  std::uint64_t next = 1;
  for (auto [set, affine] :
       {std::pair{kSetH, &data.h}, std::pair{kSetA, &data.a}, std::pair{kSetB1, &data.b1}, std::pair{kSetC, &data.c}}) {
    data.set_bytes[set] = multiples<math::G1Curve>(next, sizes.set_points[set], kG1Bytes, *affine);
    next += sizes.set_points[set];
  }
  data.set_bytes[kSetB2] = multiples<math::G2Curve>(3, sizes.set_points[kSetB2], kG2Bytes, data.b2);

  // A PoRep witness's kinds: every third scalar full, the rest 0 or 1.
  auto& witness = data.witness;
  witness.resize(sizes.n_vars);
  for (std::uint64_t i = 0; i < witness.size(); ++i) {
    witness[i] = i % 3 == 0 ? math::Fr::from_uint64(0x9e3779b97f4a7c15ull * (i + 1)).squared()
                            : math::Fr::from_uint64((i / 3) % 2);
  }
  data.polynomial.resize(sizes.domain_size());
  for (std::uint64_t i = 0; i < data.polynomial.size(); ++i) data.polynomial[i] = math::Fr::from_uint64(i * i + 7);
  return data;
}

// The CPU's sums: the witness's MSMs, and H's over the H step's evaluations of a = b = c.
MsmResults cpu_sums(const PartitionData& data, const KeySizes& sizes) {
  const auto& witness = data.witness;
  MsmResults expected;
  expected.a = math::msm(data.a, std::span(witness).first(data.a.size()));
  expected.b1 = math::msm(data.b1, std::span(witness).first(data.b1.size()));
  expected.b2 = math::msm(data.b2, std::span(witness).first(data.b2.size()));
  expected.c = math::msm(data.c, std::span(witness).subspan(1 + sizes.n_public, data.c.size()));
  auto pa = data.polynomial, pb = data.polynomial, pc = data.polynomial;
  math::h_evaluations_snarkjs(pa, pb, pc, math::Domain::snarkjs(sizes.domain_log2));
  expected.h = math::msm(data.h, pa);
  return expected;
}

// What the jobs' run on the functional simulator reported, each job's sums, and the device memory
// still held at its end.
struct SyntheticRun {
  RunReport report;
  std::map<int, MsmResults> sums;
  std::uint64_t memory_held = 0;
};

SyntheticRun run_on_synthetic_bytes(const Groth16TimingJobs& jobs, PartitionData& partition, SetPlacement placement) {
  SyntheticRun run;
  testing::FunctionalGroth16Device h200;
  auto& [system, device] = h200;
  HostWork host_work(0);
  Groth16TimingJobs::SyntheticData data;
  for (std::size_t set = 0; set < kKeySetCount; ++set) data.sets[set] = range_of(partition.set_bytes[set]);
  data.polynomial = std::as_bytes(std::span(partition.polynomial));
  data.witness = std::as_bytes(std::span(partition.witness));
  data.host_work = &host_work;
  data.on_sums = [&](int job, const MsmResults& found) { run.sums[job] = found; };
  auto with_data = jobs;
  with_data.data = data;
  auto layout = KeyPlacement::all(placement);
  layout.stream_buffer_bytes = 64 * kG1Bytes;  // several batches a set
  Groth16TimingWorkload workload(std::move(with_data), AbcStep::host, layout);
  CoordinatorSettings settings;
  settings.policy = Policy::budgeted;
  run.report = testing::run_functional(system, device, settings, workload);
  run.memory_held = device.memory_info().total_bytes - device.memory_info().free_bytes;
  return run;
}

}  // namespace

BOOST_AUTO_TEST_CASE(porep_partitions_on_synthetic_bytes_give_the_cpus_msm_sums) {
  PoRepSettings porep;
  porep.proofs = 1;
  porep.partitions_per_proof = 3;
  porep.shape.domain_log2 = 10;
  porep.shape.host_prepare_ns_per_element = 0;
  porep.shape.host_finish_ns_per_element = 0;
  auto jobs = porep_timing_jobs(porep);
  const auto& sizes = jobs.sizes;
  BOOST_REQUIRE(sizes.set_points[kSetA] != sizes.set_points[kSetB1]);  // unequal sets, as a PoRep key has
  auto partition = make_partition_data(sizes);
  const auto expected = cpu_sums(partition, sizes);

  for (auto placement : {SetPlacement::resident, SetPlacement::streamed}) {
    BOOST_TEST_CONTEXT("every set " << to_string(placement)) {
      const auto [report, sums, memory_held] = run_on_synthetic_bytes(jobs, partition, placement);
      BOOST_CHECK_EQUAL(report.partitions_completed, 3);
      BOOST_CHECK_EQUAL(report.proofs, 1);
      BOOST_REQUIRE_EQUAL(sums.size(), 3u);
      for (const auto& [job, found] : sums) {
        BOOST_TEST_CONTEXT("job " << job) {
          BOOST_CHECK(found.h == expected.h);
          BOOST_CHECK(found.a == expected.a);
          BOOST_CHECK(found.b1 == expected.b1);
          BOOST_CHECK(found.b2 == expected.b2);
          BOOST_CHECK(found.c == expected.c);
        }
      }
      BOOST_CHECK_EQUAL(memory_held, 0u);
    }
  }
}

// What the data must hold is checked when the jobs are made, naming the set.
BOOST_AUTO_TEST_CASE(synthetic_data_short_of_a_set_is_refused_naming_it) {
  PoRepSettings porep;
  porep.shape.domain_log2 = 10;
  auto jobs = porep_timing_jobs(porep);
  std::vector<std::byte> small(kG1Bytes);
  std::vector<std::byte> polynomial(32 * jobs.sizes.domain_size()), witness(32 * jobs.sizes.n_vars);
  HostWork host_work(0);
  Groth16TimingJobs::SyntheticData data;
  for (auto& set : data.sets) set = range_of(small);
  data.polynomial = polynomial;
  data.witness = witness;
  data.host_work = &host_work;
  jobs.data = data;
  try {
    Groth16TimingWorkload workload(std::move(jobs), AbcStep::host, KeyPlacement::all(SetPlacement::streamed));
    BOOST_FAIL("no error");
  } catch (const std::invalid_argument& error) {
    BOOST_TEST(std::string(error.what()).find("the synthetic H set holds 96 B") != std::string::npos, error.what());
  }
  auto device_jobs = porep_timing_jobs(porep);
  device_jobs.data = data;
  BOOST_CHECK_THROW(
      Groth16TimingWorkload(std::move(device_jobs), AbcStep::device, KeyPlacement::all(SetPlacement::streamed)),
      std::invalid_argument);
}

namespace {

// Makes assertions throw for the test's duration, so that the test sees them fire.
struct ThrowingAssertions {
  ThrowingAssertions() : previous(set_assertion_handler(&throwing_assertion_handler)) {}
  ~ThrowingAssertions() { set_assertion_handler(previous); }
  AssertionHandler previous;
};

}  // namespace

// The program checks each job's hand-offs whatever its data source: a job index in range, a
// prepare only of a job not in hand, a finish only after the job's program (and so only once).
BOOST_AUTO_TEST_CASE(the_programs_hand_offs_fire_assertions_naming_the_job_and_the_step) {
  ThrowingAssertions throwing;
  PoRepSettings porep;
  porep.proofs = 1;
  porep.partitions_per_proof = 2;
  porep.shape.domain_log2 = 10;
  porep.shape.host_prepare_ns_per_element = 0;
  porep.shape.host_finish_ns_per_element = 0;
  auto jobs = porep_timing_jobs(porep);
  jobs.host_memory = [](Bytes bytes) {
    return HostRange{std::uintptr_t{1} << 40, bytes};
  };  // never read: no set-up runs
  testing::FunctionalGroth16Device h200;
  // References, not a structured binding: clang 14 (the sanitizer trees) cannot capture a binding.
  auto& system = h200.system;
  auto& device = h200.device;
  Groth16TimingWorkload workload(std::move(jobs), AbcStep::host, KeyPlacement::all(SetPlacement::resident));
  BOOST_REQUIRE_EQUAL(workload.job_count(), 2);
  BOOST_CHECK_EQUAL(workload.proof_count(), 1);
  BOOST_CHECK_EQUAL(workload.proof_of(1), 0);
  std::vector<std::string> messages;
  auto message_of = [&messages](asio::awaitable<void> step) -> asio::awaitable<void> {
    try {
      co_await std::move(step);
      messages.emplace_back("no assertion");
    } catch (const AssertionFailure& failure) {
      messages.emplace_back(failure.what());
    }
  };
  sim::run_to_completion(system, [&]() -> asio::awaitable<void> {
    co_await message_of(workload.prepare(2, device, {}));
    co_await message_of(workload.finish(0, device));
    co_await workload.prepare(0, device, {});
    co_await message_of(workload.prepare(0, device, {}));
    co_await message_of(workload.finish(0, device));
    workload.abandon(0);
    co_await message_of(workload.prepare(0, device, {}));  // afresh after its abandon (a retry)
  }());
  BOOST_REQUIRE_EQUAL(messages.size(), 5u);
  BOOST_TEST(messages[0].find("prepare of job 2, of 2 jobs") != std::string::npos, messages[0]);
  BOOST_TEST(messages[1].find("finish of job 0, which is not in hand") != std::string::npos, messages[1]);
  BOOST_TEST(messages[2].find("job 0 is prepared while still in hand") != std::string::npos, messages[2]);
  BOOST_TEST(messages[3].find("finish of job 0 at the wrong step (its program has not run)") != std::string::npos,
             messages[3]);
  BOOST_CHECK_EQUAL(messages[4], "no assertion");
}
