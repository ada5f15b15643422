#include "groth16/constraint_matrix.hpp"

#include "math/parallel.hpp"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

namespace stagehand::groth16 {
namespace {

static_assert(sizeof(math::Fr) == kernel::kFrBytes, "Fr must be its four Montgomery limbs, so that Fr arrays are device bytes");

template <class T>
T* at(std::vector<std::byte>& bytes, std::uint64_t offset) {
  return reinterpret_cast<T*>(bytes.data() + offset);
}
template <class T>
const T* at(std::span<const std::byte> bytes, std::uint64_t offset) {
  return reinterpret_cast<const T*>(bytes.data() + offset);
}

}  // namespace

kernel::ConstraintMatrixLayout constraint_matrix_layout(const ProvingKey& key) {
  kernel::ConstraintMatrixLayout layout{key.domain_size, 0, 0};
  for (const auto& entry : key.coefficients) (entry.matrix == 0 ? layout.entries_a : layout.entries_b) += 1;
  return layout;
}

ConstraintMatrix build_constraint_matrix(const ProvingKey& key) {
  for (const auto& entry : key.coefficients) {
    if (entry.constraint >= key.domain_size || entry.signal >= key.n_vars || entry.matrix > 1) {
      // read_zkey refuses such records; a key built in memory might not have been checked.
      throw std::invalid_argument(fmt::format("constraint matrix: record (matrix {}, constraint {}, signal {}) outside the key",
                                              entry.matrix, entry.constraint, entry.signal));
    }
  }
  ConstraintMatrix matrix;
  matrix.layout = constraint_matrix_layout(key);
  const auto& layout = matrix.layout;
  matrix.bytes.assign(layout.total_bytes(), std::byte{0});
  auto* offsets_a = at<std::uint64_t>(matrix.bytes, layout.offsets_a());
  auto* offsets_b = at<std::uint64_t>(matrix.bytes, layout.offsets_b());
  // A counting sort by constraint: counts, their prefix sums, then each record at its row's next
  // slot (records of one row keep the file's order).
  for (const auto& entry : key.coefficients) ++(entry.matrix == 0 ? offsets_a : offsets_b)[entry.constraint + 1];
  for (std::uint64_t row = 0; row < layout.rows; ++row) {
    offsets_a[row + 1] += offsets_a[row];
    offsets_b[row + 1] += offsets_b[row];
  }
  std::vector<std::uint64_t> next_a(offsets_a, offsets_a + layout.rows), next_b(offsets_b, offsets_b + layout.rows);
  auto* signals_a = at<std::uint32_t>(matrix.bytes, layout.signals_a());
  auto* signals_b = at<std::uint32_t>(matrix.bytes, layout.signals_b());
  auto* values_a = at<math::Fr>(matrix.bytes, layout.values_a());
  auto* values_b = at<math::Fr>(matrix.bytes, layout.values_b());
  for (const auto& entry : key.coefficients) {
    const bool in_a = entry.matrix == 0;
    const std::uint64_t slot = (in_a ? next_a : next_b)[entry.constraint]++;
    (in_a ? signals_a : signals_b)[slot] = entry.signal;
    std::memcpy(static_cast<void*>((in_a ? values_a : values_b) + slot), &entry.value, sizeof(math::Fr));
  }
  return matrix;
}

void evaluate_constraint_matrix(const kernel::ConstraintMatrixLayout& layout, std::span<const std::byte> matrix,
                                std::span<const math::Fr> witness, std::span<math::Fr> a, std::span<math::Fr> b,
                                std::span<math::Fr> c, unsigned threads, std::uint64_t first_a, std::uint64_t first_b) {
  if (matrix.size() < layout.total_bytes() || a.size() < layout.rows || b.size() < layout.rows || c.size() < layout.rows) {
    throw std::invalid_argument("evaluate_constraint_matrix: a buffer is smaller than the matrix says");
  }
  const auto* offsets_a = at<std::uint64_t>(matrix, layout.offsets_a());
  const auto* offsets_b = at<std::uint64_t>(matrix, layout.offsets_b());
  const auto* signals_a = at<std::uint32_t>(matrix, layout.signals_a());
  const auto* signals_b = at<std::uint32_t>(matrix, layout.signals_b());
  const auto* values_a = at<math::Fr>(matrix, layout.values_a());
  const auto* values_b = at<math::Fr>(matrix, layout.values_b());
  auto row_sum = [&](const std::uint64_t* offsets, std::uint64_t first, std::uint64_t entries, const std::uint32_t* signals,
                     const math::Fr* values, std::uint64_t row) {
    math::Fr sum = math::Fr::zero();
    if (offsets[row] < first || offsets[row + 1] < offsets[row] || offsets[row + 1] - first > entries) {
      throw std::invalid_argument("evaluate_constraint_matrix: a row's entries outside the matrix");
    }
    for (std::uint64_t k = offsets[row] - first; k < offsets[row + 1] - first; ++k) {
      if (signals[k] >= witness.size()) throw std::invalid_argument("evaluate_constraint_matrix: a signal outside the witness");
      sum += values[k] * witness[signals[k]];
    }
    return sum;
  };
  math::detail::run_ranges(layout.rows, threads, 1 << 14, [&](std::size_t begin, std::size_t end) {
    for (std::size_t row = begin; row < end; ++row) {
      a[row] = row_sum(offsets_a, first_a, layout.entries_a, signals_a, values_a, row);
      b[row] = row_sum(offsets_b, first_b, layout.entries_b, signals_b, values_b, row);
      c[row] = a[row] * b[row];
    }
  });
}

std::array<MatrixChunk::Part, 6> MatrixChunk::parts(const kernel::ConstraintMatrixLayout& whole) const {
  const auto own = layout();
  return {{{whole.offsets_a() + 8 * first_row, own.offsets_a(), 8 * (rows + 1)},
           {whole.offsets_b() + 8 * first_row, own.offsets_b(), 8 * (rows + 1)},
           {whole.signals_a() + 4 * first_a, own.signals_a(), 4 * entries_a},
           {whole.signals_b() + 4 * first_b, own.signals_b(), 4 * entries_b},
           {whole.values_a() + kernel::kFrBytes * first_a, own.values_a(), kernel::kFrBytes * entries_a},
           {whole.values_b() + kernel::kFrBytes * first_b, own.values_b(), kernel::kFrBytes * entries_b}}};
}

std::vector<MatrixChunk> cut_constraint_matrix(std::uint64_t rows, std::uint64_t max_bytes,
                                               const std::function<std::pair<std::uint64_t, std::uint64_t>(std::uint64_t)>& entries_before) {
  std::vector<MatrixChunk> chunks;
  auto chunk_of = [&](std::uint64_t first, std::uint64_t end) {
    const auto [first_a, first_b] = entries_before(first);
    const auto [end_a, end_b] = entries_before(end);
    return MatrixChunk{first, end - first, first_a, end_a - first_a, first_b, end_b - first_b};
  };
  for (std::uint64_t first = 0; first < rows;) {
    // The most rows from `first` whose chunk fits (at least one): a binary search, since a
    // chunk's bytes grow with its rows.
    std::uint64_t low = first + 1, high = rows;
    while (low < high) {
      const std::uint64_t middle = low + (high - low + 1) / 2;
      if (chunk_of(first, middle).layout().total_bytes() <= max_bytes) {
        low = middle;
      } else {
        high = middle - 1;
      }
    }
    chunks.push_back(chunk_of(first, low));
    first = low;
  }
  return chunks;
}

std::vector<MatrixChunk> cut_constraint_matrix(const ConstraintMatrix& matrix, std::uint64_t max_bytes) {
  const std::span<const std::byte> bytes(matrix.bytes);
  const auto* offsets_a = at<std::uint64_t>(bytes, matrix.layout.offsets_a());
  const auto* offsets_b = at<std::uint64_t>(bytes, matrix.layout.offsets_b());
  return cut_constraint_matrix(matrix.layout.rows, max_bytes,
                               [&](std::uint64_t row) { return std::pair{offsets_a[row], offsets_b[row]}; });
}

}  // namespace stagehand::groth16
