// stagehand_make_circuit: writes a synthetic circuit (circuit.r1cs) and a witness that satisfies
// it (circuit.wtns), of any size, for benchmarking `stagehand setup` and `stagehand prove` at
// sizes circom would take long to compile. The witness is checked against every constraint
// before anything is written.
//
//   stagehand_make_circuit (--constraints N | --domain-log2 K) --out DIR [--seed S] [--bits]
//
// --domain-log2 K picks the largest N whose Groth16 domain is 2^K (N = 2^K - 5: snarkjs needs
// N + public + 1 rows).
//
// The shape, with wires laid out as circom does (0 = the constant 1, then outputs, public
// inputs, private inputs, internal signals):
//   wires 1, 2 public outputs out0, out1; 3, 4 public inputs x, y; 5, 6 private inputs s, t;
//   7 + i the chain z_i.
//   z_0 = x·s
//   for i = 1 .. N-3, by i:
//     i % 16 == 5   linear, A and B empty:  0 = -z_i + k·z_{i-1} + 3·z_{i-2} + y + k'  (5 terms)
//     i % 16 == 11  1·(z_{i-1} + 2·z_{i-2} + k·x + t) = z_i        (A = the constant, B 4 terms)
//     i % 8 == 3    (z_{i-1} + 3·y + 5·t + k)·(z_{i-2} + 2·s) = z_i  (A 4 terms, B 2 terms)
//     otherwise     z_{i-1}·z_{i-1} = z_i - k                       (the square chain)
//   with --bits, the square chain's rows with i % 4 != 1 are bit decompositions instead:
//                   z_i·z_i = z_i, z_i a random 0 or 1               (about 55% of the wires)
//   out0 = z_last·t
//   0 = -out1 + z_last + 2·x + k·y                                  (linear)
// with k, k' small constants drawn from the seed, and x, y, s, t drawn from the seed too.

#include "groth16/r1cs.hpp"
#include "groth16/witness.hpp"
#include "groth16/zkey.hpp"
#include "math/fr.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <vector>

namespace {

using stagehand::math::Fr;
namespace groth16 = stagehand::groth16;
namespace fs = std::filesystem;

constexpr std::uint32_t kOne = 0, kOut0 = 1, kOut1 = 2, kX = 3, kY = 4, kS = 5, kT = 6, kFirstInternal = 7;
constexpr std::uint32_t kOutputs = 2, kPublicInputs = 2, kPrivateInputs = 2;
constexpr std::uint64_t kPublic = kOutputs + kPublicInputs;
constexpr std::uint64_t kMinimumConstraints = 4;
constexpr std::uint64_t kMaximumLog2 = 28;  // what `stagehand setup` accepts

// SplitMix64: small, deterministic, good enough for test values.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // A nonzero constant below 2^32 (a circuit's small coefficient).
  Fr small() { return Fr::from_uint64((next() >> 32) | 1); }
  // A field element spread over the whole field.
  Fr element() {
    const Fr shift = Fr::from_uint64(1ULL << 32) * Fr::from_uint64(1ULL << 32);
    Fr value = Fr::zero();
    for (int limb = 0; limb < 4; ++limb) value = value * shift + Fr::from_uint64(next());
    return value;
  }

 private:
  std::uint64_t state_;
};

groth16::Term term(std::uint32_t wire, const Fr& coefficient) { return {wire, coefficient}; }
groth16::Term term(std::uint32_t wire) { return {wire, Fr::one()}; }

Fr evaluate(const groth16::LinearCombination& lc, const std::vector<Fr>& witness) {
  Fr sum = Fr::zero();
  for (const auto& t : lc) sum += t.coefficient * witness[t.wire];
  return sum;
}

struct Circuit {
  groth16::R1cs r1cs;
  std::vector<Fr> witness;
};

// A real circuit's witness is mostly bits and flags (range checks, decompositions): --bits makes
// one like that, so that the MSMs meet scalars of 0 and 1 in bulk.
Circuit make_circuit(std::uint64_t constraint_count, std::uint64_t seed, bool bits) {
  Random random(seed);
  Circuit circuit;
  auto& r1cs = circuit.r1cs;
  auto& w = circuit.witness;
  const std::uint64_t body = constraint_count - 3;
  const std::uint64_t wire_count = kFirstInternal + body + 1;
  r1cs.n_wires = static_cast<std::uint32_t>(wire_count);
  r1cs.n_outputs = kOutputs;
  r1cs.n_public_inputs = kPublicInputs;
  r1cs.n_private_inputs = kPrivateInputs;
  r1cs.n_labels = wire_count;
  r1cs.constraints.reserve(constraint_count);
  w.assign(wire_count, Fr::zero());
  w[kOne] = Fr::one();
  w[kX] = random.element();
  w[kY] = random.element();
  w[kS] = random.element();
  w[kT] = random.element();
  auto z = [](std::uint64_t i) { return static_cast<std::uint32_t>(kFirstInternal + i); };

  r1cs.constraints.push_back({{term(kX)}, {term(kS)}, {term(z(0))}});
  w[z(0)] = w[kX] * w[kS];
  for (std::uint64_t i = 1; i <= body; ++i) {
    const Fr k = random.small();
    groth16::Constraint c;
    if (i % 16 == 5) {
      const Fr k2 = random.small();
      c.c = {term(z(i), -Fr::one()), term(z(i - 1), k), term(z(i - 2), Fr::from_uint64(3)), term(kY), term(kOne, k2)};
      w[z(i)] = k * w[z(i - 1)] + Fr::from_uint64(3) * w[z(i - 2)] + w[kY] + k2;
    } else if (i % 16 == 11) {
      c.a = {term(kOne)};
      c.b = {term(z(i - 1)), term(z(i - 2), Fr::from_uint64(2)), term(kX, k), term(kT)};
      c.c = {term(z(i))};
      w[z(i)] = w[z(i - 1)] + Fr::from_uint64(2) * w[z(i - 2)] + k * w[kX] + w[kT];
    } else if (i % 8 == 3) {
      c.a = {term(z(i - 1)), term(kY, Fr::from_uint64(3)), term(kT, Fr::from_uint64(5)), term(kOne, k)};
      c.b = {term(z(i - 2)), term(kS, Fr::from_uint64(2))};
      c.c = {term(z(i))};
      w[z(i)] = (w[z(i - 1)] + Fr::from_uint64(3) * w[kY] + Fr::from_uint64(5) * w[kT] + k) * (w[z(i - 2)] + Fr::from_uint64(2) * w[kS]);
    } else if (bits && i % 4 != 1) {
      c.a = {term(z(i))};
      c.b = {term(z(i))};
      c.c = {term(z(i))};
      w[z(i)] = (random.next() & 1) != 0 ? Fr::one() : Fr::zero();
    } else {
      c.a = {term(z(i - 1))};
      c.b = {term(z(i - 1))};
      c.c = {term(z(i)), term(kOne, -k)};
      w[z(i)] = w[z(i - 1)] * w[z(i - 1)] + k;
    }
    r1cs.constraints.push_back(std::move(c));
  }
  const std::uint32_t last = z(body);
  r1cs.constraints.push_back({{term(last)}, {term(kT)}, {term(kOut0)}});
  w[kOut0] = w[last] * w[kT];
  const Fr k = random.small();
  r1cs.constraints.push_back({{}, {}, {term(kOut1, -Fr::one()), term(last), term(kX, Fr::from_uint64(2)), term(kY, k)}});
  w[kOut1] = w[last] + Fr::from_uint64(2) * w[kX] + k * w[kY];
  return circuit;
}

// Every constraint A·B = C on the witness; throws naming the first one that fails.
void check_witness(const Circuit& circuit) {
  const auto& constraints = circuit.r1cs.constraints;
  for (std::size_t index = 0; index < constraints.size(); ++index) {
    const auto& c = constraints[index];
    if (evaluate(c.a, circuit.witness) * evaluate(c.b, circuit.witness) != evaluate(c.c, circuit.witness)) {
      throw std::logic_error(fmt::format("internal error: the witness does not satisfy constraint {} of {}", index, constraints.size()));
    }
  }
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
  auto* constraints_option = app.add_option("--constraints", constraints, fmt::format("Number of constraints (at least {})", kMinimumConstraints));
  auto* log2_option = app.add_option("--domain-log2", domain_log2, "Instead of --constraints: the most constraints whose Groth16 domain is 2^K");
  constraints_option->excludes(log2_option);
  app.add_option("--out", out, "Directory to write circuit.r1cs and circuit.wtns into (created if missing)")->required();
  app.add_option("--seed", seed, "Seed of the constants and inputs")->capture_default_str();
  app.add_flag("--bits", bits, "Most of the square chain's rows as bit decompositions (b·b = b): a witness mostly of 0s and 1s");
  try {
    app.parse(argc, argv);
    if (!constraints && !domain_log2) throw CLI::ValidationError("one of --constraints N or --domain-log2 K is required");
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  try {
    if (domain_log2) {
      if (*domain_log2 < 3 || *domain_log2 > kMaximumLog2) {
        throw std::invalid_argument(fmt::format("--domain-log2 {}: must be between 3 and {}", *domain_log2, kMaximumLog2));
      }
      constraints = (std::uint64_t{1} << *domain_log2) - kPublic - 1;
    }
    if (*constraints < kMinimumConstraints) {
      throw std::invalid_argument(fmt::format("--constraints {}: the circuit needs at least {}", *constraints, kMinimumConstraints));
    }
    const unsigned log2 = groth16::domain_log2_for(*constraints, kPublic);
    if (log2 > kMaximumLog2) {
      throw std::invalid_argument(fmt::format("--constraints {}: needs a domain of 2^{}, more than the 2^{} `stagehand setup` accepts",
                                              *constraints, log2, kMaximumLog2));
    }
    const auto start = std::chrono::steady_clock::now();
    const auto circuit = make_circuit(*constraints, seed, bits);
    check_witness(circuit);
    const fs::path dir(out);
    fs::create_directories(dir);
    groth16::write_r1cs(dir / "circuit.r1cs", circuit.r1cs);
    groth16::write_wtns(dir / "circuit.wtns", circuit.witness);
    fmt::print(stderr,
               "stagehand_make_circuit: {} constraints, {} wires, {} public signals (2 outputs, 2 inputs), domain 2^{}; "
               "witness checked against every constraint; wrote {} and {} in {:.2f} s\n",
               circuit.r1cs.constraints.size(), circuit.r1cs.n_wires, kPublic, log2, (dir / "circuit.r1cs").string(),
               (dir / "circuit.wtns").string(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return 0;
  } catch (const std::exception& error) {
    fmt::print(stderr, "stagehand_make_circuit: error: {}\n", error.what());
    return 1;
  }
}
