#pragma once
// The a/b/c step as a sparse matrix: a key's A and B coefficients (section 4 of the .zkey, in
// the file's order of records) regrouped by constraint into compressed rows, the groth16_abc
// kernel's matrix (device/kernel_abi.hpp, ConstraintMatrixLayout). Built once per key; the same
// bytes go to the device and to the simulator's host function.

#include "device/kernel_abi.hpp"
#include "groth16/zkey.hpp"
#include "math/fr.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace stagehand::groth16 {

struct ConstraintMatrix {
  kernel::ConstraintMatrixLayout layout;  // rows = the key's domain size
  std::vector<std::byte> bytes;           // layout.total_bytes()
};

// The matrix's layout for a key (its entry counts), without building it: what it will take.
kernel::ConstraintMatrixLayout constraint_matrix_layout(const ProvingKey& key);
ConstraintMatrix build_constraint_matrix(const ProvingKey& key);

// The matrix's a/b/c step on the CPU: what groth16_abc computes (a[i] = Σ A_ik·w_k,
// b[i] = Σ B_ik·w_k, c[i] = a[i]·b[i] for every row). `threads` 0 = every hardware thread.
// The reference it is tested against is prover.hpp's evaluate_constraints, which reads the
// key's records directly.
void evaluate_constraint_matrix(const kernel::ConstraintMatrixLayout& layout, std::span<const std::byte> matrix,
                                std::span<const math::Fr> witness, std::span<math::Fr> a, std::span<math::Fr> b,
                                std::span<math::Fr> c, unsigned threads = 0);

}  // namespace stagehand::groth16
