#include "groth16/synthetic_circuit.hpp"

#include "groth16/circuit_assignment.hpp"

#include "util/random.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace stagehand::groth16 {

namespace {

constexpr std::uint32_t kOne = 0, kOut0 = 1, kOut1 = 2, kX = 3, kY = 4, kS = 5, kT = 6, kFirstInternal = 7;
constexpr std::uint32_t kOutputs = 2, kPublicInputs = 2, kPrivateInputs = 2;

// A nonzero constant below 2^32 (a circuit's small coefficient).
template <class Fr>
Fr small_constant(Random& random) {
  return Fr::from_uint64((random.next() >> 32) | 1);
}
// A field element spread over the whole field.
template <class Fr>
Fr element(Random& random) {
  const Fr shift = Fr::from_uint64(1ULL << 32) * Fr::from_uint64(1ULL << 32);
  Fr value = Fr::zero();
  for (int limb = 0; limb < 4; ++limb) value = value * shift + Fr::from_uint64(random.next());
  return value;
}

// A real circuit's witness is mostly bits and flags (range checks, decompositions): --bits makes
// one like that, so that the MSMs meet scalars of 0 and 1 in bulk.
}  // namespace

template <class Fr>
BasicSyntheticCircuit<Fr> make_synthetic_circuit(std::uint64_t constraint_count, std::uint64_t seed, bool bits) {
  if (constraint_count < kSyntheticMinimumConstraints) {
    throw std::invalid_argument(fmt::format("a synthetic circuit needs at least {} constraints, not {}",
                                            kSyntheticMinimumConstraints, constraint_count));
  }
  auto term = [](std::uint32_t wire, const Fr& coefficient = Fr::one()) { return BasicTerm<Fr>{wire, coefficient}; };
  auto small = [](Random& random) { return small_constant<Fr>(random); };
  Random random(seed);
  BasicSyntheticCircuit<Fr> circuit;
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
  w[kX] = element<Fr>(random);
  w[kY] = element<Fr>(random);
  w[kS] = element<Fr>(random);
  w[kT] = element<Fr>(random);
  auto z = [](std::uint64_t i) { return static_cast<std::uint32_t>(kFirstInternal + i); };

  r1cs.constraints.push_back({{term(kX)}, {term(kS)}, {term(z(0))}});
  w[z(0)] = w[kX] * w[kS];
  for (std::uint64_t i = 1; i <= body; ++i) {
    const Fr k = small(random);
    BasicConstraint<Fr> c;
    if (i % 16 == 5) {
      const Fr k2 = small(random);
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
      w[z(i)] = (w[z(i - 1)] + Fr::from_uint64(3) * w[kY] + Fr::from_uint64(5) * w[kT] + k) *
                (w[z(i - 2)] + Fr::from_uint64(2) * w[kS]);
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
  const Fr k = small(random);
  r1cs.constraints.push_back(
      {{}, {}, {term(kOut1, -Fr::one()), term(last), term(kX, Fr::from_uint64(2)), term(kY, k)}});
  w[kOut1] = w[last] + Fr::from_uint64(2) * w[kX] + k * w[kY];
  return circuit;
}

// Every constraint A·B = C on the witness; throws naming the first one that fails.
template <class Fr>
void check_synthetic_witness(const BasicSyntheticCircuit<Fr>& circuit) {
  const auto& constraints = circuit.r1cs.constraints;
  for (std::size_t index = 0; index < constraints.size(); ++index) {
    const auto& c = constraints[index];
    if (evaluate<Fr>(c.a, circuit.witness) * evaluate<Fr>(c.b, circuit.witness) != evaluate<Fr>(c.c, circuit.witness)) {
      throw std::logic_error(
          fmt::format("internal error: the witness does not satisfy constraint {} of {}", index, constraints.size()));
    }
  }
}

std::uint64_t synthetic_constraints_for_domain(unsigned domain_log2) {
  if (domain_log2 < 3 || domain_log2 > kMaxDomainLog2) {
    throw std::invalid_argument(
        fmt::format("a domain of 2^{}: must be between 2^3 and 2^{}", domain_log2, kMaxDomainLog2));
  }
  return (std::uint64_t{1} << domain_log2) - kSyntheticPublic - 1;
}

template BasicSyntheticCircuit<math::Fr> make_synthetic_circuit<math::Fr>(std::uint64_t, std::uint64_t, bool);
template BasicSyntheticCircuit<math::bn254::Fr> make_synthetic_circuit<math::bn254::Fr>(std::uint64_t, std::uint64_t,
                                                                                        bool);
template void check_synthetic_witness<math::Fr>(const BasicSyntheticCircuit<math::Fr>&);
template void check_synthetic_witness<math::bn254::Fr>(const BasicSyntheticCircuit<math::bn254::Fr>&);

}  // namespace stagehand::groth16
