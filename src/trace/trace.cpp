#include "trace/trace.hpp"

#include <fmt/format.h>

#include <fstream>
#include <ostream>
#include <stdexcept>

namespace stagehand {
namespace {
constexpr std::uint64_t kFnvPrime = 1099511628211ull;

void mix(std::uint64_t& hash, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) {
    hash ^= (value >> (8 * i)) & 0xff;
    hash *= kFnvPrime;
  }
}

void mix(std::uint64_t& hash, std::string_view text) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= kFnvPrime;
  }
  mix(hash, text.size());
}

void write_json_string(std::ostream& out, std::string_view text) {
  out << '"';
  for (char c : text) {
    switch (c) {
      case '"': out << "\\\""; break;
      case '\\': out << "\\\\"; break;
      case '\n': out << "\\n"; break;
      case '\t': out << "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out << fmt::format("\\u{:04x}", static_cast<int>(c));
        } else {
          out << c;
        }
    }
  }
  out << '"';
}

// Chrome trace timestamps are microseconds; keep nanosecond precision as a decimal fraction.
// Negative times (a span recorded before the device clock's origin) keep their sign in front.
std::string microseconds(Nanoseconds ns) {
  const auto magnitude = static_cast<std::uint64_t>(ns < 0 ? -(ns + 1) + 1 : ns);
  return fmt::format("{}{}.{:03}", ns < 0 ? "-" : "", magnitude / 1000, magnitude % 1000);
}
}  // namespace

std::uint32_t Trace::intern(std::string_view text) {
  auto found = string_index_.find(text);
  if (found != string_index_.end()) return found->second;
  auto index = static_cast<std::uint32_t>(strings_.size());
  strings_.emplace_back(text);
  string_index_.emplace(strings_.back(), index);
  return index;
}

TraceTrack Trace::track(std::string_view process, std::string_view thread) {
  std::string key = fmt::format("{}\x1f{}", process, thread);
  auto found = track_index_.find(key);
  if (found != track_index_.end()) return TraceTrack{found->second};
  auto process_name = intern(process);
  auto [pid_entry, inserted] = process_ids_.emplace(process_name, static_cast<std::uint32_t>(process_ids_.size() + 1));
  std::uint32_t thread_id = 1;
  for (const auto& info : tracks_) {
    if (info.process_id == pid_entry->second) ++thread_id;
  }
  auto index = static_cast<std::uint32_t>(tracks_.size());
  tracks_.push_back(TrackInfo{pid_entry->second, thread_id, process_name, intern(thread)});
  track_index_.emplace(std::move(key), index);
  return TraceTrack{index};
}

std::string_view Trace::track_process(std::uint32_t track) const { return strings_[tracks_.at(track).process_name]; }
std::string_view Trace::track_thread(std::uint32_t track) const { return strings_[tracks_.at(track).thread_name]; }

void Trace::record(TraceEvent event) {
  mix(hash_, static_cast<std::uint64_t>(event.phase));
  mix(hash_, strings_[tracks_.at(event.track).process_name]);
  mix(hash_, strings_[tracks_.at(event.track).thread_name]);
  mix(hash_, strings_[event.name]);
  mix(hash_, strings_[event.category]);
  mix(hash_, static_cast<std::uint64_t>(event.start_ns));
  mix(hash_, static_cast<std::uint64_t>(event.end_ns));
  mix(hash_, event.detail);
  // Only counters carry a value: traces without counters keep the hashes they had.
  if (event.phase == TracePhase::counter) mix(hash_, static_cast<std::uint64_t>(event.value));
  ++event_count_;
  if (keep_events_) events_.push_back(std::move(event));
}

void Trace::span(TraceTrack track, std::string_view name, std::string_view category, Nanoseconds start_ns,
                 Nanoseconds end_ns, std::string detail) {
  record(
      TraceEvent{TracePhase::span, track.id, intern(name), intern(category), start_ns, end_ns, 0, std::move(detail)});
}

void Trace::instant(TraceTrack track, std::string_view name, std::string_view category, Nanoseconds at_ns,
                    std::string detail) {
  record(TraceEvent{TracePhase::instant, track.id, intern(name), intern(category), at_ns, at_ns, 0, std::move(detail)});
}

void Trace::flow(TraceTrack from, Nanoseconds from_ns, TraceTrack to, Nanoseconds to_ns, std::string_view name) {
  auto id = next_flow_id_++;
  auto name_index = intern(name);
  auto category = intern("dependency");
  record(TraceEvent{TracePhase::flow_start, from.id, name_index, category, from_ns, from_ns, id, {}});
  record(TraceEvent{TracePhase::flow_end, to.id, name_index, category, to_ns, to_ns, id, {}});
}

void Trace::async_span(TraceTrack track, std::string_view name, std::string_view category, Nanoseconds start_ns,
                       Nanoseconds end_ns, std::string detail) {
  auto id = next_flow_id_++;
  auto name_index = intern(name);
  auto category_index = intern(category);
  record(TraceEvent{TracePhase::async_begin, track.id, name_index, category_index, start_ns, start_ns, id,
                    std::move(detail)});
  record(TraceEvent{TracePhase::async_end, track.id, name_index, category_index, end_ns, end_ns, id, {}});
}

void Trace::counter(TraceTrack track, std::string_view name, std::string_view category, Nanoseconds at_ns,
                    std::int64_t value) {
  record(TraceEvent{TracePhase::counter, track.id, intern(name), intern(category), at_ns, at_ns, 0, {}, value});
}

void Trace::write_chrome_json(std::ostream& out) const {
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto separator = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (const auto& [name, pid] : process_ids_) {
    separator();
    out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << pid << ",\"tid\":0,\"args\":{\"name\":";
    write_json_string(out, strings_[name]);
    out << "}}";
  }
  for (const auto& info : tracks_) {
    separator();
    out << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << info.process_id << ",\"tid\":" << info.thread_id
        << ",\"args\":{\"name\":";
    write_json_string(out, strings_[info.thread_name]);
    out << "}}";
  }
  for (const auto& event : events_) {
    const auto& info = tracks_[event.track];
    separator();
    out << "{\"name\":";
    write_json_string(out, strings_[event.name]);
    out << ",\"cat\":";
    write_json_string(out, strings_[event.category]);
    out << ",\"pid\":" << info.process_id << ",\"tid\":" << info.thread_id
        << ",\"ts\":" << microseconds(event.start_ns);
    switch (event.phase) {
      case TracePhase::span: out << ",\"ph\":\"X\",\"dur\":" << microseconds(event.end_ns - event.start_ns); break;
      case TracePhase::instant: out << ",\"ph\":\"i\",\"s\":\"t\""; break;
      case TracePhase::flow_start: out << ",\"ph\":\"s\",\"id\":" << event.id; break;
      case TracePhase::flow_end: out << ",\"ph\":\"f\",\"bp\":\"e\",\"id\":" << event.id; break;
      case TracePhase::async_begin: out << ",\"ph\":\"b\",\"id\":" << event.id; break;
      case TracePhase::async_end: out << ",\"ph\":\"e\",\"id\":" << event.id; break;
      case TracePhase::counter: out << ",\"ph\":\"C\",\"args\":{\"bytes\":" << event.value << "}}"; continue;
    }
    if (!event.detail.empty()) {
      out << ",\"args\":{\"detail\":";
      write_json_string(out, event.detail);
      out << "}";
    }
    out << "}";
  }
  out << "\n]}\n";
}

void Trace::write_chrome_json(const std::filesystem::path& path) const {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("cannot write trace file '{}'", path.string()));
  write_chrome_json(out);
  if (!out) throw std::runtime_error(fmt::format("writing trace file '{}' failed", path.string()));
}

}  // namespace stagehand
