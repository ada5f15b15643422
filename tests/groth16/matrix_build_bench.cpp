// How long build_constraint_matrix takes for a synthetic circuit's key of domain 2^K (the key's
// set-up on each run of `stagehand prove` and each key load of an engine builds it once):
//   stagehand_matrix_build_bench K [threads]    median of three builds, with the matrix's size
#include "groth16/constraint_matrix.hpp"
#include "groth16/setup.hpp"
#include "groth16/synthetic_circuit.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace stagehand::groth16;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s K [threads]\n", argv[0]);
    return 2;
  }
  const auto log2 = static_cast<unsigned>(std::atoi(argv[1]));
  const auto threads = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 0u;
  const auto circuit = make_synthetic_circuit(synthetic_constraints_for_domain(log2), 1, false);
  ProvingKey key;
  key.n_vars = circuit.r1cs.n_wires;
  key.n_public = circuit.r1cs.n_public();
  key.domain_log2 = log2;
  key.domain_size = 1u << log2;
  key.coefficients = constraint_coefficients(circuit.r1cs);
  std::vector<double> seconds;
  std::size_t bytes = 0;
  for (int round = 0; round < 3; ++round) {
    const auto start = std::chrono::steady_clock::now();
    const auto matrix = build_constraint_matrix(key, threads);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    bytes = matrix.bytes.size();
  }
  std::sort(seconds.begin(), seconds.end());
  std::printf("2^%u: %zu records, matrix %.2f GiB, built in %.3f s (median of 3; %.3f-%.3f)\n", log2,
              key.coefficients.size(), static_cast<double>(bytes) / (1u << 30), seconds[1], seconds[0], seconds[2]);
  return 0;
}
