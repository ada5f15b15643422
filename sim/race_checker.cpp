#include "sim/race_checker.hpp"

#include "device/format.hpp"
#include "sim/host_pinning.hpp"

#include <fmt/format.h>

namespace stagehand::sim {

std::string CheckerReport::describe() const {
  std::string text;
  for (const auto& leak : leaks) text += fmt::format("leak: {}\n", leak);
  for (const auto& read : unsynchronized_reads) text += fmt::format("unsynchronized read: {}\n", read);
  return text.empty() ? "clean\n" : text;
}

void RaceChecker::check_read(const Stream& stream, DevicePointer pointer, const std::string& reader) {
  auto* allocation = pool_.find_allocation(pointer);
  if (allocation == nullptr || allocation->writer_stream == 0 || allocation->writer_stream == stream.id) return;
  auto known = allocation->writer_stream < stream.clock.size() ? stream.clock[allocation->writer_stream] : 0;
  if (known < allocation->writer_sequence) {
    unsynchronized_reads_.push_back(
        fmt::format("{} on GPU {} {} reads the buffer at {:#x} written by {} on {} without waiting for it (at {})",
                    reader, ordinal_, StreamEngines::stream_name(stream.id), allocation->base, allocation->writer,
                    StreamEngines::stream_name(allocation->writer_stream), format_duration(system_.now())));
  }
}

void RaceChecker::note_write(const Stream& stream, std::uint64_t sequence, DevicePointer pointer, std::string writer) {
  auto* allocation = pool_.find_allocation(pointer);
  if (allocation == nullptr) return;
  allocation->writer_stream = stream.id;
  allocation->writer_sequence = sequence;
  allocation->writer = std::move(writer);
}

CheckerReport RaceChecker::report(bool lost, const StreamEngines& engines, const HostPinning& pinning) const {
  CheckerReport report;
  report.unsynchronized_reads = unsynchronized_reads_;
  if (lost) return report;
  pool_.report_leaks(ordinal_, report.leaks);
  engines.report_leaks(ordinal_, report.leaks);
  pinning.report_leaks(report.leaks);
  return report;
}

}  // namespace stagehand::sim
