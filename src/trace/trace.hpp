#pragma once
// Trace: every device operation and coordinator phase with its start and end in device time.
// Exported as Chrome trace-event JSON (opens in Perfetto or chrome://tracing) and hashed as it is
// recorded, so two runs can be compared by one number: same seed, same hash.

#include "device/types.hpp"

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace stagehand {

struct TraceTrack {
  std::uint32_t id = 0;
};

enum class TracePhase : std::uint8_t { span, instant, flow_start, flow_end, async_begin, async_end, counter };

struct TraceEvent {
  TracePhase phase;
  std::uint32_t track;
  std::uint32_t name;      // index into the string table
  std::uint32_t category;  // index into the string table
  Nanoseconds start_ns;
  Nanoseconds end_ns;
  std::uint64_t id;  // flow and async identity
  std::string detail;
  std::int64_t value = 0;  // a counter's bytes from start_ns on
};

class Trace {
 public:
  // With keep_events false only the hash and the count are kept (benchmarks, long explorations).
  explicit Trace(bool keep_events = true) : keep_events_(keep_events) {}

  // A row in the viewer: `process` groups rows (one GPU, the host), `thread` names the row.
  TraceTrack track(std::string_view process, std::string_view thread);

  void span(TraceTrack track, std::string_view name, std::string_view category, Nanoseconds start_ns,
            Nanoseconds end_ns, std::string detail = {});
  void instant(TraceTrack track, std::string_view name, std::string_view category, Nanoseconds at_ns,
               std::string detail = {});
  // An arrow from one row to another, e.g. a hidden dependency between two streams.
  void flow(TraceTrack from, Nanoseconds from_ns, TraceTrack to, Nanoseconds to_ns, std::string_view name);
  // A span that may overlap others on its row (host calls made by several workers at once).
  void async_span(TraceTrack track, std::string_view name, std::string_view category, Nanoseconds start_ns,
                  Nanoseconds end_ns, std::string detail = {});

  // A number of bytes over time, e.g. the device memory held: `value` from `at_ns` until the next
  // sample of the same name on the same process. Perfetto draws a counter track per process and
  // name, so names must be unique within a process.
  void counter(TraceTrack track, std::string_view name, std::string_view category, Nanoseconds at_ns,
               std::int64_t value);

  std::uint64_t hash() const { return hash_; }
  std::uint64_t event_count() const { return event_count_; }
  const std::vector<TraceEvent>& events() const { return events_; }
  std::string_view string(std::uint32_t index) const { return strings_[index]; }
  std::string_view track_process(std::uint32_t track) const;
  std::string_view track_thread(std::uint32_t track) const;

  void write_chrome_json(std::ostream& out) const;
  // Writes the JSON file, creating parent folders; throws std::runtime_error naming the path.
  void write_chrome_json(const std::filesystem::path& path) const;

 private:
  std::uint32_t intern(std::string_view text);
  void record(TraceEvent event);

  struct TrackInfo {
    std::uint32_t process_id;
    std::uint32_t thread_id;
    std::uint32_t process_name;
    std::uint32_t thread_name;
  };

  bool keep_events_;
  std::uint64_t hash_ = 14695981039346656037ull;  // FNV-1a offset basis
  std::uint64_t event_count_ = 0;
  std::uint64_t next_flow_id_ = 1;
  std::vector<TraceEvent> events_;
  std::vector<std::string> strings_;
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> string_index_;
  std::vector<TrackInfo> tracks_;
  std::unordered_map<std::string, std::uint32_t> track_index_;
  std::unordered_map<std::uint32_t, std::uint32_t> process_ids_;  // process name -> pid
};

}  // namespace stagehand
