#pragma once
// A picture of a trace: one row per stream and worker, spans coloured by what they are, over a
// time axis. For a glance at a run (README, reports) where the Perfetto trace is too much.

#include "trace/trace.hpp"

#include <filesystem>
#include <string>

namespace stagehand {

// Writes an SVG of the trace's spans between `from_ns` and `to_ns` (to_ns <= from_ns: all of it).
// Throws std::runtime_error naming the path when it cannot write.
void write_svg_timeline(const Trace& trace, const std::filesystem::path& path, const std::string& title,
                        Nanoseconds from_ns = 0, Nanoseconds to_ns = 0);

}  // namespace stagehand
