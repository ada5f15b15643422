// proving::ProofBatch on the functional simulator: its proofs against the CPU reference prover
// given the same randomness, every proof ended exactly once (made, failed alone, stopped by its
// listener, failed with the whole run), proofs that join a running batch, the trace in the sink
// it is given, the key kept set up between batches, and proof_device_bytes against a workload's
// own memory plan.
#define BOOST_TEST_MODULE proving
#include <boost/test/unit_test.hpp>

#include "proving/proof_batch.hpp"

#include "groth16/json.hpp"
#include "groth16/prover.hpp"
#include "groth16/setup.hpp"
#include "groth16/verify.hpp"
#include "groth16/witness.hpp"
#include "support/multiplier_circuit.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

using namespace stagehand;
using namespace stagehand::proving;
using math::Fr;

namespace {

constexpr std::uint64_t kSeed = 500;

std::vector<Fr> witness(std::uint64_t x, std::uint64_t y) {
  const Fr fx = Fr::from_uint64(x), fy = Fr::from_uint64(y);
  return {Fr::one(), fx * fy, fx, fy, fx + Fr::from_uint64(3) * fy};
}

struct Key {
  groth16::ProvingKey key;
  groth16::KeySizes sizes;
  Key() {
    groth16::SetupOptions options;
    options.seed = 42;
    options.thread_count = 1;
    key = groth16::setup_from_r1cs(testing::multiplier_circuit(), options);
    sizes = groth16::KeySizes::of(key);
  }
};
const Key& test_key() {
  static const Key instance;
  return instance;
}

// Proof `index` of witness (x, y): r and s from kSeed + index.
BatchJob job(std::size_t index, std::uint64_t x, std::uint64_t y) {
  BatchJob job;
  job.wtns = fmt::format("proof {}", index);
  job.seed = kSeed + index;
  job.wtns_bytes = std::make_shared<const std::vector<std::uint8_t>>(groth16::wtns_bytes(witness(x, y)));
  return job;
}
std::string expected_proof(std::size_t index, std::uint64_t x, std::uint64_t y) {
  return groth16::proof_json(
      groth16::prove_on_cpu(test_key().key, witness(x, y), groth16::ProofRandomness::from_seed(kSeed + index), 1));
}

std::unique_ptr<Backend> open_simulator(int gpus = 1) {
  RunConfig config;
  config.backend = BackendKind::simulator;
  config.gpus = gpus;
  BackendOptions options;
  options.functional = true;
  return Backend::open(config, options);
}

BatchSettings settings_for(Backend& backend) {
  BatchSettings settings;
  settings.coordinator.workers_per_device = 2;
  settings.threads = 1;
  settings.layout =
      groth16::plan_proof_layout(test_key().sizes, backend.devices(), settings.coordinator.safety_margin_bytes,
                                 settings.coordinator.workers_per_device, std::nullopt, std::nullopt);
  return settings;
}

BatchKey batch_key(std::shared_ptr<groth16::DeviceKeyState> state = nullptr) {
  return BatchKey{&test_key().key, &test_key().sizes, "small.zkey", std::move(state)};
}

// Counts each job's ends; optionally joins proofs and stops one at a step.
class Recorder : public BatchListener {
 public:
  void ended(const ProofEnd& end) override {
    auto& entry = ends[end.job];
    ++entry.count;
    entry.made = end.made;
    entry.proof = end.proof_json;
    entry.error = end.error;
    entry.reported = end.record != nullptr;
  }
  void step(int job, BatchStep step, int device) override {
    steps[step] += 1;
    if (job == stop_job && step == stop_at) throw std::runtime_error("stopped by its listener");
  }
  void set_up_ended(int device) override { ++set_ups; }
  Joining join(std::size_t jobs, std::size_t unended) override {
    ++joins;
    Joining joining;
    // Each proof to join comes in its own look, while the batch has proofs unended.
    if (!to_join.empty() && unended > 0) {
      joining.jobs.push_back(std::move(to_join.front()));
      to_join.erase(to_join.begin());
    }
    joining.close = to_join.empty() && joining.jobs.empty();
    return joining;
  }

  struct End {
    int count = 0;
    bool made = false;
    bool reported = false;
    std::string proof, error;
  };
  std::map<int, End> ends;
  std::map<BatchStep, int> steps;
  std::vector<BatchJob> to_join;
  int stop_job = -1;
  BatchStep stop_at = BatchStep::prepare;
  int set_ups = 0;
  int joins = 0;
};

void check_each_ended_once(const Recorder& recorder, std::size_t jobs) {
  BOOST_REQUIRE_EQUAL(recorder.ends.size(), jobs);
  for (const auto& [job, end] : recorder.ends)
    BOOST_CHECK_MESSAGE(end.count == 1, "job " << job << " ended " << end.count << " times");
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_batch_makes_the_cpu_references_proofs_and_gives_back_its_memory) {
  auto backend = open_simulator();
  Recorder recorder;
  ProofBatch batch(*backend, batch_key(), settings_for(*backend), recorder);
  const auto figures = batch.run({job(0, 2, 3), job(1, 5, 7), job(2, 11, 13)});
  check_each_ended_once(recorder, 3);
  BOOST_CHECK_EQUAL(recorder.ends[0].proof, expected_proof(0, 2, 3));
  BOOST_CHECK_EQUAL(recorder.ends[1].proof, expected_proof(1, 5, 7));
  BOOST_CHECK_EQUAL(recorder.ends[2].proof, expected_proof(2, 11, 13));
  for (const auto& [job, end] : recorder.ends) BOOST_CHECK(end.made && end.reported && end.error.empty());
  BOOST_CHECK_EQUAL(figures.proofs, 3u);
  BOOST_CHECK(figures.failure.empty());
  BOOST_CHECK_EQUAL(figures.report.jobs.size(), 3u);
  BOOST_CHECK_EQUAL(figures.report.partitions_completed, 3);
  BOOST_CHECK_EQUAL(figures.set_up_seconds.count(0), 1u);
  BOOST_CHECK_EQUAL(recorder.set_ups, 1);
  BOOST_CHECK_EQUAL(recorder.steps[BatchStep::finish], 3);
  {
    // The key's resident sets and matrix, as a workload of the same layout holds them.
    const auto layout = settings_for(*backend).layout;
    HostWork host_work(0);
    const groth16::Groth16Workload same(test_key().key, "small.zkey", {}, host_work, 1, {}, {}, layout.abc_step,
                                        layout.placement);
    BOOST_CHECK_EQUAL(figures.resident_bytes, same.resident_bytes());
    BOOST_CHECK_GT(figures.resident_bytes, 0u);
  }
  // Without a kept state the run sets the key up and frees it: the device holds what it held.
  BOOST_REQUIRE_EQUAL(figures.memory_before.size(), 1u);
  BOOST_REQUIRE(figures.memory_before[0].known && figures.memory_after[0].known);
  BOOST_CHECK_EQUAL(figures.memory_after[0].held_bytes, figures.memory_before[0].held_bytes);
  BOOST_REQUIRE_EQUAL(figures.counters_after.size(), 1u);
  BOOST_CHECK_GT(figures.counters_after[0].compute_busy_ns, figures.counters_before[0].compute_busy_ns);
}

BOOST_AUTO_TEST_CASE(a_bad_witness_and_a_proof_its_listener_stops_fail_alone) {
  auto backend = open_simulator();
  Recorder recorder;
  recorder.stop_job = 2;
  recorder.stop_at = BatchStep::program;
  auto bad = job(1, 5, 7);
  bad.wtns_bytes = std::make_shared<const std::vector<std::uint8_t>>(std::vector<std::uint8_t>{1, 2, 3});
  std::vector<BatchJob> jobs;
  jobs.push_back(job(0, 2, 3));
  jobs.push_back(std::move(bad));
  jobs.push_back(job(2, 11, 13));
  jobs.push_back(job(3, 17, 19));
  ProofBatch batch(*backend, batch_key(), settings_for(*backend), recorder);
  const auto figures = batch.run(std::move(jobs));
  check_each_ended_once(recorder, 4);
  BOOST_CHECK_EQUAL(recorder.ends[0].proof, expected_proof(0, 2, 3));
  BOOST_CHECK_EQUAL(recorder.ends[3].proof, expected_proof(3, 17, 19));
  BOOST_CHECK(!recorder.ends[1].made && recorder.ends[1].reported);
  BOOST_CHECK_MESSAGE(recorder.ends[1].error.find("proof 1") != std::string::npos, recorder.ends[1].error);
  BOOST_CHECK(!recorder.ends[2].made);
  BOOST_CHECK_MESSAGE(recorder.ends[2].error.find("stopped by its listener") != std::string::npos,
                      recorder.ends[2].error);
  BOOST_CHECK(figures.failure.empty());
  BOOST_CHECK_EQUAL(figures.memory_after[0].held_bytes, figures.memory_before[0].held_bytes);
}

BOOST_AUTO_TEST_CASE(proofs_join_a_running_batch_until_its_listener_closes) {
  auto backend = open_simulator();
  Recorder recorder;
  recorder.to_join.push_back(job(1, 5, 7));
  recorder.to_join.push_back(job(2, 11, 13));
  ProofBatch batch(*backend, batch_key(), settings_for(*backend), recorder);
  const auto figures = batch.run({job(0, 2, 3)});
  check_each_ended_once(recorder, 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const std::uint64_t x[] = {2, 5, 11}, y[] = {3, 7, 13};
    BOOST_CHECK_EQUAL(recorder.ends[static_cast<int>(i)].proof, expected_proof(i, x[i], y[i]));
  }
  BOOST_CHECK_EQUAL(figures.proofs, 3u);
  BOOST_CHECK_EQUAL(figures.report.jobs.size(), 3u);
  BOOST_CHECK_GE(recorder.joins, 3);
}

BOOST_AUTO_TEST_CASE(a_run_that_fails_whole_ends_each_proof_once_saying_so) {
  auto backend = open_simulator();
  Recorder recorder;
  auto settings = settings_for(*backend);
  // A constraint system of another circuit: the workload refuses it before any device work.
  groth16::R1cs other = testing::multiplier_circuit();
  other.n_wires = 6;
  settings.checks.r1cs = &other;
  settings.checks.r1cs_path = "other.r1cs";
  ProofBatch batch(*backend, batch_key(), settings, recorder);
  const auto figures = batch.run({job(0, 2, 3), job(1, 5, 7)});
  check_each_ended_once(recorder, 2);
  BOOST_CHECK_MESSAGE(figures.failure.find("another circuit") != std::string::npos, figures.failure);
  for (const auto& [job, end] : recorder.ends) {
    BOOST_CHECK(!end.made && !end.reported);
    BOOST_CHECK_MESSAGE(end.error.starts_with("the run failed: other.r1cs"), end.error);
  }
}

// A BN254 key's batch: the same witnesses over BN254's Fr, each proof the CPU reference's (r and s
// over BN254 from the job's seed) with "curve": "bn128"; a BN254 constraint system given to a
// BLS12-381 key's batch fails its run naming both curves and both files.
BOOST_AUTO_TEST_CASE(a_bn254_keys_batch_proves_over_its_curve) {
  namespace bn = groth16::bn254;
  using BnFr = math::bn254::Fr;
  bn::SetupOptions options;
  options.seed = 42;
  options.thread_count = 1;
  const auto key = bn::setup_from_r1cs(testing::bn254_multiplier_circuit(), options);
  const auto sizes = groth16::KeySizes::of(key);
  auto bn_witness = [](std::uint64_t x, std::uint64_t y) {
    const BnFr fx = BnFr::from_uint64(x), fy = BnFr::from_uint64(y);
    return std::vector<BnFr>{BnFr::one(), fx * fy, fx, fy, fx + BnFr::from_uint64(3) * fy};
  };
  // The witnesses as files, read at each proof's prepare.
  std::vector<BatchJob> jobs;
  for (std::uint64_t i = 0; i < 2; ++i) {
    BatchJob job;
    job.wtns = std::filesystem::temp_directory_path() / fmt::format("stagehand_batch_bn254_{}_{}.wtns", ::getpid(), i);
    job.seed = kSeed + i;
    bn::write_wtns(job.wtns, bn_witness(2 + i, 5));
    jobs.push_back(std::move(job));
  }
  std::vector<std::filesystem::path> files;
  for (const auto& job : jobs) files.push_back(job.wtns);
  auto backend = open_simulator();
  auto settings = settings_for(*backend);
  settings.layout = groth16::plan_proof_layout(sizes, backend->devices(), settings.coordinator.safety_margin_bytes,
                                               settings.coordinator.workers_per_device, std::nullopt, std::nullopt);
  Recorder recorder;
  const auto figures =
      ProofBatch(*backend, BatchKey{&key, &sizes, "bn254.zkey", nullptr}, settings, recorder).run(std::move(jobs));
  for (const auto& file : files) std::filesystem::remove(file);
  BOOST_CHECK_MESSAGE(figures.failure.empty(), figures.failure);
  check_each_ended_once(recorder, 2);
  for (std::uint64_t i = 0; i < 2; ++i) {
    const auto& end = recorder.ends[static_cast<int>(i)];
    BOOST_REQUIRE_MESSAGE(end.made, end.error);
    const auto expected = bn::prove_on_cpu(key, bn_witness(2 + i, 5), bn::ProofRandomness::from_seed(kSeed + i), 1);
    BOOST_CHECK(bn::verify_proof(key, expected, bn::public_signals(key, bn_witness(2 + i, 5))));
    BOOST_CHECK_EQUAL(end.proof, bn::proof_json(expected));
    BOOST_CHECK(end.proof.find("\"bn128\"") != std::string::npos);
  }

  const auto bn_r1cs = testing::bn254_multiplier_circuit();
  auto mixed = settings_for(*backend);
  mixed.checks.r1cs = &bn_r1cs;
  mixed.checks.r1cs_path = "bn.r1cs";
  Recorder refused;
  const auto failed = ProofBatch(*backend, batch_key(), mixed, refused).run({job(0, 2, 3)});
  check_each_ended_once(refused, 1);
  BOOST_CHECK_MESSAGE(
      failed.failure.find("bn.r1cs") != std::string::npos && failed.failure.find("small.zkey") != std::string::npos &&
          failed.failure.find("BN254") != std::string::npos && failed.failure.find("BLS12-381") != std::string::npos,
      failed.failure);
  BOOST_CHECK(!refused.ends[0].made);
}

BOOST_AUTO_TEST_CASE(the_trace_goes_to_the_sink_and_a_kept_key_stays_set_up_between_batches) {
  auto backend = open_simulator();
  auto state = std::make_shared<groth16::DeviceKeyState>();
  Trace sink(true);
  auto settings = settings_for(*backend);
  settings.trace = &sink;
  {
    Recorder recorder;
    ProofBatch(*backend, batch_key(state), settings, recorder).run({job(0, 2, 3)});
    check_each_ended_once(recorder, 1);
    BOOST_CHECK_EQUAL(recorder.ends[0].proof, expected_proof(0, 2, 3));
  }
  BOOST_CHECK(state->holds_anything());
  BOOST_CHECK_EQUAL(state->set_ups(), 1u);
  BOOST_CHECK_GT(sink.events().size(), 0u);
  bool prepare_span = false;
  for (const auto& event : sink.events())
    prepare_span = prepare_span || sink.string(event.name).find("prepare") != std::string::npos;
  BOOST_CHECK_MESSAGE(prepare_span, "no prepare span among the sink's " << sink.events().size() << " events");
  {
    Recorder recorder;
    const auto figures = ProofBatch(*backend, batch_key(state), settings_for(*backend), recorder).run({job(1, 5, 7)});
    check_each_ended_once(recorder, 1);
    BOOST_CHECK_EQUAL(recorder.ends[0].proof, expected_proof(1, 5, 7));
    // The second batch finds the key set up: the device holds it before and after.
    BOOST_CHECK_EQUAL(figures.memory_after[0].held_bytes, figures.memory_before[0].held_bytes);
  }
  BOOST_CHECK_EQUAL(state->set_ups(), 1u);
  backend->run(state->release());
  BOOST_CHECK(!state->holds_anything());
}

// The one answer to "bytes one proof needs" is a workload's own plan before its set-up, in every layout.
BOOST_AUTO_TEST_CASE(proof_device_bytes_is_the_workloads_peak_and_resident_bytes) {
  const auto& key = test_key();
  HostWork host_work(0);
  for (const auto abc : {groth16::AbcStep::device, groth16::AbcStep::streamed, groth16::AbcStep::host}) {
    for (const auto sets :
         {groth16::SetPlacement::resident, groth16::SetPlacement::fetched_ahead, groth16::SetPlacement::streamed}) {
      groth16::ProofLayout layout;
      layout.abc_step = abc;
      layout.placement = groth16::KeyPlacement::all(sets);
      layout.placement.stream_buffer_bytes = kMiB;
      groth16::ProofChecks no_checks;
      no_checks.verify = false;
      groth16::Groth16Workload workload(key.key, "small.zkey", {}, host_work, 1, {}, no_checks, abc, layout.placement);
      const Bytes expected = workload.memory_plan(0).peak_bytes + workload.resident_bytes();
      BOOST_CHECK_MESSAGE(groth16::proof_device_bytes(key.sizes, layout) == expected,
                          groth16::to_string(abc) << ", sets " << groth16::to_string(sets) << ": "
                                                  << groth16::proof_device_bytes(key.sizes, layout)
                                                  << " against the workload's " << expected);
      BOOST_CHECK_GT(expected, 0u);
    }
  }
}
