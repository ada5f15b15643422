// stagehand_make_circuit: writes a synthetic circuit (circuit.r1cs) and a witness that satisfies
// it (circuit.wtns), of any size, for benchmarking `stagehand setup` and `stagehand prove` at
// sizes circom would take long to compile. The witness is checked against every constraint
// before anything is written.
//
//   stagehand_make_circuit (--constraints N | --domain-log2 K) --out DIR [--seed S] [--bits]
//                          [--curve bls12_381|bn254]
//
// --domain-log2 K picks the largest N whose Groth16 domain is 2^K (N = 2^K - 5: snarkjs needs
// N + public + 1 rows).
//
// The circuit's shape: groth16/synthetic_circuit.hpp. --curve bn254 writes it over BN254's scalar
// field (circom's default prime), for `stagehand setup` and `prove` of bn128 keys.

#include "groth16/synthetic_circuit.hpp"
#include "groth16/witness.hpp"
#include "groth16/zkey.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace {

namespace groth16 = stagehand::groth16;
namespace math = stagehand::math;
namespace fs = std::filesystem;

// Makes, checks and writes the circuit over Fr; its wire count.
template <class Fr>
std::uint32_t write_circuit(std::uint64_t constraints, std::uint64_t seed, bool bits, const fs::path& dir) {
  const auto circuit = groth16::make_synthetic_circuit<Fr>(constraints, seed, bits);
  groth16::check_synthetic_witness(circuit);
  fs::create_directories(dir);
  if constexpr (std::is_same_v<Fr, math::bn254::Fr>) {
    groth16::bn254::write_r1cs(dir / "circuit.r1cs", circuit.r1cs);
    groth16::bn254::write_wtns(dir / "circuit.wtns", circuit.witness);
  } else {
    groth16::write_r1cs(dir / "circuit.r1cs", circuit.r1cs);
    groth16::write_wtns(dir / "circuit.wtns", circuit.witness);
  }
  return circuit.r1cs.n_wires;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes a synthetic circuit (DIR/circuit.r1cs) and a witness that satisfies it (DIR/circuit.wtns)",
               "stagehand_make_circuit"};
  std::optional<std::uint64_t> constraints;
  std::optional<unsigned> domain_log2;
  std::string out;
  std::uint64_t seed = 1;
  bool bits = false;
  std::string curve = "bls12_381";
  auto* constraints_option =
      app.add_option("--constraints", constraints,
                     fmt::format("Number of constraints (at least {})", groth16::kSyntheticMinimumConstraints));
  auto* log2_option = app.add_option("--domain-log2", domain_log2,
                                     "Instead of --constraints: the most constraints whose Groth16 domain is 2^K");
  constraints_option->excludes(log2_option);
  app.add_option("--out", out, "Directory to write circuit.r1cs and circuit.wtns into (created if missing)")
      ->required();
  app.add_option("--seed", seed, "Seed of the constants and inputs")->capture_default_str();
  app.add_flag("--bits", bits,
               "Most of the square chain's rows as bit decompositions (b·b = b): a witness mostly of 0s and 1s");
  app.add_option("--curve", curve, "The scalar field: BLS12-381's, or BN254's (circom's default prime, bn128)")
      ->capture_default_str()
      ->check(CLI::IsMember({"bls12_381", "bn254"}));
  try {
    app.parse(argc, argv);
    if (!constraints && !domain_log2)
      throw CLI::ValidationError("one of --constraints N or --domain-log2 K is required");
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  try {
    if (domain_log2) {
      constraints = groth16::synthetic_constraints_for_domain(*domain_log2);
    }
    if (*constraints < groth16::kSyntheticMinimumConstraints) {
      throw std::invalid_argument(fmt::format("--constraints {}: the circuit needs at least {}", *constraints,
                                              groth16::kSyntheticMinimumConstraints));
    }
    const unsigned log2 = groth16::domain_log2_for(*constraints, groth16::kSyntheticPublic);
    if (log2 > groth16::kMaxDomainLog2) {
      throw std::invalid_argument(
          fmt::format("--constraints {}: needs a domain of 2^{}, more than the 2^{} `stagehand setup` accepts",
                      *constraints, log2, groth16::kMaxDomainLog2));
    }
    const auto start = std::chrono::steady_clock::now();
    const fs::path dir(out);
    const std::uint32_t wires = curve == "bn254" ? write_circuit<math::bn254::Fr>(*constraints, seed, bits, dir)
                                                 : write_circuit<math::Fr>(*constraints, seed, bits, dir);
    fmt::print(
        stderr,
        "stagehand_make_circuit: {} constraints over {}, {} wires, {} public signals (2 outputs, 2 inputs), domain "
        "2^{}; witness checked against every constraint; wrote {} and {} in {:.2f} s\n",
        *constraints, curve, wires, groth16::kSyntheticPublic, log2, (dir / "circuit.r1cs").string(),
        (dir / "circuit.wtns").string(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return 0;
  } catch (const std::exception& error) {
    fmt::print(stderr, "stagehand_make_circuit: error: {}\n", error.what());
    return 1;
  }
}
