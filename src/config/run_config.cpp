#include "config/run_config.hpp"

#include "config/config_table.hpp"
#include "config/faults_table.hpp"
#include "device/format.hpp"

#include <fmt/format.h>

#include <climits>
#include <cmath>

namespace stagehand {
namespace {
Bytes gib_to_bytes(double gib) { return static_cast<Bytes>(std::llround(gib * static_cast<double>(kGiB))); }
Bytes mib_to_bytes(double mib) { return static_cast<Bytes>(std::llround(mib * static_cast<double>(kMiB))); }

// [run]: the backend, the policies to run, the seed and where traces go.
void read_run_table(const ConfigTable& run, RunConfig& config) {
  auto& coordinator = config.coordinator;
  auto backend = run.choice("backend", "auto", {"auto", "sim", "cuda"});
  config.backend = backend == "sim"    ? BackendKind::simulator
                   : backend == "cuda" ? BackendKind::cuda
                                       : BackendKind::automatic;
  if (auto names = run.string_array("policies")) {
    config.policies.clear();
    for (const auto& name : *names) {
      try {
        config.policies.push_back(policy_from_string(name));
      } catch (const std::invalid_argument& error) {
        run.fail("policies", error.what());
      }
    }
    if (config.policies.empty()) run.fail("policies", "needs at least one policy");
  }
  coordinator.seed =
      static_cast<std::uint64_t>(run.integer_in("seed", static_cast<std::int64_t>(coordinator.seed), 0, INT64_MAX));
  if (auto trace_dir = run.string("trace_dir")) config.trace_dir = *trace_dir;
  run.reject_unknown_keys();
}

// [sim]: the simulated device model and its jitter.
void read_sim_table(const ConfigTable& sim, RunConfig& config) {
  config.device_model = sim.string("device_model").value_or(config.device_model);
  if (sim.contains("device_model")) config.device_model_where = sim.where("device_model");
  config.duration_jitter = sim.number_in("duration_jitter", config.duration_jitter, 0, 0.9);
  config.functional = sim.boolean("functional").value_or(config.functional);
  sim.reject_unknown_keys();
}

// [gpus]: how many, their workers, pre-staging and the memory the run may use on each.
void read_gpus_table(const ConfigTable& gpus, RunConfig& config) {
  auto& coordinator = config.coordinator;
  config.gpus = static_cast<int>(gpus.integer_in("count", config.gpus, 1, 64));
  coordinator.workers_per_device =
      static_cast<int>(gpus.integer_in("workers_per_device", coordinator.workers_per_device, 1, 64));
  coordinator.prestage_depth = static_cast<int>(gpus.integer_in("prestage_depth", coordinator.prestage_depth, 1, 64));
  coordinator.overlap_finish = gpus.boolean("overlap_finish").value_or(coordinator.overlap_finish);
  coordinator.prestage_chunk_bytes = mib_to_bytes(
      gpus.number_in("prestage_chunk_mib", static_cast<double>(coordinator.prestage_chunk_bytes) / kMiB, 1, 1 << 20));
  coordinator.prestage_chunks_in_flight =
      static_cast<int>(gpus.integer_in("prestage_chunks_in_flight", coordinator.prestage_chunks_in_flight, 1, 64));
  config.vram_cap_bytes =
      gib_to_bytes(gpus.number_in("vram_cap_gib", static_cast<double>(config.vram_cap_bytes) / kGiB, 0, 1 << 20));
  if (gpus.contains("vram_cap_gib")) config.vram_cap_where = gpus.where("vram_cap_gib");
  if (gpus.contains("count")) config.gpus_where = gpus.where("count");
  coordinator.safety_margin_bytes = mib_to_bytes(
      gpus.number_in("safety_margin_mib", static_cast<double>(coordinator.safety_margin_bytes) / kMiB, 0, 1 << 24));
  coordinator.resident_bytes =
      mib_to_bytes(gpus.number_in("resident_mib", static_cast<double>(coordinator.resident_bytes) / kMiB, 0, 1 << 24));
  gpus.reject_unknown_keys();
}

// [host_staging]: how host memory is made ready for copies, and its budget.
void read_host_staging_table(const ConfigTable& staging, RunConfig& config) {
  auto& coordinator = config.coordinator;
  auto mode =
      staging.choice("mode", coordinator.host_staging == HostStagingMode::pinned_pool ? "pinned-pool" : "register",
                     {"pinned-pool", "register"});
  coordinator.host_staging = mode == "pinned-pool" ? HostStagingMode::pinned_pool : HostStagingMode::register_in_place;
  coordinator.pinned_host_budget_bytes = gib_to_bytes(staging.number_in(
      "pinned_budget_gib", static_cast<double>(coordinator.pinned_host_budget_bytes) / kGiB, 0.001, 1 << 20));
  coordinator.prewarm_pinned_pool = staging.boolean("prewarm").value_or(coordinator.prewarm_pinned_pool);
  coordinator.host_staging_budget_bytes = gib_to_bytes(staging.number_in(
      "host_budget_gib", static_cast<double>(coordinator.host_staging_budget_bytes) / kGiB, 0.001, 1 << 20));
  if (staging.contains("host_budget_gib")) coordinator.host_staging_budget_where = staging.where("host_budget_gib");
  staging.reject_unknown_keys();
}

// [workload]'s keys for kind = "groth16": the key shape and how the program places and computes it.
void read_groth16_workload(const ConfigTable& workload, RunConfig& config) {
  const auto key = workload.choice("key", std::string(to_string(config.groth16.key)),
                                   {std::string(to_string(Groth16KeyShape::synthetic_circuit)),
                                    std::string(to_string(Groth16KeyShape::porep_partition))});
  config.groth16.key = key == to_string(Groth16KeyShape::porep_partition) ? Groth16KeyShape::porep_partition
                                                                          : Groth16KeyShape::synthetic_circuit;
  const bool porep_key = config.groth16.key == Groth16KeyShape::porep_partition;
  const auto bls = std::string(kernel::curve_name(kernel::Curve::bls12_381));
  const auto bn254 = std::string(kernel::curve_name(kernel::Curve::bn254));
  const auto curve = workload.choice("curve", bls, {bls, bn254});
  config.groth16.curve = curve == bn254 ? kernel::Curve::bn254 : kernel::Curve::bls12_381;
  if (porep_key && config.groth16.curve != kernel::Curve::bls12_381)
    workload.fail("curve", "key = \"porep-partition\" is a Filecoin partition's key, BLS12-381's");
  if (!porep_key) {
    if (workload.contains("partitions_per_proof")) {
      workload.fail("partitions_per_proof",
                    "kind = \"groth16\" with the synthetic circuit's key makes one job of each proof: "
                    "partitions_per_proof is for kind = \"porep\" or key = \"porep-partition\"");
    }
    config.workload.partitions_per_proof = 1;
  }
  // A PoRep partition's a, b and c come from the host: it has no constraint matrix.
  if (porep_key) config.groth16.abc_step = groth16::AbcStep::host;
  const auto abc =
      workload.choice("abc", std::string(groth16::to_string(config.groth16.abc_step)), groth16::abc_step_choices());
  config.groth16.abc_step = *groth16::parse_abc_step(abc);
  if (porep_key && config.groth16.abc_step != groth16::AbcStep::host) {
    workload.fail(
        "abc",
        "key = \"porep-partition\" has no constraint matrix: its a, b and c come from the host (abc = \"host\")");
  }
  if (workload.contains("full_scalar_share"))
    config.groth16.full_scalar_share = workload.number_in("full_scalar_share", 1.0, 0, 1);
  const auto sets = workload.choice("key_sets", "auto", groth16::set_placement_choices());
  config.groth16.key_sets = groth16::parse_set_placement(sets);
  config.groth16.precompute_bases = workload.boolean("precompute_bases").value_or(config.groth16.precompute_bases);
  config.groth16.stream_buffer_bytes = static_cast<Bytes>(
      workload.number_in("stream_buffer_mib", static_cast<double>(config.groth16.stream_buffer_bytes) / kMiB, 1,
                         1 << 16) *
      static_cast<double>(kMiB));
}

// [workload]: the jobs' count and shape, and the partition program's switches.
void read_workload_table(const ConfigTable& workload, RunConfig& config) {
  const auto kind = workload.choice("kind", config.workload_kind == WorkloadKind::groth16 ? "groth16" : "porep",
                                    {"porep", "groth16"});
  config.workload_kind = kind == "groth16" ? WorkloadKind::groth16 : WorkloadKind::porep;
  if (config.workload_kind == WorkloadKind::groth16) read_groth16_workload(workload, config);
  config.workload.proofs = static_cast<int>(workload.integer_in("proofs", config.workload.proofs, 1, 100000));
  config.workload.partitions_per_proof =
      static_cast<int>(workload.integer_in("partitions_per_proof", config.workload.partitions_per_proof, 1, 100000));
  // In 64 bits: 100000 x 100000 overflows the int that counts the jobs.
  const auto partitions = std::int64_t{config.workload.proofs} * config.workload.partitions_per_proof;
  if (partitions > kMaxPartitionsPerRun) {
    workload.fail(
        workload.contains("partitions_per_proof") ? "partitions_per_proof" : "proofs",
        fmt::format("{} proofs x {} partitions = {} partitions, more than the {} a run may hold",
                    config.workload.proofs, config.workload.partitions_per_proof, partitions, kMaxPartitionsPerRun));
  }
  config.workload.shape.domain_log2 =
      static_cast<int>(workload.integer_in("domain_log2", config.workload.shape.domain_log2, 10, 27));
  auto collect = workload.choice(
      "msm_collect", config.workload.program.msm_collect == MsmCollect::deferred ? "deferred" : "synchronize",
      {"deferred", "synchronize"});
  config.workload.program.msm_collect = collect == "deferred" ? MsmCollect::deferred : MsmCollect::synchronize;
  auto& program = config.workload.program;
  const auto order = workload.choice("stream_order", program.stream_order == StreamOrder::mixed ? "mixed" : "in-order",
                                     {"in-order", "mixed"});
  program.stream_order = order == "mixed" ? StreamOrder::mixed : StreamOrder::in_order;
  program.fetch_ahead_sets = static_cast<int>(workload.integer_in("fetch_ahead_sets", program.fetch_ahead_sets, 0, 5));
  config.workload.shape.host_prepare_ns_per_element =
      workload.number_in("host_prepare_ns_per_element", config.workload.shape.host_prepare_ns_per_element, 0, 1e6);
  config.workload.shape.host_finish_ns_per_element =
      workload.number_in("host_finish_ns_per_element", config.workload.shape.host_finish_ns_per_element, 0, 1e6);
  workload.reject_unknown_keys();
}

// [policy.prestage], [policy.two-lock] and [policy.budgeted]: each policy's own switches.
void read_policy_table(const ConfigTable& policy, RunConfig& config) {
  auto& coordinator = config.coordinator;
  if (auto prestage = policy.table("prestage")) {
    auto& switches = coordinator.prestage;
    switches.free_memory_check = prestage->boolean("free_memory_check").value_or(switches.free_memory_check);
    switches.margin_bytes =
        mib_to_bytes(prestage->number_in("margin_mib", static_cast<double>(switches.margin_bytes) / kMiB, 0, 1 << 24));
    switches.synchronize_device = prestage->boolean("synchronize_device").value_or(switches.synchronize_device);
    switches.trim_pool = prestage->boolean("trim_pool").value_or(switches.trim_pool);
    prestage->reject_unknown_keys();
  }
  if (auto two_lock = policy.table("two-lock")) {
    config.two_lock_workers_per_device =
        static_cast<int>(two_lock->integer_in("workers_per_device", config.two_lock_workers_per_device, 1, 64));
    two_lock->reject_unknown_keys();
  }
  if (auto budgeted = policy.table("budgeted")) {
    auto& rules = coordinator.budget_rules;
    rules.release_after_free_event =
        budgeted->boolean("release_after_free_event").value_or(rules.release_after_free_event);
    rules.admission_protects_lock_holder =
        budgeted->boolean("admission_protects_lock_holder").value_or(rules.admission_protects_lock_holder);
    coordinator.grant_order_is_lock_order =
        budgeted->boolean("grant_order_is_lock_order").value_or(coordinator.grant_order_is_lock_order);
    budgeted->reject_unknown_keys();
  }
  policy.reject_unknown_keys();
}

}  // namespace

void read_run_config(const ConfigTable& root, RunConfig& config) {
  if (auto run = root.table("run")) read_run_table(*run, config);
  if (auto sim = root.table("sim")) read_sim_table(*sim, config);
  if (auto gpus = root.table("gpus")) read_gpus_table(*gpus, config);
  if (auto staging = root.table("host_staging")) read_host_staging_table(*staging, config);
  if (auto workload = root.table("workload")) read_workload_table(*workload, config);
  if (auto policy = root.table("policy")) read_policy_table(*policy, config);
  // After [gpus]: a fault's device is one of them.
  config.faults = read_faults_table(root, config.gpus);
  if (root.contains("faults")) config.faults_where = root.where("faults");
}

std::string_view to_string(Groth16KeyShape shape) {
  return shape == Groth16KeyShape::porep_partition ? "porep-partition" : "synthetic-circuit";
}

RunConfig parse_run_config(std::string_view text, const std::string& source_name) {
  auto document = ConfigDocument::parse(text, source_name);
  RunConfig config;
  config.source = source_name;
  auto root = document.root();
  read_run_config(root, config);
  root.reject_unknown_keys();
  return config;
}

RunConfig load_run_config(const std::filesystem::path& path) {
  auto document = ConfigDocument::load(path);
  RunConfig config;
  config.source = path;
  auto root = document.root();
  read_run_config(root, config);
  root.reject_unknown_keys();
  return config;
}

void check_vram_cap_fits(const RunConfig& config, Bytes needed_bytes, std::string_view what) {
  if (config.vram_cap_bytes == 0 || needed_bytes <= config.vram_cap_bytes) return;
  throw ConfigError(fmt::format("{}: a cap of {} is too small: {} needs {} of device memory", config.vram_cap_where,
                                format_bytes(config.vram_cap_bytes), what, format_bytes(needed_bytes)));
}

CoordinatorSettings settings_for(const RunConfig& config, Policy policy) {
  auto settings = config.coordinator;
  settings.policy = policy;
  if (policy == Policy::two_lock) settings.workers_per_device = config.two_lock_workers_per_device;
  return settings;
}

}  // namespace stagehand
