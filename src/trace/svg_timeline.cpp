#include "trace/svg_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <stdexcept>
#include <vector>

namespace stagehand {
namespace {

constexpr int kLabelWidth = 260;
constexpr int kPlotWidth = 1300;
constexpr int kRowHeight = 16;
constexpr int kTop = 56;

struct Style {
  const char* colour;
  const char* legend;
};

// What a span is, by its category and name.
Style style_of(std::string_view category, std::string_view name) {
  if (category == "kernel") return {"#4c78a8", "kernel"};
  if (category == "kernel (failed)") return {"#000000", "failed kernel"};
  if (category == "copy (pinned)") return {"#59a14f", "copy from/to pinned memory"};
  if (category == "copy (pageable)") return {"#e15759", "copy from/to pageable memory"};
  if (category == "memset") return {"#9d9d9d", "memset"};
  if (name.find("GPU program") != std::string_view::npos) return {"#b07aa1", "compute lock held"};
  if (name.find("wait for") != std::string_view::npos) return {"#ff9da7", "waiting for a lock"};
  if (name.find("pre-stage") != std::string_view::npos || name.find("upload") != std::string_view::npos) {
    return {"#76b7b2", "pre-staging / uploading"};
  }
  if (name.find("prepare") != std::string_view::npos || name.find("G2 MSM") != std::string_view::npos) {
    return {"#f1ce63", "host work (prepare, G2 MSM)"};
  }
  return {"#bab0ac", "other host work"};
}

std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

void write_svg_timeline(const Trace& trace, const std::filesystem::path& path, const std::string& title,
                        Nanoseconds from_ns, Nanoseconds to_ns) {
  // Rows in the order tracks were made; only tracks with spans in the window.
  std::map<std::uint32_t, std::vector<const TraceEvent*>> rows;
  std::vector<const TraceEvent*> marks;
  Nanoseconds first = -1;
  Nanoseconds last = 0;
  for (const auto& event : trace.events()) {
    if (event.phase == TracePhase::span) {
      rows[event.track].push_back(&event);
      if (first < 0 || event.start_ns < first) first = event.start_ns;
      last = std::max(last, event.end_ns);
    } else if (event.phase == TracePhase::instant && trace.string(event.name).find("out of memory") != std::string_view::npos) {
      marks.push_back(&event);
    }
  }
  if (to_ns <= from_ns) {
    from_ns = std::max<Nanoseconds>(0, first);
    to_ns = std::max(last, from_ns + 1);
  }
  auto x_of = [&](Nanoseconds t) {
    auto clamped = std::clamp(t, from_ns, to_ns);
    return kLabelWidth + static_cast<double>(clamped - from_ns) / static_cast<double>(to_ns - from_ns) * kPlotWidth;
  };
  std::map<std::uint32_t, int> row_of;
  for (const auto& [track, events] : rows) row_of[track] = static_cast<int>(row_of.size());
  const int legend_top = kTop + static_cast<int>(row_of.size()) * kRowHeight + 30;
  const int height = legend_top + 5 * 18 + 10;

  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", path.string()));
  out << fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="11">)",
                     kLabelWidth + kPlotWidth + 20, height)
      << "\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << fmt::format("<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>"
                     "<text x=\"10\" y=\"36\" fill=\"#555\">axis: seconds from {:.3f} s of device time</text>\n",
                     escape(title), static_cast<double>(from_ns) / 1e9);
  // Time axis: about ten ticks at a round step.
  double span_s = static_cast<double>(to_ns - from_ns) / 1e9;
  double step = 1e-3;
  for (double candidate : {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0}) {
    step = candidate;
    if (span_s / candidate <= 12) break;
  }
  const int axis_bottom = kTop + static_cast<int>(row_of.size()) * kRowHeight;
  for (double t = 0; t <= span_s + 1e-12; t += step) {
    auto x = x_of(from_ns + static_cast<Nanoseconds>(t * 1e9));
    out << fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e0e0e0\"/>"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#555\">{4:g} s</text>\n",
                       x, kTop - 4, axis_bottom, axis_bottom + 14, std::round(t / step) * step);
  }
  std::map<std::string, const char*> legend;
  for (const auto& [track, events] : rows) {
    int y = kTop + row_of[track] * kRowHeight;
    out << fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} / {}</text>\n", kLabelWidth - 6, y + 12,
                       escape(trace.track_process(track)), escape(trace.track_thread(track)));
    for (const auto* event : events) {
      if (event->end_ns < from_ns || event->start_ns > to_ns) continue;
      auto style = style_of(trace.string(event->category), trace.string(event->name));
      legend.emplace(style.legend, style.colour);
      double x0 = x_of(event->start_ns);
      double width = std::max(0.6, x_of(event->end_ns) - x0);
      out << fmt::format("<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>\n", x0,
                         y + 2, width, kRowHeight - 4, style.colour, escape(trace.string(event->name)));
    }
  }
  for (const auto* mark : marks) {
    auto found = row_of.find(mark->track);
    int y = found == row_of.end() ? kTop : kTop + found->second * kRowHeight;
    out << fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"#d00\" font-weight=\"bold\" text-anchor=\"middle\">✕<title>{}</title></text>\n",
                       x_of(mark->start_ns), y + 12, escape(mark->detail));
    legend.emplace("out of memory (✕)", "#dd0000");
  }
  int entry = 0;
  for (const auto& [label, colour] : legend) {
    int x = kLabelWidth + (entry % 3) * 330;
    int y = legend_top + (entry / 3) * 18;
    out << fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n", x, y, colour,
                       x + 20, y + 9, escape(label));
    ++entry;
  }
  out << "</svg>\n";
  if (!out) throw std::runtime_error(fmt::format("writing '{}' failed", path.string()));
}

}  // namespace stagehand
