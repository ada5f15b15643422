#pragma once
// The deployment configuration (TOML): backend, devices, workers, policy and its switches,
// staging, budget, workload, trace. Every key is documented in config/default.toml; unknown keys
// and bad values are errors naming the file, line and key.

#include "coordinator/coordinator.hpp"
#include "device/fault_plan.hpp"
#include "device/kernel_abi.hpp"
#include "workloads/groth16/groth16_workload.hpp"
#include "workloads/porep/porep_workload.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace stagehand {

class ConfigTable;

enum class BackendKind { automatic, simulator, cuda };

// What `stagehand run` schedules on the simulator: PoRep-shaped partitions (synthetic sizes of
// the production prover's program), or jobs of Stagehand's own Groth16 program
// (groth16::Groth16TimingJobs, one proof of the program per job) with a key of either shape.
enum class WorkloadKind { porep, groth16 };

// The key a groth16 workload's jobs are sized by: the synthetic circuit's of its domain
// (groth16::KeySizes::synthetic, one proof per job), or a PoRep partition's (porep_as_groth16.hpp:
// each partition of a proof a job, a, b and c from the host).
enum class Groth16KeyShape { synthetic_circuit, porep_partition };
std::string_view to_string(Groth16KeyShape shape);

struct Groth16RunSettings {
  Groth16KeyShape key = Groth16KeyShape::synthetic_circuit;
  // The synthetic circuit's curve (KeySizes::curve): its launches' instances and device model costs.
  kernel::Curve curve = kernel::Curve::bls12_381;
  // The whole witness's share of full scalars, the rest 0 or 1 (Groth16TimingJobs::
  // full_scalar_share, from index 0); nullopt: the key shape's (a PoRep witness for a PoRep
  // partition's key, porep_as_groth16.hpp; every scalar full otherwise).
  std::optional<double> full_scalar_share;
  groth16::AbcStep abc_step = groth16::AbcStep::device;
  std::optional<groth16::SetPlacement> key_sets;  // nullopt: planned from the device's memory
  Bytes stream_buffer_bytes = kGiB;
  bool precompute_bases = false;  // the plan may precompute resident sets (groth16::PlacementBudget::precompute)
};

struct RunConfig {
  std::filesystem::path source;
  BackendKind backend = BackendKind::automatic;
  std::vector<Policy> policies{Policy::serial, Policy::prestage, Policy::two_lock, Policy::budgeted};
  std::filesystem::path trace_dir = "out/traces";
  // The simulator.
  std::string device_model = "h200";
  std::string device_model_where =
      "key 'sim.device_model'";  // "file:line: key 'sim.device_model'" where read from a file
  double duration_jitter = 0.0;
  bool functional = false;
  // The GPUs.
  int gpus = 1;
  Bytes vram_cap_bytes = 0;  // 0: the whole card
  // Where the cap was set ("file:line: key 'gpus.vram_cap_gib'"), for errors found when the
  // devices are opened or the work is sized; the key alone where the cap was not read from a file.
  std::string vram_cap_where = "key 'gpus.vram_cap_gib'";
  std::string gpus_where = "key 'gpus.count'";  // likewise, for the GPU count
  int two_lock_workers_per_device = 3;
  // Everything the coordinator takes; `policy` is set per run.
  CoordinatorSettings coordinator;
  // The synthetic workload that `stagehand run` schedules: its proofs, domain and host times are
  // `workload`'s for either kind ([workload]).
  WorkloadKind workload_kind = WorkloadKind::porep;
  PoRepSettings workload;
  Groth16RunSettings groth16;
  int jobs() const { return workload.partitions(); }  // a synthetic circuit's proofs have one partition each
  // [faults] (config/faults_table.hpp): injected into the devices the backend opens (none by default).
  FaultPlan faults;
  std::string faults_where = "table [faults]";  // "<file>:<line>: key 'faults'" where a file set it
};

// The most partitions (proofs x partitions_per_proof) one run may hold: every job keeps a record,
// and more than this is a mistake in the configuration, not a workload.
constexpr std::int64_t kMaxPartitionsPerRun = 100000;

// Throws ConfigError naming config.vram_cap_where when a cap is set and `needed_bytes` (a job's
// peak and everything the budget holds back) does not fit in it.
void check_vram_cap_fits(const RunConfig& config, Bytes needed_bytes, std::string_view what);

RunConfig load_run_config(const std::filesystem::path& path);
RunConfig parse_run_config(std::string_view text, const std::string& source_name);
// Reads the keys of a run configuration from `root` into `config` (fixtures embed the same keys).
void read_run_config(const ConfigTable& root, RunConfig& config);

// The coordinator's settings for one policy of the run.
CoordinatorSettings settings_for(const RunConfig& config, Policy policy);

}  // namespace stagehand
