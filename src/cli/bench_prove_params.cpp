// stagehand bench prove --format params: proofs from PoRep-shaped Filecoin assignments made in
// memory, through the device path of SupraSeal C2's ABI (proving/assignment_batch.hpp), for
// sizes whose parameter file is too large to write (a 2^27 PoRep key is 44 GiB).
//
// The key's sets have a PoRep partition's sizes (porep_key_sizes: L the aux values, A and B the
// queries over the inputs and the aux values whose bit is set, H the domain's m − 1) and random
// points; one bit mask of each kind and one assignment are shared by every circuit (distinct r
// and s make distinct proofs). Its aux values are full scalars at the given share and 0 or 1
// otherwise. A random key has no circuit: its proofs are computed as any other but cannot verify,
// so none is pairing-checked; DIR/proofs.bin keeps their 384-byte encodings.

#include "cli/bench_prove_params.hpp"
#include "cli/proof_figures.hpp"
#include "cli/proof_run.hpp"

#include "device/format.hpp"
#include "groth16/assignment_prover.hpp"
#include "groth16/device_setup.hpp"
#include "groth16/params.hpp"
#include "proving/assignment_batch.hpp"
#include "util/assert.hpp"
#include "util/random.hpp"
#include "workloads/assignment/assignment_workload.hpp"
#include "workloads/porep/porep_as_groth16.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace stagehand::cli {
namespace {

namespace fs = std::filesystem;
using math::Fr;

// A PoRep partition has a handful of public inputs; they change nothing here.
constexpr std::uint64_t kInputs = 2;

struct ParamsShape {
  unsigned domain_log2 = 0;
  std::uint64_t aux = 0, a_aux_popcount = 0, b_aux_popcount = 0;
  double tail_share = 0;  // the partition program's tail over its G1 query points: the default full share
  std::uint64_t domain() const { return std::uint64_t{1} << domain_log2; }
};

ParamsShape porep_params_shape(unsigned domain_log2) {
  PartitionShape partition;
  partition.domain_log2 = static_cast<int>(domain_log2);
  const auto sizes = porep_key_sizes(partition);
  ParamsShape shape;
  shape.domain_log2 = domain_log2;
  shape.aux = sizes.set_points[groth16::kSetC];
  shape.a_aux_popcount = std::min(sizes.set_points[groth16::kSetA], shape.aux);
  shape.b_aux_popcount = std::min(sizes.set_points[groth16::kSetB1], shape.aux);
  const auto g1_points = shape.aux + shape.a_aux_popcount + shape.b_aux_popcount;
  shape.tail_share = std::min(1.0, static_cast<double>(partition.tail_points()) / static_cast<double>(g1_points));
  return shape;
}

// `popcount` of `bits` bits set, spread evenly.
std::vector<std::uint64_t> spread_mask(std::uint64_t bits, std::uint64_t popcount) {
  std::vector<std::uint64_t> words((bits + 63) / 64);
  for (std::uint64_t i = 0; i < bits; ++i) {
    if ((i + 1) * popcount / bits != i * popcount / bits) words[i / 64] |= std::uint64_t{1} << (i % 64);
  }
  return words;
}

Fr random_fr(Random& random) {
  return Fr::from_uint64(random.next()) * Fr::from_uint64(random.next()) + Fr::from_uint64(random.next());
}

std::vector<Fr> random_scalars(Random& random, std::uint64_t count) {
  std::vector<Fr> values(count);
  for (auto& value : values) value = random_fr(random);
  return values;
}

// Random multiples of the generator, computed on the device (the GPU's kernels, or the
// simulator's host functions).
template <class Points>
Points random_points(Backend& backend, Random& random, groth16::SetupGroup group, std::uint64_t count,
                     unsigned threads) {
  Points points(count);
  const auto scalars = random_scalars(random, count);
  groth16::DeviceSetupOptions options;
  options.host_threads = threads;
  backend.run(groth16::multiply_generator_on_device(*backend.devices().front(), group, scalars, points.mutable_bytes(),
                                                    options));
  return points;
}

groth16::ParamsKey random_params_key(Backend& backend, const ParamsShape& shape, std::uint64_t seed, unsigned threads) {
  Random random(seed);
  const auto g1 = math::G1Projective::from_affine(math::G1Curve::generator());
  const auto g2 = math::G2Projective::from_affine(math::G2Curve::generator());
  groth16::ParamsKey key;
  auto& vk = key.vk;
  vk.alpha1 = g1.multiply(random_fr(random)).to_affine(), vk.beta1 = g1.multiply(random_fr(random)).to_affine();
  vk.delta1 = g1.multiply(random_fr(random)).to_affine();
  vk.beta2 = g2.multiply(random_fr(random)).to_affine(), vk.gamma2 = g2.multiply(random_fr(random)).to_affine();
  vk.delta2 = g2.multiply(random_fr(random)).to_affine();
  for (std::uint64_t i = 0; i < kInputs; ++i) vk.ic.push_back(g1.multiply(random_fr(random)).to_affine());
  using groth16::SetupGroup;
  key.h = random_points<groth16::G1Points>(backend, random, SetupGroup::g1, shape.domain() - 1, threads);
  key.l = random_points<groth16::G1Points>(backend, random, SetupGroup::g1, shape.aux, threads);
  key.a = random_points<groth16::G1Points>(backend, random, SetupGroup::g1, kInputs + shape.a_aux_popcount, threads);
  key.b_g1 = random_points<groth16::G1Points>(backend, random, SetupGroup::g1, kInputs + shape.b_aux_popcount, threads);
  key.b_g2 = random_points<groth16::G2Points>(backend, random, SetupGroup::g2, kInputs + shape.b_aux_popcount, threads);
  return key;
}

// The one assignment every circuit proves: a, b, c over the whole domain, every input in B.
struct SharedAssignment {
  std::vector<std::uint64_t> a_aux, b_inp, b_aux;
  std::vector<Fr> a, b, c, inputs, aux;
  std::uint64_t a_aux_popcount = 0, b_aux_popcount = 0;

  groth16::AssignmentView view() const {
    return {{a_aux, aux.size(), a_aux_popcount},
            {b_inp, inputs.size(), inputs.size()},
            {b_aux, aux.size(), b_aux_popcount},
            a,
            b,
            c,
            inputs,
            aux};
  }
};

SharedAssignment porep_assignment(const ParamsShape& shape, double full_share, std::uint64_t seed) {
  Random random(seed);
  SharedAssignment out;
  out.a_aux = spread_mask(shape.aux, shape.a_aux_popcount), out.a_aux_popcount = shape.a_aux_popcount;
  out.b_aux = spread_mask(shape.aux, shape.b_aux_popcount), out.b_aux_popcount = shape.b_aux_popcount;
  out.b_inp = spread_mask(kInputs, kInputs);
  out.a = random_scalars(random, shape.domain()), out.b = random_scalars(random, shape.domain());
  out.c = random_scalars(random, shape.domain());
  out.inputs = random_scalars(random, kInputs);
  out.inputs[0] = Fr::one();
  out.aux.resize(shape.aux);
  for (auto& value : out.aux)
    value = random.uniform() < full_share ? random_fr(random) : Fr::from_uint64(random.next() & 1);
  return out;
}

// The devices' counters of the run alone, summed over the devices.
struct CounterSums {
  Nanoseconds busy_ns = 0;
  Bytes pinned = 0;
  Bytes pageable = 0;
};
CounterSums counters_between(const std::vector<DeviceCounters>& before, const std::vector<DeviceCounters>& after) {
  STAGEHAND_ASSERT(before.size() == after.size());
  CounterSums sums;
  for (std::size_t i = 0; i < after.size(); ++i) {
    sums.busy_ns += after[i].compute_busy_ns - before[i].compute_busy_ns;
    sums.pinned += after[i].pinned_bytes_copied - before[i].pinned_bytes_copied;
    sums.pageable += after[i].pageable_bytes_copied - before[i].pageable_bytes_copied;
  }
  return sums;
}

// The compute engine's busy share from the first partition taking its GPU to the last giving it
// back: the devices' counters also hold what ran before the run (the key made on the device).
double busy_share(const RunReport& report, Nanoseconds busy_ns, std::size_t devices) {
  const auto window = held_window(report);
  if (window.jobs == 0 || window.last <= window.first) return 0;
  return static_cast<double>(busy_ns) /
         (static_cast<double>(window.last - window.first) * static_cast<double>(devices));
}

void print_params_figures(const RunReport& report, const ParamsBenchOptions& options, double seconds,
                          const std::vector<DeviceCounters>& before, const std::vector<DeviceCounters>& after) {
  const auto during = counters_between(before, after);
  const std::size_t devices = after.size();
  fmt::print("stagehand bench prove --format params: {} of {} proofs at 2^{} under {} in {:.3f} s ({:.3f} s a proof)\n",
             report.partitions_completed, report.partitions, options.domain_log2, report.policy, seconds,
             report.seconds_per_proof);
  fmt::print("  GPU seconds per partition  {:.4f}\n", report.gpu_seconds_per_partition);
  fmt::print("  compute busy               {:.1f}% (first partition's GPU start to last's end)\n",
             100.0 * busy_share(report, during.busy_ns, devices));
  fmt::print("  lock wait, upload wait     {:.3f} s, {:.3f} s (summed)\n", report.lock_wait_seconds,
             report.upload_wait_seconds);
  fmt::print("  VRAM peak                  {} (the process's: the key's making on the device included)\n",
             format_bytes(report.vram_peak_bytes));
  fmt::print("  out of memory              {}\n", report.oom_count);
  fmt::print("  PCIe pinned, pageable      {}, {} (the run's)\n", format_bytes(during.pinned),
             format_bytes(during.pageable));
  if (report.partitions_completed > 0) {
    fmt::print("  kernels per partition      {}\n",
               kernels_between(before, after, static_cast<std::uint64_t>(report.partitions_completed)));
  }
}

// One run of the proofs under `policy`: its figures printed, its proofs written into `dir`.
RunReport prove_with_policy(Backend& backend, const groth16::ParamsKey& key,
                            const std::vector<groth16::AssignmentView>& views,
                            const std::vector<groth16::ProofRandomness>& randomness, const RunConfig& config,
                            const std::string& policy, const ParamsBenchOptions& options, const fs::path& dir) {
  proving::AssignmentBatchSettings settings;
  settings.coordinator = settings_for(config, policy_from_string(policy));
  if (options.run.workers > 0) settings.coordinator.workers_per_device = options.run.workers;
  settings.verify = false;
  settings.threads = options.run.threads;
  if (!options.run.trace.empty()) {
    // One trace per policy where there are several: each beside the first's name.
    fs::path trace(options.run.trace);
    if (options.policies.size() > 1) trace.replace_filename(trace.stem().string() + "-" + policy + ".json");
    settings.trace_file = trace;
  }
  settings.stream_buffer_bytes = static_cast<Bytes>(options.run.stream_buffer_mib * static_cast<double>(kMiB));
  settings.host_steps_off_thread = backend.on_gpu();
  const auto start = std::chrono::steady_clock::now();
  const auto before = proving::counters_of(backend.devices());
  proving::AssignmentBatchResult result;
  backend.run([&]() -> asio::awaitable<void> {
    result = co_await proving::run_assignment_batch(backend.devices(), key, views, randomness, settings);
  }());
  print_params_figures(result.report, options, seconds_since(start), before, proving::counters_of(backend.devices()));
  fmt::print("  the key's sets             {}\n", groth16::describe_assignment_layout(result.layout));
  fs::create_directories(dir);
  std::ofstream out(dir / "proofs.bin", std::ios::binary);
  for (const auto& proof : result.proofs) {
    const auto bytes = groth16::encode_supraseal_proof(proof);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  if (!out.flush()) throw std::runtime_error(fmt::format("{}: cannot be written", (dir / "proofs.bin").string()));
  return result.report;
}

// The proofs' key: made in memory, or with --params-file read from that file (made and written
// there first where it is missing). The made key is given back before the file is read, so that
// the process holds one copy of the parameters, as a prover reading its file does.
groth16::ParamsKey bench_key(Backend& backend, const ParamsShape& shape, const ParamsBenchOptions& options) {
  const bool from_file = !options.params_file.empty();
  if (!from_file || !fs::exists(options.params_file)) {
    const auto start = std::chrono::steady_clock::now();
    auto key = random_params_key(backend, shape, options.seed, options.run.threads);
    fmt::print(stderr,
               "stagehand bench prove: a PoRep-shaped .params key of random points at 2^{} ({} aux, A {} and B {} of "
               "them, {} of points) made on {} in {:.2f} s; its proofs cannot verify and are not checked\n",
               options.domain_log2, shape.aux, shape.a_aux_popcount, shape.b_aux_popcount,
               format_bytes(groth16::AssignmentWorkload::key_bytes(key)), backend.describe(), seconds_since(start));
    if (!from_file) return key;
    const auto write_start = std::chrono::steady_clock::now();
    groth16::write_params(options.params_file, key);
    fmt::print(stderr, "stagehand bench prove: {} written ({}) in {:.2f} s\n", options.params_file,
               format_bytes(fs::file_size(options.params_file)), seconds_since(write_start));
  }
  const auto read_start = std::chrono::steady_clock::now();
  auto key = groth16::read_params(options.params_file);
  fmt::print(stderr, "stagehand bench prove: {} ({}) read and checked, ready to prove, in {:.2f} s\n",
             options.params_file, format_bytes(fs::file_size(options.params_file)), seconds_since(read_start));
  const bool porep_shaped = key.h.size() == shape.domain() - 1 && key.l.size() == shape.aux &&
                            key.a.size() == kInputs + shape.a_aux_popcount &&
                            key.b_g1.size() == kInputs + shape.b_aux_popcount && key.input_count() == kInputs;
  if (!porep_shaped) {
    throw std::runtime_error(
        fmt::format("{}: a key of {} h, {} l, {} a and {} b points and {} inputs, not the PoRep shape --domain-log2 {} "
                    "makes ({} h, "
                    "{} l, {} a, {} b, {} inputs): made with another --domain-log2?",
                    options.params_file, key.h.size(), key.l.size(), key.a.size(), key.b_g1.size(), key.input_count(),
                    options.domain_log2, shape.domain() - 1, shape.aux, kInputs + shape.a_aux_popcount,
                    kInputs + shape.b_aux_popcount, kInputs));
  }
  return key;
}

}  // namespace

int bench_prove_params(const ParamsBenchOptions& options) {
  const auto config = load_proof_run_config(options.run);
  auto backend = open_proof_backend(config, options.run);
  const auto shape = porep_params_shape(options.domain_log2);
  const double full_share = options.full_share >= 0 ? options.full_share : shape.tail_share;
  const auto key = bench_key(*backend, shape, options);
  const auto assignment = porep_assignment(shape, full_share, options.seed + 1);
  fmt::print(stderr,
             "stagehand bench prove: one assignment for every proof, {:.1f}% of its aux values full scalars{}\n",
             100.0 * full_share, options.full_share >= 0 ? "" : " (the PoRep partition's tail share, the default)");
  const std::vector<groth16::AssignmentView> views(static_cast<std::size_t>(options.proofs), assignment.view());
  std::vector<groth16::ProofRandomness> randomness;
  for (int i = 0; i < options.proofs; ++i)
    randomness.push_back(groth16::ProofRandomness::from_seed(options.seed + 2 + i));
  int status = 0;
  for (const auto& policy : options.policies) {
    const fs::path dir = options.policies.size() == 1 ? fs::path(options.out_dir) : fs::path(options.out_dir) / policy;
    const auto report = prove_with_policy(*backend, key, views, randomness, config, policy, options, dir);
    if (report.partitions_completed != report.partitions) status = 1;
  }
  return status;
}

}  // namespace stagehand::cli
