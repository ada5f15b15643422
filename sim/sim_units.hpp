#pragma once
// Unit conversions the simulator's cost formulas share.

#include "device/types.hpp"

#include <cmath>

namespace stagehand::sim {

inline double gib(Bytes bytes) { return static_cast<double>(bytes) / static_cast<double>(kGiB); }
inline Nanoseconds milliseconds(double ms) { return static_cast<Nanoseconds>(std::llround(ms * 1e6)); }
inline double bytes_per_ns(double gbps) { return gbps; }  // 1 GB/s = 1e9 B/s = 1 B/ns

}  // namespace stagehand::sim
