#include "trace/picture_lanes.hpp"

#include "device/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace stagehand::picture {
namespace {

Style kernel_style(std::string_view category, std::string_view name) {
  if (category == "kernel (failed)") return {"#000000", "kernel that failed"};
  if (name.find("msm") != std::string_view::npos) return {"#2f5f98", "kernel: MSM"};
  if (name.find("batch_addition") != std::string_view::npos) return {"#6a51a3", "kernel: batch addition"};
  if (name.find("ntt") != std::string_view::npos || name.find("h_") != std::string_view::npos ||
      name.starts_with("groth16_h")) {
    return {"#8fc1e3", "kernel: NTT, H polynomial"};
  }
  return {"#7f7f7f", "kernel: other"};
}

// What a coordinator span is, by its name.
Style coordinator_style(std::string_view name) {
  if (name.find("GPU program") != std::string_view::npos) return {"#b07aa1", "compute lock held"};
  if (name.find("wait for") != std::string_view::npos) return {"#ff9da7", "waiting for a lock"};
  if (name.find("pre-stage") != std::string_view::npos || name.find("upload") != std::string_view::npos) {
    return {"#76b7b2", "pre-staging, uploading"};
  }
  if (name.find("prepare") != std::string_view::npos || name.find("read") != std::string_view::npos) {
    return {"#f1ce63", "host: read, prepare a, b, c"};
  }
  if (name.find("G2 MSM") != std::string_view::npos || name.find("assembl") != std::string_view::npos) {
    return {"#e49444", "host: G2 MSM, proof assembly"};
  }
  return {"#bab0ac", "other host work"};
}

// The GPU a track belongs to, from its process name ("GPU 0: H200", "GPU 0 coordinator").
int gpu_of(std::string_view process) {
  if (!process.starts_with("GPU ")) return -1;
  int gpu = -1;
  auto digits = process.substr(4);
  std::from_chars(digits.data(), digits.data() + digits.size(), gpu);
  return gpu;
}

// Bytes from the simulator's format_bytes text ("1.50 GiB", "12.0 MiB", "512 B"), as the copy
// spans and out-of-memory messages carry them; nullopt when the text starts otherwise.
std::optional<double> parse_bytes(std::string_view text) {
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{}) return std::nullopt;
  std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  if (unit.starts_with(" GiB")) return value * 1024.0 * 1024.0 * 1024.0;
  if (unit.starts_with(" MiB")) return value * 1024.0 * 1024.0;
  if (unit.starts_with(" KiB")) return value * 1024.0;
  if (unit.starts_with(" B")) return value;
  return std::nullopt;
}

// "cudaMalloc(8.00 GiB) on GPU 0: out of memory ...": the size asked for.
std::optional<double> requested_bytes(std::string_view detail) {
  auto open = detail.find('(');
  if (open == std::string_view::npos) return std::nullopt;
  return parse_bytes(detail.substr(open + 1));
}

// The job a coordinator span belongs to ("partition 3", "partition 3, ...").
std::optional<int> job_of(std::string_view detail) {
  if (!detail.starts_with("partition ")) return std::nullopt;
  int job = -1;
  auto digits = detail.substr(10);
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), job);
  if (error != std::errc{}) return std::nullopt;
  return job;
}

std::pair<int, std::string> worker_key(std::string_view thread) {
  // "worker 0", "worker 0 after the GPU": a worker's side rows sort right after its own row.
  if (thread.starts_with("worker ")) {
    int number = 0;
    auto digits = thread.substr(7);
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
    if (error == std::errc{}) return {number, std::string(end, thread.data() + thread.size())};
  }
  return {1 << 20, std::string(thread)};
}

// The picture's view of the GPU a track's process belongs to, with its model from the first
// process name that carries one ("GPU 0: H200").
GpuView& gpu_view(LaneView& view, std::string_view process) {
  auto& gpu = view.gpus[gpu_of(process)];
  if (gpu.model.empty()) {
    auto colon = process.find(": ");
    if (colon != std::string_view::npos) gpu.model = std::string(process.substr(colon + 2));
  }
  return gpu;
}

Row& worker_row(GpuView& gpu, std::string_view thread) {
  auto& row = gpu.workers[worker_key(thread)];
  row.label = fmt::format("{}", thread);
  row.kind = "worker";
  return row;
}

// A span on the device's own rows: a kernel, a memset or a copy.
void add_device_span(GpuView& gpu, const TraceEvent& event, std::string_view category, std::string_view name) {
  if (category.starts_with("kernel")) {
    Box box{event.start_ns, event.end_ns, kernel_style(category, name), std::string(name)};
    gpu.compute.boxes.push_back(box);
    gpu.kernels.push_back(std::move(box));
  } else if (category == "memset") {
    gpu.compute.boxes.push_back(Box{event.start_ns, event.end_ns, {"#c7c7c7", "memset"}, "memset " + event.detail});
  } else {
    bool to_device = name.find("HtoD") != std::string_view::npos;
    auto style = category == "copy (pageable)" ? kPageable : kPinned;
    (to_device ? gpu.to_device : gpu.to_host)
        .boxes.push_back(Box{event.start_ns, event.end_ns, style, fmt::format("{} {}", name, event.detail)});
    if (auto bytes = parse_bytes(event.detail)) {
      (to_device ? gpu.copies_to_device : gpu.copies_to_host).push_back(Copy{event.start_ns, event.end_ns, *bytes});
    }
  }
}

// A coordinator span: on its worker's row, and on its job's where it names one.
void add_worker_span(LaneView& view, int gpu_index, const TraceEvent& event, std::string_view thread,
                     std::string_view name, std::unordered_map<std::uint32_t, std::vector<Box>>& unattributed) {
  auto style = coordinator_style(name);
  auto& row = worker_row(view.gpus[gpu_index], thread);
  row.boxes.push_back(Box{event.start_ns, event.end_ns, style,
                          event.detail.empty() ? std::string(name) : fmt::format("{}: {}", name, event.detail)});
  auto job = job_of(event.detail);
  if (!job) {
    unattributed[event.track].push_back(row.boxes.back());
    return;
  }
  auto& job_view = view.jobs[*job];
  job_view.gpu = gpu_index;
  // A worker's spans that name no job (waiting for a lock, an upload) belong to the job whose
  // span it records next: spans are recorded as they end, and a worker's job ends with its GPU
  // program or its host step.
  auto& unnamed = unattributed[event.track];
  job_view.boxes.insert(job_view.boxes.end(), unnamed.begin(), unnamed.end());
  unnamed.clear();
  bool program = name.find("GPU program") != std::string_view::npos;
  if (program) job_view.programs.emplace_back(event.start_ns, event.end_ns);
  job_view.boxes.push_back(Box{event.start_ns, event.end_ns, program ? kProgram : style,
                               fmt::format("{}: {}", name, event.detail), program});
}

// An out-of-memory: the device's (the size it was asked for), or a worker's mark on its row.
void add_instant(GpuView& gpu, const TraceEvent& event, std::string_view category, std::string_view name,
                 std::string_view thread) {
  if (name == "out of memory" && category == "error") {
    gpu.ooms.push_back(Oom{event.start_ns, requested_bytes(event.detail).value_or(0), event.detail});
  } else if (name.starts_with("out of memory")) {
    worker_row(gpu, thread).oom_marks.emplace_back(event.start_ns, event.detail);
  }
}

void add_counter(GpuView& gpu, const TraceEvent& event, std::string_view name) {
  // Of several samples at one instant, the last is what held from then on.
  auto& steps = gpu.counters[std::string(name)];
  if (!steps.empty() && steps.back().at_ns == event.start_ns) {
    steps.back().bytes = event.value;
  } else {
    steps.push_back(Step{event.start_ns, event.value});
  }
}

// A job's kernels: those that started on its GPU while it held the compute lock.
void attribute_kernels(LaneView& view) {
  for (auto& [index, job] : view.jobs) {
    auto found = view.gpus.find(job.gpu);
    if (found == view.gpus.end()) continue;
    for (const auto& [start, end] : job.programs) {
      for (const auto& kernel : found->second.kernels) {
        if (kernel.start_ns >= start && kernel.start_ns < end) job.boxes.push_back(kernel);
      }
    }
  }
}

}  // namespace

LaneView gather(const PictureLane& lane) {
  LaneView view{lane.name, lane.figures, {}, {}, 0};
  const Trace& trace = *lane.trace;
  std::unordered_map<std::uint64_t, const TraceEvent*> async_open;
  std::unordered_map<std::uint32_t, std::vector<Box>> unattributed;  // by track
  for (const auto& event : trace.events()) {
    const auto process = trace.track_process(event.track);
    const auto thread = trace.track_thread(event.track);
    auto& gpu = gpu_view(view, process);
    const auto category = trace.string(event.category);
    const auto name = trace.string(event.name);
    view.end_ns = std::max(view.end_ns, event.end_ns);
    switch (event.phase) {
      case TracePhase::span: {
        if (category.starts_with("kernel") || category == "memset" || category.starts_with("copy")) {
          add_device_span(gpu, event, category, name);
        } else {
          add_worker_span(view, gpu_of(process), event, thread, name, unattributed);
        }
        break;
      }
      case TracePhase::async_begin: async_open[event.id] = &event; break;
      case TracePhase::async_end: {
        auto found = async_open.find(event.id);
        if (found == async_open.end()) break;
        const auto& begin = *found->second;
        gpu.host_calls.boxes.push_back(
            Box{begin.start_ns, event.end_ns, kHostCall, fmt::format("{} {}", trace.string(begin.name), begin.detail)});
        async_open.erase(found);
        break;
      }
      case TracePhase::instant: add_instant(gpu, event, category, name, thread); break;
      case TracePhase::counter: add_counter(gpu, event, name); break;
      case TracePhase::flow_start:
      case TracePhase::flow_end: break;
    }
  }
  attribute_kernels(view);
  std::erase_if(view.gpus, [](const auto& entry) {
    const auto& gpu = entry.second;
    return gpu.compute.boxes.empty() && gpu.to_device.boxes.empty() && gpu.to_host.boxes.empty() &&
           gpu.workers.empty() && gpu.counters.empty() && gpu.host_calls.boxes.empty();
  });
  return view;
}

std::int64_t peak_of(const std::vector<Step>* steps) {
  std::int64_t peak = 0;
  if (steps) {
    for (const auto& step : *steps) peak = std::max(peak, step.bytes);
  }
  return peak;
}

std::int64_t value_at(const std::vector<Step>* steps, Nanoseconds at_ns) {
  std::int64_t value = 0;
  if (!steps) return 0;
  for (const auto& step : *steps) {
    if (step.at_ns > at_ns) break;
    value = step.bytes;
  }
  return value;
}

const std::vector<Step>* counter(const GpuView& gpu, const char* name) {
  auto found = gpu.counters.find(name);
  return found == gpu.counters.end() ? nullptr : &found->second;
}

}  // namespace stagehand::picture
