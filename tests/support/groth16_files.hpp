#pragma once
// What the Groth16 input tests share (tests/groth16's groth16_readers, groth16_reader_limits,
// groth16_proving and groth16_checks tests): a small circuit, its key, witness and constraint
// system on disk, byte-level edits of the container files, and proofs of jobs through the
// coordinator on the functional simulator.

#include <boost/test/unit_test.hpp>

#include "support/input_errors.hpp"

#include "support/multiplier_circuit.hpp"
#include "coordinator/coordinator.hpp"
#include "support/functional_groth16_device.hpp"
#include "support/functional_run.hpp"
#include "workloads/groth16/groth16_workload.hpp"
#include "groth16/binfile.hpp"
#include "groth16/encoding.hpp"
#include "groth16/errors.hpp"
#include "groth16/json.hpp"
#include "groth16/constraint_matrix.hpp"
#include "groth16/curve.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "groth16/synthetic_circuit.hpp"
#include "groth16/verify.hpp"
#include "groth16/witness.hpp"
#include "groth16/zkey.hpp"
#include "sim/device_model.hpp"
#include "sim/kernels/groth16_kernels.hpp"
#include "sim/run.hpp"
#include "sim/sim_device.hpp"
#include "sim/sim_system.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <cstring>
#include <optional>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace stagehand::testing {

using namespace stagehand::groth16;
using math::Fr;
namespace fs = std::filesystem;

// The tests' small circuit (out = x·y, t = x + 3y) and an empty row.
inline R1cs small_circuit() {
  R1cs r1cs = multiplier_circuit();
  r1cs.constraints.push_back({{}, {}, {}});  // an empty row
  return r1cs;
}

inline std::vector<Fr> small_witness() {
  const Fr x = Fr::from_uint64(6), y = Fr::from_uint64(7);
  return {Fr::one(), x * y, x, y, x + Fr::from_uint64(3) * y};
}

struct Files {
  fs::path dir;
  fs::path zkey, wtns, r1cs;
  ProvingKey key;
  Files() {
    dir = fs::temp_directory_path() / ("stagehand_groth16_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    zkey = dir / "small.zkey";
    wtns = dir / "small.wtns";
    r1cs = dir / "small.r1cs";
    write_r1cs(r1cs, small_circuit());
    SetupOptions options;
    options.seed = 42;
    options.thread_count = 2;
    key = setup_from_r1cs(read_r1cs(r1cs), options);
    write_zkey(zkey, key);
    write_wtns(wtns, small_witness());
  }
  ~Files() { fs::remove_all(dir); }
};

inline std::vector<std::uint8_t> load(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}
inline void save(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}
// The offset of section `id`'s data in a container file.
inline std::size_t section_offset(const std::vector<std::uint8_t>& bytes, std::uint32_t id) {
  std::uint32_t count;
  std::memcpy(&count, bytes.data() + 8, 4);
  std::size_t offset = 12;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t section;
    std::uint64_t size;
    std::memcpy(&section, bytes.data() + offset, 4);
    std::memcpy(&size, bytes.data() + offset + 4, 8);
    if (section == id) return offset + 12;
    offset += 12 + size;
  }
  throw std::runtime_error("no such section");
}
inline void put_u32(std::vector<std::uint8_t>& bytes, std::size_t offset, std::uint32_t value) {
  std::memcpy(bytes.data() + offset, &value, 4);
}

// Proofs of `jobs` through the coordinator on a functional simulated H200 under `policy`; the
// report, and each job's proof (absent where the job failed).
struct CoordinatedProofs {
  RunReport report;
  std::vector<std::optional<Proof>> proofs;
  std::vector<std::vector<Fr>> public_signals;
  Bytes memory_left = 0;
  std::size_t most_operations_queued = 0;  // on one stream at once
};

inline CoordinatedProofs prove_through_coordinator(const ProvingKey& key, const fs::path& zkey_path,
                                                   std::vector<ProofJob> jobs, Policy policy, ProofChecks checks = {},
                                                   AbcStep abc_step = AbcStep::device, KeyPlacement placement = {}) {
  CoordinatedProofs result;
  result.proofs.resize(jobs.size());
  result.public_signals.resize(jobs.size());
  testing::FunctionalGroth16Device h200;
  auto& [system, device] = h200;
  HostWork host_work(0);
  Groth16Workload workload(
      key, zkey_path, std::move(jobs), host_work, 2,
      [&](int job, const Proof& proof, const std::vector<Fr>& public_signals) {
        result.proofs.at(static_cast<std::size_t>(job)) = proof;
        result.public_signals.at(static_cast<std::size_t>(job)) = public_signals;
      },
      checks, abc_step, placement);
  CoordinatorSettings settings;
  settings.policy = policy;
  result.report = testing::run_functional(system, device, settings, workload);
  result.memory_left = device.memory_info().total_bytes - device.memory_info().free_bytes;
  result.most_operations_queued = device.most_operations_queued();
  return result;
}

// Every job completed, nothing ran out of memory or was left on the device, and each proof is the
// CPU prover's for the job's randomness.
inline void check_matches_cpu_prover(const CoordinatedProofs& result, const std::vector<ProofJob>& jobs,
                                     const ProvingKey& key, const std::vector<Fr>& witness) {
  BOOST_CHECK_EQUAL(result.report.partitions_completed, static_cast<int>(jobs.size()));
  BOOST_CHECK_EQUAL(result.report.oom_count, 0u);
  BOOST_CHECK_EQUAL(result.memory_left, 0u);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto expected = prove_on_cpu(key, witness, jobs[i].randomness, 2);
    BOOST_REQUIRE(result.proofs[i].has_value());
    const auto& proof = *result.proofs[i];
    BOOST_CHECK(proof.a == expected.a);
    BOOST_CHECK(proof.b == expected.b);
    BOOST_CHECK(proof.c == expected.c);
  }
}

}  // namespace stagehand::testing
