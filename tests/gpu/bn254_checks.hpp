// The BN254 kernels' GPU checks against the CPU reference (src/math's bn254 namespace), for
// stagehand_kernel_check's bn254-* parts (check_main.cpp). Every kernel runs through the launcher
// table as the launch of its BN254 instance (KernelLaunch::curve = bn254), with every output
// poisoned before the run and compared whole; each check prints one "ok"/"FAIL" line.
#pragma once

#include <cstdint>
#include <iosfwd>

#include "check_support.hpp"

namespace stagehand::cuda::bn254_checks {

using check_support::Result;

// bn254-ntt: the four transforms on the snarkjs and classic domains (the domain built by
// ntt_domain_init's launcher), each variant of ntt<Bn254Curve> and the launcher's, at 2^log_size;
// the device's snarkjs roots equal math::bn254::Domain::snarkjs's.
Result check_ntt(std::ostream& out, unsigned log_size, std::uint64_t seed);

// bn254-h: h_pointwise with a factor, both H forms (h_polynomial_snarkjs/_classic), and the Groth16
// program's H step (groth16_h_evaluate on a, b, c, then groth16_h_combine) at 2^log_size.
Result check_h(std::ostream& out, unsigned log_size, std::uint64_t seed);

// bn254-msm-g1: msm_g1 with canonical and Montgomery scalars (window sums combined on the device),
// groth16_msm_g1, and from 2^8 the streamed (groth16_msm_g1_batch/_reduce) and precomputed
// (groth16_precompute_g1, groth16_msm_g1_precomputed) forms, at 2^log_size points with zero scalars,
// points at infinity, repeated and opposite points, r - 1, one and a heavy bucket among them.
Result check_msm_g1(std::ostream& out, unsigned log_size, std::uint64_t seed);

// bn254-msm-g2: groth16_msm_g2 and from 2^8 its streamed and precomputed forms, the same inputs over G2.
Result check_msm_g2(std::ostream& out, unsigned log_size, std::uint64_t seed);

// bn254-abc: groth16_abc over a random matrix of `rows` rows (empty rows among them) against the
// rows summed on the CPU.
Result check_abc(std::ostream& out, std::uint64_t rows, std::uint64_t seed);

// bn254-setup: setup_fixed_base_g1/_g2 over 2^log_size scalars (zero and r - 1 among them) and a
// table of groth16::FixedBase's (the CPU setup's), against its own multiplication, byte for byte.
Result check_fixed_base(std::ostream& out, unsigned log_size, std::uint64_t seed);

// bn254-wrong-curve: CudaDevice refuses a BN254 launch of a kernel with no BN254 instance (the
// partition program's ntt) and names both; the registry has BLS12-381's instance of it, and the
// BN254 instance of every core, Groth16 and setup kernel.
Result check_wrong_curve(std::ostream& out);

}  // namespace stagehand::cuda::bn254_checks
