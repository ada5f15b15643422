#pragma once
// Fixed-base scalar multiplication by 8-bit windows, for the test-only setup: a table of the
// multiples table[256·w + d] = d·2^(8w)·G (w < 32, d < 256; d = 0 is the point at infinity), so
// that s·G = Σ_w table[256·w + byte_w(s)] for the canonical little-endian bytes of s: 32 additions
// and no doubling. The CPU setup (setup.cpp) multiplies with it; the device setup
// (device_setup.hpp) uploads the same table, encoded, for the setup_fixed_base kernels.

#include "math/curve.hpp"
#include "math/fr.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace stagehand::groth16 {

inline constexpr std::size_t kFixedBaseWindows = 32;  // 32 bytes cover every Fr of both curves (< 2^255)
inline constexpr std::size_t kFixedBaseDigits = 256;
inline constexpr std::size_t kFixedBaseEntries = kFixedBaseWindows * kFixedBaseDigits;

template <class Curve>
class FixedBase {
 public:
  using Affine = math::AffinePoint<Curve>;
  using Projective = math::ProjectivePoint<Curve>;

  explicit FixedBase(const Affine& base) {
    std::vector<Projective> projective(kFixedBaseEntries);
    Projective window_base = Projective::from_affine(base);
    for (std::size_t w = 0; w < kFixedBaseWindows; ++w) {
      Projective sum = Projective::identity();
      for (std::size_t d = 0; d < kFixedBaseDigits; ++d) {
        projective[w * kFixedBaseDigits + d] = sum;
        sum = sum + window_base;
      }
      window_base = sum;  // 256·2^(8w)·G
    }
    table_.resize(projective.size());
    math::batch_to_affine<Curve>(projective, table_);
  }

  Projective multiply(const typename Curve::ScalarField& scalar) const {
    const auto bytes = scalar.to_canonical_bytes();
    Projective sum = Projective::identity();
    for (std::size_t w = 0; w < kFixedBaseWindows; ++w) {
      if (bytes[w] != 0) sum = sum + table_[w * kFixedBaseDigits + bytes[w]];
    }
    return sum;
  }

  // Entry 256·w + d is d·2^(8w)·G.
  std::span<const Affine> table() const { return table_; }

 private:
  std::vector<Affine> table_;
};

}  // namespace stagehand::groth16
