#pragma once
// A proof batch's trace as files: the Chrome/Perfetto trace and its picture, one row per worker
// and one per proof with its phases (so that the phase that bounds a proof shows), the lane named
// by the run's policy with its headline figures. The engine's traced batches and `stagehand prove
// --trace` write the same files from here; neither formats a picture itself.

#include "coordinator/coordinator.hpp"
#include "trace/trace.hpp"

#include <filesystem>
#include <string>

namespace stagehand::proving {

struct BatchTraceFiles {
  std::filesystem::path trace;    // the Chrome/Perfetto JSON
  std::filesystem::path picture;  // the SVG
  // The picture spans the trace's own events (a batch of a long-lived engine, whose device clocks
  // count from the engine's start), not 0 to the end.
  bool own_window = false;
};

// Throws std::runtime_error naming the file that cannot be written; parent folders are created.
void write_batch_trace(const Trace& trace, const RunReport& report, const BatchTraceFiles& files,
                       const std::string& title);

}  // namespace stagehand::proving
