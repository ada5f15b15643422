#pragma once
// What one lane of a run's picture shows, gathered from its trace: per GPU its rows of boxes (the
// compute engine, the copies, the host calls, each worker), its memory counters, copies and
// out-of-memory marks, and per job its boxes. svg_timeline.cpp draws it.

#include "trace/svg_timeline.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace stagehand::picture {

struct Style {
  const char* colour;
  const char* legend;
};

inline constexpr Style kPinned{"#59a14f", "copy, pinned host memory"};
inline constexpr Style kPageable{"#e15759", "copy, pageable host memory"};
inline constexpr Style kHostCall{"#d4a6c8", "blocking host call (pinning, cudaFree, pageable copy)"};
inline constexpr Style kProgram{"#eadcf0", "compute lock held (the job's kernels on it)"};

// ---- What a lane shows, gathered from its trace ----

struct Box {
  Nanoseconds start_ns;
  Nanoseconds end_ns;
  Style style;
  std::string title;
  bool background = false;  // drawn under the row's other boxes
};

struct Row {
  std::string label;
  std::string kind;  // compute, copy-htod, copy-dtoh, worker, host-calls, job
  std::vector<Box> boxes;
  std::vector<std::pair<Nanoseconds, std::string>> oom_marks;
};

struct Step {
  Nanoseconds at_ns;
  std::int64_t bytes;
};

struct Copy {
  Nanoseconds start_ns;
  Nanoseconds end_ns;
  double bytes;
};

struct Oom {
  Nanoseconds at_ns;
  double requested_bytes;
  std::string detail;
};

struct GpuView {
  std::string model;
  Row compute{"", "compute", {}, {}};
  Row to_device{"", "copy-htod", {}, {}};
  Row to_host{"", "copy-dtoh", {}, {}};
  Row host_calls{"", "host-calls", {}, {}};
  std::map<std::pair<int, std::string>, Row> workers;  // by worker number, then the rest of the name
  std::map<std::string, std::vector<Step>> counters;
  std::vector<Copy> copies_to_device;
  std::vector<Copy> copies_to_host;
  std::vector<Oom> ooms;
  std::vector<Box> kernels;  // for the job rows
};

struct JobView {
  int gpu = -1;
  std::vector<Box> boxes;
  std::vector<std::pair<Nanoseconds, Nanoseconds>> programs;  // compute lock held
};

struct LaneView {
  std::string name;
  std::string figures;
  std::map<int, GpuView> gpus;
  std::map<int, JobView> jobs;
  Nanoseconds end_ns = 0;
};

LaneView gather(const PictureLane& lane);

// The highest value of a memory counter, its value at an instant, and the counter `name` of a GPU
// (nullptr where it has none; the other two take it as zero).
std::int64_t peak_of(const std::vector<Step>* steps);
std::int64_t value_at(const std::vector<Step>* steps, Nanoseconds at_ns);
const std::vector<Step>* counter(const GpuView& gpu, const char* name);

}  // namespace stagehand::picture
