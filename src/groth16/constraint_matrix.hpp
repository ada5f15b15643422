#pragma once
// The a/b/c step as a sparse matrix: a key's A and B coefficients (section 4 of the .zkey, in
// the file's order of records) regrouped by constraint into compressed rows, the groth16_abc
// kernel's matrix (device/kernel_abi.hpp, ConstraintMatrixLayout). Built once per key; the same
// bytes go to the device and to the simulator's host function.

#include "device/kernel_abi.hpp"
#include "groth16/zkey.hpp"
#include "math/fr.hpp"
#include "util/pinnable_allocator.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace stagehand::groth16 {

struct ConstraintMatrix {
  kernel::ConstraintMatrixLayout layout;  // rows = the key's domain size
  // layout.total_bytes(), written whole by the build (not zeroed first: 6.2 GiB at 2^26).
  std::vector<std::byte, PinnableAllocator<std::byte>> bytes;
};

// The matrix's layout for a key (its entry counts), without building it: what it will take.
kernel::ConstraintMatrixLayout constraint_matrix_layout(const ProvingKey& key);
kernel::ConstraintMatrixLayout constraint_matrix_layout(const bn254::ProvingKey& key);
// On up to `threads` threads (0 = every hardware thread). A BN254 key's has the same layout, its
// values BN254's Fr.
ConstraintMatrix build_constraint_matrix(const ProvingKey& key, unsigned threads = 0);
ConstraintMatrix build_constraint_matrix(const bn254::ProvingKey& key, unsigned threads = 0);

// The matrix's a/b/c step on the CPU: what groth16_abc computes (a[i] = Σ A_ik·w_k,
// b[i] = Σ B_ik·w_k, c[i] = a[i]·b[i] for every row). `threads` 0 = every hardware thread.
// The reference it is tested against is prover.hpp's evaluate_constraints, which reads the
// key's records directly. Over a chunk (below), `matrix` is the chunk's bytes in its own layout
// and first_a, first_b its first entries (its offsets count from the whole matrix's).
void evaluate_constraint_matrix(const kernel::ConstraintMatrixLayout& layout, std::span<const std::byte> matrix,
                                std::span<const math::Fr> witness, std::span<math::Fr> a, std::span<math::Fr> b,
                                std::span<math::Fr> c, unsigned threads = 0, std::uint64_t first_a = 0,
                                std::uint64_t first_b = 0);
// The same over BN254's Fr (the matrix's layout is the same for both curves).
void evaluate_constraint_matrix(const kernel::ConstraintMatrixLayout& layout, std::span<const std::byte> matrix,
                                std::span<const math::bn254::Fr> witness, std::span<math::bn254::Fr> a,
                                std::span<math::bn254::Fr> b, std::span<math::bn254::Fr> c, unsigned threads = 0,
                                std::uint64_t first_a = 0, std::uint64_t first_b = 0);

// Rows [first_row, first_row + rows) of a matrix, the unit in which a matrix too large to stay on
// the device goes up for each proof (through the stream buffers). On the device it is laid out as
// a matrix of its own (layout()), its six parts copied from the whole matrix's: the offsets of
// its rows and the one after (unchanged, so the kernel is told first_a and first_b), then its
// entries' signals and values.
struct MatrixChunk {
  std::uint64_t first_row = 0, rows = 0;
  std::uint64_t first_a = 0, entries_a = 0, first_b = 0, entries_b = 0;
  kernel::ConstraintMatrixLayout layout() const { return {rows, entries_a, entries_b}; }
  // Where each of its parts is in the whole matrix's bytes, and how many bytes: offsets_a,
  // offsets_b, signals_a, signals_b, values_a, values_b, each bound for the same part of layout().
  struct Part {
    std::uint64_t source = 0, destination = 0, bytes = 0;
  };
  std::array<Part, 6> parts(const kernel::ConstraintMatrixLayout& whole) const;
};

// The matrix cut into consecutive chunks of at most `max_bytes` each (a chunk of one row may be
// larger: a row is never cut). entries_before(row) gives the A and B entries of the rows before
// `row` (the matrix's offsets; row = rows gives the totals).
std::vector<MatrixChunk> cut_constraint_matrix(
    std::uint64_t rows, std::uint64_t max_bytes,
    const std::function<std::pair<std::uint64_t, std::uint64_t>(std::uint64_t)>& entries_before);
// The same from a built matrix's offsets.
std::vector<MatrixChunk> cut_constraint_matrix(const ConstraintMatrix& matrix, std::uint64_t max_bytes);

}  // namespace stagehand::groth16
