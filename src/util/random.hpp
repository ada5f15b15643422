#pragma once
// The one source of randomness of a simulated run (and of the unfair lock). SplitMix64: small, fast, and the same sequence on
// every platform and standard library (std::uniform_*_distribution are not).

#include <cstdint>

namespace stagehand {

class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, bound).
  std::uint64_t below(std::uint64_t bound) { return bound == 0 ? 0 : next() % bound; }
  // A factor in [1 - spread, 1 + spread].
  double jitter(double spread) { return spread == 0 ? 1.0 : 1.0 + spread * (2.0 * uniform() - 1.0); }

 private:
  std::uint64_t state_;
};

}  // namespace stagehand
