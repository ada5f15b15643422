#pragma once
// Pictures of traces, for a glance at a run (README, reports) where the Perfetto trace is too much.
//
// A picture stacks lanes (one per policy, or one fixture) on a common time axis. Each lane shows,
// per GPU, the compute engine (kernels coloured by kind), the copy engines (pinned and pageable
// copies in different colours), the PCIe link's rate in each direction, and the device memory
// over time: held by the process, in use, reserved in the VRAM budget, against the card's
// capacity, with every out-of-memory error marked where it happened. Everything is drawn from the
// trace's own events (spans, instants, "VRAM ..." counters), so any run that writes a trace can
// be drawn, and the picture carries data attributes (lane names, peaks, the cap, OOM marks) that
// tests read back.

#include "trace/trace.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace stagehand {

struct PictureLane {
  std::string name;     // the policy or fixture
  std::string figures;  // its headline figures, shown beside the name
  const Trace* trace = nullptr;
};

struct PictureOptions {
  // Also one row per coordinator track (workers, their side rows) and the blocking host calls.
  bool worker_rows = false;
  // Also one row per job ("proof 3", "partition 3") with its phases: prepare, pre-stage or
  // upload, waiting for the lock, its kernels, the host's work after the GPU.
  bool job_rows = false;
  std::string job_word = "partition";
  // The time window; to_ns <= from_ns: from 0 to the end of the longest lane.
  Nanoseconds from_ns = 0;
  Nanoseconds to_ns = 0;
};

// Writes the SVG, creating parent folders. Throws std::runtime_error naming the path when it
// cannot write.
void write_svg_picture(const std::vector<PictureLane>& lanes, const std::filesystem::path& path,
                       const std::string& title, const PictureOptions& options = {});
std::string svg_picture(const std::vector<PictureLane>& lanes, const std::string& title,
                        const PictureOptions& options = {});

// One trace on its own, with its worker rows: the per-policy and per-fixture pictures.
void write_svg_timeline(const Trace& trace, const std::filesystem::path& path, const std::string& title,
                        Nanoseconds from_ns = 0, Nanoseconds to_ns = 0);

}  // namespace stagehand
