#include "groth16/constraint_matrix.hpp"

#include "math/parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace stagehand::groth16 {
namespace {

static_assert(sizeof(math::Fr) == kernel::kFrBytes,
              "Fr must be its four Montgomery limbs, so that Fr arrays are device bytes");

template <class T>
T* at(std::span<std::byte> bytes, std::uint64_t offset) {
  return reinterpret_cast<T*>(bytes.data() + offset);
}
template <class T>
const T* at(std::span<const std::byte> bytes, std::uint64_t offset) {
  return reinterpret_cast<const T*>(bytes.data() + offset);
}

}  // namespace

namespace {

template <class Key>
kernel::ConstraintMatrixLayout layout_of(const Key& key) {
  kernel::ConstraintMatrixLayout layout{key.domain_size, 0, 0};
  for (const auto& entry : key.coefficients) (entry.matrix == 0 ? layout.entries_a : layout.entries_b) += 1;
  return layout;
}

}  // namespace

kernel::ConstraintMatrixLayout constraint_matrix_layout(const ProvingKey& key) { return layout_of(key); }
kernel::ConstraintMatrixLayout constraint_matrix_layout(const bn254::ProvingKey& key) { return layout_of(key); }

namespace {

// What one pass over a chunk of the records found: the first record outside the key, how many
// are in A, and whether each matrix's records are in order of constraint (and where they start
// and end, so that the chunks' orders can be joined).
struct ChunkSummary {
  static constexpr std::size_t kNone = ~std::size_t{0};
  std::size_t first_bad = kNone;
  std::uint64_t in_a = 0;
  bool sorted = true;
  std::array<bool, 2> any{};
  std::array<std::uint32_t, 2> first{}, last{};
};

template <class Entry>
void outside_the_key(const Entry& entry) {
  // read_zkey refuses such records; a key built in memory might not have been checked.
  throw std::invalid_argument(
      fmt::format("constraint matrix: record (matrix {}, constraint {}, signal {}) outside the key", entry.matrix,
                  entry.constraint, entry.signal));
}

// Records in any order: a counting sort by constraint on one thread (counts, their prefix sums,
// then each record at its row's next slot; records of one row keep the file's order). The values
// are copied as the 32 bytes they are, of either curve's Fr.
template <class Records>
void scatter_in_any_order(const Records& records, const kernel::ConstraintMatrixLayout& layout,
                          std::span<std::byte> bytes) {
  auto* offsets_a = at<std::uint64_t>(bytes, layout.offsets_a());
  auto* offsets_b = at<std::uint64_t>(bytes, layout.offsets_b());
  for (const auto& entry : records) ++(entry.matrix == 0 ? offsets_a : offsets_b)[entry.constraint + 1];
  for (std::uint64_t row = 0; row < layout.rows; ++row) {
    offsets_a[row + 1] += offsets_a[row];
    offsets_b[row + 1] += offsets_b[row];
  }
  std::vector<std::uint64_t> next_a(offsets_a, offsets_a + layout.rows), next_b(offsets_b, offsets_b + layout.rows);
  auto* signals_a = at<std::uint32_t>(bytes, layout.signals_a());
  auto* signals_b = at<std::uint32_t>(bytes, layout.signals_b());
  auto* values_a = at<math::Fr>(bytes, layout.values_a());
  auto* values_b = at<math::Fr>(bytes, layout.values_b());
  for (const auto& entry : records) {
    const bool in_a = entry.matrix == 0;
    const std::uint64_t slot = (in_a ? next_a : next_b)[entry.constraint]++;
    (in_a ? signals_a : signals_b)[slot] = entry.signal;
    std::memcpy(static_cast<void*>((in_a ? values_a : values_b) + slot), &entry.value, sizeof(math::Fr));
  }
}

// The records cut into chunks of about equal size, each one thread's task.
struct RecordChunks {
  std::size_t count;
  std::size_t chunk_count;
  std::size_t chunk_size;

  RecordChunks(std::size_t records, unsigned thread_count)
      : count(records),
        chunk_count(std::clamp<std::size_t>(records >> 16, 1, std::size_t{4} * thread_count)),
        chunk_size((records + chunk_count - 1) / chunk_count) {}

  std::pair<std::size_t, std::size_t> range(std::size_t chunk) const {
    const std::size_t begin = std::min(count, chunk * chunk_size);
    return std::pair{begin, std::min(count, begin + chunk_size)};
  }
};

// Each chunk's summary, one thread a chunk; throws for the first record outside the key.
template <class Key>
std::vector<ChunkSummary> summarize_chunks(const Key& key, const RecordChunks& chunks, unsigned thread_count) {
  const auto& records = key.coefficients;
  std::vector<ChunkSummary> summaries(chunks.chunk_count);
  math::detail::run_tasks(chunks.chunk_count, thread_count, [&](std::size_t chunk) {
    auto& summary = summaries[chunk];
    const auto [begin, end] = chunks.range(chunk);
    for (std::size_t i = begin; i < end; ++i) {
      const auto& entry = records[i];
      if (entry.constraint >= key.domain_size || entry.signal >= key.n_vars || entry.matrix > 1) {
        summary.first_bad = i;
        return;
      }
      const unsigned m = entry.matrix;
      summary.in_a += m == 0 ? 1 : 0;
      if (!summary.any[m]) {
        summary.any[m] = true;
        summary.first[m] = entry.constraint;
      } else if (entry.constraint < summary.last[m]) {
        summary.sorted = false;
      }
      summary.last[m] = entry.constraint;
    }
  });
  for (const auto& summary : summaries) {
    if (summary.first_bad != ChunkSummary::kNone) outside_the_key(records[summary.first_bad]);
  }
  return summaries;
}

// The chunks' summaries joined: whether each matrix is in order across the chunks too, each
// chunk's first rank in A and in B, and each matrix's record count.
struct JoinedChunks {
  bool sorted = true;
  std::vector<std::array<std::uint64_t, 2>> first_rank;
  std::array<std::uint64_t, 2> ranks{};
};

JoinedChunks join_chunks(const std::vector<ChunkSummary>& summaries, const RecordChunks& chunks) {
  JoinedChunks joined;
  joined.first_rank.resize(chunks.chunk_count);
  auto& ranks = joined.ranks;
  std::array<std::optional<std::uint32_t>, 2> last_constraint;
  for (std::size_t chunk = 0; chunk < chunks.chunk_count; ++chunk) {
    const auto& summary = summaries[chunk];
    const auto [begin, end] = chunks.range(chunk);
    joined.sorted = joined.sorted && summary.sorted;
    joined.first_rank[chunk] = ranks;
    ranks[0] += summary.in_a;
    ranks[1] += (end - begin) - summary.in_a;
    for (unsigned m = 0; m < 2; ++m) {
      if (!summary.any[m]) continue;
      if (last_constraint[m] && summary.first[m] < *last_constraint[m]) joined.sorted = false;
      last_constraint[m] = summary.last[m];
    }
  }
  return joined;
}

// Not zeroed: the records fill every entry, so only the row offsets (counts first) and the
// padding before the values start at 0. Zeroing a fresh buffer on one thread, with its page
// faults, was most of the one-thread build.
void zero_offsets_and_padding(const kernel::ConstraintMatrixLayout& layout, std::span<std::byte> bytes,
                              unsigned thread_count) {
  const std::uint64_t offset_bytes = layout.signals_a();  // both offset arrays, first in the layout
  math::detail::run_ranges(offset_bytes, thread_count, std::size_t{1} << 22, [&](std::size_t begin, std::size_t end) {
    std::memset(bytes.data() + begin, 0, end - begin);
  });
  const std::uint64_t signals_end = layout.signals_b() + 4 * layout.entries_b;  // then up to 31 bytes before the values
  std::memset(bytes.data() + signals_end, 0, layout.values_a() - signals_end);
}

// Records in order of constraint: each chunk placed on its own thread from the ranks it starts
// at, the rows' counts then summed into offsets.
template <class Records>
void scatter_in_order(const Records& records, const kernel::ConstraintMatrixLayout& layout, std::span<std::byte> bytes,
                      const RecordChunks& chunks, const JoinedChunks& joined, unsigned thread_count) {
  const std::array<std::uint64_t*, 2> offsets{at<std::uint64_t>(bytes, layout.offsets_a()),
                                              at<std::uint64_t>(bytes, layout.offsets_b())};
  const std::array<std::uint32_t*, 2> signals{at<std::uint32_t>(bytes, layout.signals_a()),
                                              at<std::uint32_t>(bytes, layout.signals_b())};
  const std::array<math::Fr*, 2> values{at<math::Fr>(bytes, layout.values_a()), at<math::Fr>(bytes, layout.values_b())};
  math::detail::run_tasks(chunks.chunk_count, thread_count, [&](std::size_t chunk) {
    auto next = joined.first_rank[chunk];
    const auto [begin, end] = chunks.range(chunk);
    for (std::size_t i = begin; i < end; ++i) {
      const auto& entry = records[i];
      const unsigned m = entry.matrix;
      const std::uint64_t slot = next[m]++;
      signals[m][slot] = entry.signal;
      std::memcpy(static_cast<void*>(values[m] + slot), &entry.value, sizeof(math::Fr));
      // A row's records may straddle two chunks: the count is shared.
      std::atomic_ref<std::uint64_t>(offsets[m][entry.constraint + 1]).fetch_add(1, std::memory_order_relaxed);
    }
  });
  for (unsigned m = 0; m < 2; ++m) {
    for (std::uint64_t row = 0; row < layout.rows; ++row) offsets[m][row + 1] += offsets[m][row];
  }
}

}  // namespace

// Setups write each matrix's records in order of constraint (Stagehand's, and snarkjs's in every
// fixture circuit's key), and then a record's place in its matrix is its rank among
// that matrix's records: every chunk of records is placed on its own thread, from the ranks its
// chunk starts at. Records in another order take the one-thread counting sort. On the H200
// machine's 16 cores (stagehand_matrix_build_bench) the threaded build of a 2^24 key's 38.8M
// records took a small fraction of the one-thread build with the buffer zeroed first, which had
// been seconds of every key's set-up (bench/RESULTS.md, "A run's first proofs", has the threaded
// build's figure).
namespace {

template <class Key>
ConstraintMatrix build_matrix(const Key& key, unsigned threads) {
  static_assert(sizeof(typename Key::Description::Fr) == kernel::kFrBytes, "the matrix's values are 32 bytes");
  const auto& records = key.coefficients;
  const unsigned thread_count = math::detail::resolve_thread_count(threads);
  const RecordChunks chunks(records.size(), thread_count);
  const auto joined = join_chunks(summarize_chunks(key, chunks, thread_count), chunks);
  ConstraintMatrix matrix;
  matrix.layout = kernel::ConstraintMatrixLayout{key.domain_size, joined.ranks[0], joined.ranks[1]};
  const auto& layout = matrix.layout;
  matrix.bytes.resize(layout.total_bytes());
  const std::span<std::byte> bytes(matrix.bytes);
  zero_offsets_and_padding(layout, bytes, thread_count);
  if (joined.sorted) {
    scatter_in_order(records, layout, bytes, chunks, joined, thread_count);
  } else {
    scatter_in_any_order(records, layout, bytes);
  }
  return matrix;
}

}  // namespace

ConstraintMatrix build_constraint_matrix(const ProvingKey& key, unsigned threads) { return build_matrix(key, threads); }
ConstraintMatrix build_constraint_matrix(const bn254::ProvingKey& key, unsigned threads) {
  return build_matrix(key, threads);
}

namespace {

// Both curves' a/b/c step: the matrix's layout is the same, its values the curve's Fr.
template <class Fr>
void evaluate_matrix(const kernel::ConstraintMatrixLayout& layout, std::span<const std::byte> matrix,
                     std::span<const Fr> witness, std::span<Fr> a, std::span<Fr> b, std::span<Fr> c, unsigned threads,
                     std::uint64_t first_a, std::uint64_t first_b) {
  static_assert(sizeof(Fr) == kernel::kFrBytes, "the matrix's values are 32-byte Montgomery Fr");
  if (matrix.size() < layout.total_bytes() || a.size() < layout.rows || b.size() < layout.rows ||
      c.size() < layout.rows) {
    throw std::invalid_argument("evaluate_constraint_matrix: a buffer is smaller than the matrix says");
  }
  const auto* offsets_a = at<std::uint64_t>(matrix, layout.offsets_a());
  const auto* offsets_b = at<std::uint64_t>(matrix, layout.offsets_b());
  const auto* signals_a = at<std::uint32_t>(matrix, layout.signals_a());
  const auto* signals_b = at<std::uint32_t>(matrix, layout.signals_b());
  const auto* values_a = at<Fr>(matrix, layout.values_a());
  const auto* values_b = at<Fr>(matrix, layout.values_b());
  auto row_sum = [&](const std::uint64_t* offsets, std::uint64_t first, std::uint64_t entries,
                     const std::uint32_t* signals, const Fr* values, std::uint64_t row) {
    Fr sum = Fr::zero();
    if (offsets[row] < first || offsets[row + 1] < offsets[row] || offsets[row + 1] - first > entries) {
      throw std::invalid_argument("evaluate_constraint_matrix: a row's entries outside the matrix");
    }
    for (std::uint64_t k = offsets[row] - first; k < offsets[row + 1] - first; ++k) {
      if (signals[k] >= witness.size())
        throw std::invalid_argument("evaluate_constraint_matrix: a signal outside the witness");
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

}  // namespace

void evaluate_constraint_matrix(const kernel::ConstraintMatrixLayout& layout, std::span<const std::byte> matrix,
                                std::span<const math::Fr> witness, std::span<math::Fr> a, std::span<math::Fr> b,
                                std::span<math::Fr> c, unsigned threads, std::uint64_t first_a, std::uint64_t first_b) {
  evaluate_matrix(layout, matrix, witness, a, b, c, threads, first_a, first_b);
}

void evaluate_constraint_matrix(const kernel::ConstraintMatrixLayout& layout, std::span<const std::byte> matrix,
                                std::span<const math::bn254::Fr> witness, std::span<math::bn254::Fr> a,
                                std::span<math::bn254::Fr> b, std::span<math::bn254::Fr> c, unsigned threads,
                                std::uint64_t first_a, std::uint64_t first_b) {
  evaluate_matrix(layout, matrix, witness, a, b, c, threads, first_a, first_b);
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

std::vector<MatrixChunk> cut_constraint_matrix(
    std::uint64_t rows, std::uint64_t max_bytes,
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
  return cut_constraint_matrix(matrix.layout.rows, max_bytes, [&](std::uint64_t row) {
    return std::pair{offsets_a[row], offsets_b[row]};
  });
}

}  // namespace stagehand::groth16
