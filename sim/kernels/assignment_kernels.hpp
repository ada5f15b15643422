#pragma once
// The kernels of the assignment program (src/workloads/assignment/) that the Groth16 program does
// not use, as host functions for the functional simulator over the CPU reference of src/math, in
// device/kernel_abi.hpp's conventions:
//   ntt_domain_init       arguments [log_size, ω w0..w3, g w0..w3], writes [domain]: the simulator's
//                         domain is its arguments (kAssignmentDomainBytes, which the device tells
//                         as the kernel's scratch size), the transforms' tables are built by the
//                         functions that read it (once per domain, kept).
//   h_polynomial_classic  arguments [log_size], reads [domain], writes [a, b, c]: bellperson's H
//                         coefficients (math::h_coefficients_classic on the domain's ω and g) in a.
//   h_classic_product     arguments [log_size], reads [domain], writes [a, b]: its first half
//                         (math::h_classic_product), A·B on the coset in a.
//   h_classic_finish      arguments [log_size], reads [domain], writes [a, c]: its second half
//                         (math::h_classic_finish), the H coefficients in a.
// register_functional_kernels registers them with the others, so that every functional simulator has them.

#include "sim/sim_system.hpp"

#include <cstdint>

namespace stagehand::sim {

// The bytes the simulator's ntt_domain_init writes: log_size as a u64, then ω and g (32 bytes each).
inline constexpr std::uint64_t kAssignmentDomainBytes = 8 + 2 * 32;

void register_assignment_kernels(SimSystem& system);

}  // namespace stagehand::sim
