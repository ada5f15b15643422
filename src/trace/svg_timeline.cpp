#include "trace/svg_timeline.hpp"

#include "trace/picture_lanes.hpp"

#include "device/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace stagehand {
namespace {

using namespace picture;

// ---- Layout (pixels) ----
constexpr int kPlotWidth = 1200;
constexpr int kRightMargin = 130;  // the cap's and the peaks' labels
constexpr int kRowHeight = 14;
constexpr int kLaneHeader = 22;
constexpr int kMemoryHeight = 64;
constexpr int kLinkHeight = 30;
constexpr int kLaneGap = 12;
// Width of one character of the 11 px sans-serif labels, generous so that labels fit.
constexpr double kCharWidth = 6.6;

constexpr const char* kHeld = "#c6dbef";
constexpr const char* kInUse = "#6baed6";
constexpr const char* kReserved = "#f28e2b";
constexpr const char* kCap = "#d62728";
constexpr const char* kOom = "#dd0000";
constexpr const char* kLinkIn = "#59a14f";
constexpr const char* kLinkOut = "#b8860b";

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

// ---- Drawing ----

class Picture {
 public:
  Picture(std::vector<LaneView> lanes, const std::string& title, const PictureOptions& options)
      : lanes_(std::move(lanes)), title_(title), options_(options) {
    from_ns_ = options.from_ns;
    to_ns_ = options.to_ns;
    if (to_ns_ <= from_ns_) {
      from_ns_ = 0;
      to_ns_ = 1;
      for (const auto& lane : lanes_) to_ns_ = std::max(to_ns_, lane.end_ns);
    }
    // Labels: the longest decides the column's width, so that none is cut.
    std::size_t longest = 12;
    for (const auto& lane : lanes_) {
      for (const auto& [index, gpu] : lane.gpus) {
        longest = std::max(longest, gpu_label(index).size() + 22);
        for (const auto& [key, row] : gpu.workers)
          longest = std::max(longest, gpu_label(index).size() + 1 + row.label.size());
      }
    }
    label_width_ = static_cast<int>(static_cast<double>(longest) * kCharWidth) + 16;
    // One scale for every memory chart and one for every link strip, so that lanes compare.
    for (const auto& lane : lanes_) {
      for (const auto& [index, gpu] : lane.gpus) {
        for (const auto& [name, steps] : gpu.counters) memory_scale_ = std::max<double>(memory_scale_, peak_of(&steps));
        for (const auto& oom : gpu.ooms) {
          memory_scale_ = std::max(
              memory_scale_, static_cast<double>(value_at(counter(gpu, "VRAM held"), oom.at_ns)) + oom.requested_bytes);
        }
        for (const auto* copies : {&gpu.copies_to_device, &gpu.copies_to_host}) {
          for (double rate : link_rates(*copies)) link_scale_ = std::max(link_scale_, rate);
        }
      }
    }
    memory_scale_ *= 1.08;
  }

  std::string draw() {
    std::string body;
    int y = 0;
    for (const auto& lane : lanes_) {
      y = draw_lane(body, lane, y);
      y += kLaneGap;
    }
    const int body_height = y;

    std::string legend;
    const int legend_columns = 3;
    const int legend_column_width = (label_width_ + kPlotWidth + kRightMargin - 20) / legend_columns;
    int entry = 0;
    for (const auto& [label, swatch] : legend_order_) {
      int x = 10 + (entry % legend_columns) * legend_column_width;
      int ly = (entry / legend_columns) * 16;
      legend += fmt::format("<g transform=\"translate({},{})\">{}<text x=\"22\" y=\"9\">{}</text></g>\n", x, ly, swatch,
                            escape(label));
      ++entry;
    }
    const int legend_height = ((entry + legend_columns - 1) / legend_columns) * 16;

    const int title_height = 48;
    const int axis_height = 18;
    const int legend_top = title_height;
    const int axis_top = legend_top + legend_height + 8;
    const int body_top = axis_top + axis_height;
    const int width = label_width_ + kPlotWidth + kRightMargin;
    const int height = body_top + body_height + axis_height + 8;

    std::string out;
    out += fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
        "font-family=\"DejaVu Sans, "
        "Verdana, sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        width, height, width, height);
    out += fmt::format("<text class=\"title\" x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
                       escape(title_));
    out += fmt::format(
        "<text x=\"10\" y=\"38\" fill=\"#555\">{} on one time axis: seconds of device time from {:.3f} s. Per GPU: the "
        "compute engine, the copy engines, the PCIe link's rate, device memory against the card's capacity.</text>\n",
        lanes_.size() == 1 ? "The run" : fmt::format("{} lanes", lanes_.size()), static_cast<double>(from_ns_) / 1e9);
    out += fmt::format("<g class=\"legend\" transform=\"translate(0,{})\">\n{}</g>\n", legend_top, legend);
    // The axis: ticks at a round step, grid lines through every lane.
    out += fmt::format("<g class=\"axis\" data-from-ns=\"{}\" data-to-ns=\"{}\">\n", from_ns_, to_ns_);
    const double span_s = static_cast<double>(to_ns_ - from_ns_) / 1e9;
    double step = 1e-6;
    for (double candidate :
         {1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 0.001, 0.002, 0.005, 0.01,  0.02,
          0.05, 0.1,  0.2,  0.5,  1.0,  2.0,  5.0,  10.0, 20.0, 50.0,  100.0, 200.0, 500.0, 1000.0}) {
      step = candidate;
      if (span_s / candidate <= 14) break;
    }
    for (int i = 0; i * step <= span_s + 1e-12; ++i) {
      double t = i * step;
      double x = x_of(from_ns_ + static_cast<Nanoseconds>(t * 1e9));
      out += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e4e4e4\"/>"
          "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#555\">{4:g} s</text>"
          "<text x=\"{0:.1f}\" y=\"{5}\" text-anchor=\"middle\" fill=\"#555\">{4:g} s</text>\n",
          x, body_top, body_top + body_height, axis_top + 12, t, body_top + body_height + 14);
    }
    out += "</g>\n";
    out += fmt::format("<g transform=\"translate(0,{})\">\n{}</g>\n</svg>\n", body_top, body);
    return out;
  }

 private:
  static std::string gpu_label(int gpu) { return gpu < 0 ? std::string("host") : fmt::format("GPU {}", gpu); }

  double x_of(Nanoseconds t) const {
    auto clamped = std::clamp(t, from_ns_, to_ns_);
    return label_width_ + static_cast<double>(clamped - from_ns_) / static_cast<double>(to_ns_ - from_ns_) * kPlotWidth;
  }

  void use(const std::string& label, std::string swatch) {
    if (legend_seen_.insert(label).second) legend_order_.emplace_back(label, std::move(swatch));
  }
  void use(Style style) {
    use(style.legend, fmt::format("<rect width=\"16\" height=\"10\" fill=\"{}\"/>", style.colour));
  }

  // The link's rate per pixel column, in bytes per nanosecond (= GB/s): each copy's bytes spread
  // evenly over its span.
  std::vector<double> link_rates(const std::vector<Copy>& copies) const {
    std::vector<double> bytes(kPlotWidth, 0.0);
    const double column_ns = static_cast<double>(to_ns_ - from_ns_) / kPlotWidth;
    for (const auto& copy : copies) {
      if (copy.end_ns <= from_ns_ || copy.start_ns >= to_ns_ || copy.end_ns <= copy.start_ns) continue;
      const double per_ns = copy.bytes / static_cast<double>(copy.end_ns - copy.start_ns);
      double a = static_cast<double>(std::max(copy.start_ns, from_ns_) - from_ns_) / column_ns;
      double b = static_cast<double>(std::min(copy.end_ns, to_ns_) - from_ns_) / column_ns;
      for (int c = std::max(0, static_cast<int>(a)); c < std::min(kPlotWidth, static_cast<int>(std::ceil(b))); ++c) {
        double overlap = std::min<double>(b, c + 1) - std::max<double>(a, c);
        if (overlap > 0) bytes[static_cast<std::size_t>(c)] += per_ns * overlap * column_ns;
      }
    }
    for (auto& value : bytes) value /= column_ns;
    return bytes;
  }

  void draw_row_label(std::string& out, int y, const std::string& text) const {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", label_width_ - 8, y + kRowHeight - 3,
                       escape(text));
  }

  // Boxes of one row; neighbours of one colour closer than a pixel are merged, which keeps the
  // file small without changing what is seen.
  int draw_row(std::string& out, const Row& row, int y, const std::string& label, int gpu) {
    out += fmt::format("<g class=\"row\" data-kind=\"{}\" data-gpu=\"{}\">\n", row.kind, gpu);
    draw_row_label(out, y, label);
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f7f7f7\"/>\n", label_width_, y + 1,
                       kPlotWidth, kRowHeight - 2);
    std::vector<const Box*> boxes;
    for (const auto& box : row.boxes) {
      if (box.end_ns >= from_ns_ && box.start_ns <= to_ns_) boxes.push_back(&box);
    }
    std::stable_sort(boxes.begin(), boxes.end(), [](const Box* a, const Box* b) {
      if (a->background != b->background) return a->background;
      return a->start_ns < b->start_ns;
    });
    struct Run {
      double x0, x1;
      const Box* box;
      int merged;
    };
    std::vector<Run> runs;
    for (const auto* box : boxes) {
      use(box->style);
      double x0 = x_of(box->start_ns);
      double x1 = std::max(x0 + 0.6, x_of(box->end_ns));
      if (!runs.empty() && runs.back().box->style.colour == box->style.colour &&
          runs.back().box->background == box->background && x0 <= runs.back().x1 + 0.8) {
        runs.back().x1 = std::max(runs.back().x1, x1);
        ++runs.back().merged;
        continue;
      }
      runs.push_back(Run{x0, x1, box, 1});
    }
    for (const auto& run : runs) {
      int inset = run.box->background ? 1 : 2;
      std::string title =
          run.merged > 1 ? fmt::format("{} (and {} more)", run.box->title, run.merged - 1) : run.box->title;
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"{}><title>{}</title></rect>\n", run.x0,
          y + inset, run.x1 - run.x0, kRowHeight - 2 * inset, run.box->style.colour,
          run.merged == 1 && !run.box->background && run.x1 - run.x0 > 3 ? " stroke=\"white\" stroke-width=\"0.5\""
                                                                         : "",
          escape(title));
    }
    for (const auto& [at, detail] : row.oom_marks) {
      out += fmt::format(
          "<g class=\"job-oom\" data-at-ns=\"{}\"><text x=\"{:.1f}\" y=\"{}\" fill=\"{}\" font-weight=\"bold\" "
          "text-anchor=\"middle\">✕</text><title>{}</title></g>\n",
          at, x_of(at), y + kRowHeight - 3, kOom, escape(detail));
      use("out of memory (✕; on the memory chart, the failed request above what was held)",
          fmt::format("<text x=\"8\" y=\"9\" fill=\"{}\" font-weight=\"bold\" text-anchor=\"middle\">✕</text>", kOom));
    }
    out += "</g>\n";
    return y + kRowHeight;
  }

  double y_of_bytes(int top, double bytes) const { return top + kMemoryHeight - bytes / memory_scale_ * kMemoryHeight; }

  // A step series as a path over the window, one point pair per change; within one pixel the
  // highest value is kept, so that a peak never disappears between columns.
  std::string step_path(const std::vector<Step>& steps, int top, bool area) const {
    std::vector<double> column(kPlotWidth + 1, -1.0);
    const double column_ns = static_cast<double>(to_ns_ - from_ns_) / kPlotWidth;
    std::int64_t current = 0;
    std::size_t i = 0;
    for (; i < steps.size() && steps[i].at_ns <= from_ns_; ++i) current = steps[i].bytes;
    for (int c = 0; c <= kPlotWidth; ++c) {
      const auto column_end = from_ns_ + static_cast<Nanoseconds>((c + 1) * column_ns);
      double high = static_cast<double>(current);
      while (i < steps.size() && steps[i].at_ns < column_end) {
        current = steps[i].bytes;
        high = std::max(high, static_cast<double>(current));
        ++i;
      }
      column[static_cast<std::size_t>(c)] = std::max(high, static_cast<double>(current));
      if (c == kPlotWidth) break;
    }
    const double first_x = x_of(std::max(from_ns_, steps.empty() ? from_ns_ : steps.front().at_ns));
    std::string path = fmt::format("M{:.1f},{:.1f}", first_x, y_of_bytes(top, area ? 0.0 : column[0]));
    double last_y = -1;
    for (int c = 0; c < kPlotWidth; ++c) {
      double x = label_width_ + c;
      if (x < first_x) continue;
      double y = y_of_bytes(top, column[static_cast<std::size_t>(c)]);
      if (y != last_y) {
        path += fmt::format("L{:.1f},{:.1f}L{:.1f},{:.1f}", x, last_y < 0 ? y : last_y, x, y);
        last_y = y;
      }
    }
    path += fmt::format("L{:.1f},{:.1f}", static_cast<double>(label_width_ + kPlotWidth),
                        last_y < 0 ? y_of_bytes(top, 0) : last_y);
    if (area)
      path += fmt::format("L{:.1f},{:.1f}Z", static_cast<double>(label_width_ + kPlotWidth), y_of_bytes(top, 0));
    return path;
  }

  int draw_memory(std::string& out, const GpuView& gpu, int gpu_index, int y) {
    const auto* held = counter(gpu, "VRAM held");
    const auto* capacity = counter(gpu, "VRAM capacity");
    const auto* reserved = counter(gpu, "VRAM reserved (budget)");
    if (!held && !reserved) return y;
    const int top = y + 4;
    const auto peak_held = peak_of(held);
    const auto cap = peak_of(capacity);
    out += fmt::format(
        "<g class=\"memory\" data-gpu=\"{}\" data-peak-held-bytes=\"{}\" data-cap-bytes=\"{}\" "
        "data-peak-reserved-bytes=\"{}\" data-oom-count=\"{}\">\n",
        gpu_index, peak_held, cap, peak_of(reserved), gpu.ooms.size());
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} device memory</text>\n", label_width_ - 8,
                       top + 11, gpu_label(gpu_index));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#777\">0 to {}</text>\n", label_width_ - 8,
                       top + 25, format_bytes(static_cast<Bytes>(memory_scale_)));
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fbfbfb\" stroke=\"#ddd\"/>\n",
                       label_width_, top, kPlotWidth, kMemoryHeight);
    draw_memory_lines(out, gpu, top);
    if (held) draw_memory_peak(out, *held, peak_held, top);
    draw_ooms(out, gpu, held, top);
    out += "</g>\n";
    return top + kMemoryHeight + 4;
  }

  // The counters as lines and areas over the chart, each with its entry in the legend.
  void draw_memory_lines(std::string& out, const GpuView& gpu, int top) {
    const auto* held = counter(gpu, "VRAM held");
    const auto* in_use = counter(gpu, "VRAM in use");
    const auto* capacity = counter(gpu, "VRAM capacity");
    const auto* reserved = counter(gpu, "VRAM reserved (budget)");
    const auto* budget = counter(gpu, "VRAM budget capacity");
    const auto cap = peak_of(capacity);
    if (held) {
      out += fmt::format("<path class=\"held\" d=\"{}\" fill=\"{}\" stroke=\"#9ecae1\" stroke-width=\"0.5\"/>\n",
                         step_path(*held, top, true), kHeld);
      use("device memory held (allocated, the pool's cache included)",
          fmt::format("<rect width=\"16\" height=\"10\" fill=\"{}\" stroke=\"#9ecae1\"/>", kHeld));
    }
    if (in_use) {
      out += fmt::format("<path class=\"in-use\" d=\"{}\" fill=\"{}\"/>\n", step_path(*in_use, top, true), kInUse);
      use("device memory in use (not cached or pending in the pool)",
          fmt::format("<rect width=\"16\" height=\"10\" fill=\"{}\"/>", kInUse));
    }
    if (reserved) {
      out += fmt::format("<path class=\"reserved\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\"/>\n",
                         step_path(*reserved, top, false), kReserved);
      use("reserved in the VRAM budget (budgeted)",
          fmt::format("<line x1=\"0\" y1=\"5\" x2=\"16\" y2=\"5\" stroke=\"{}\" stroke-width=\"2\"/>", kReserved));
    }
    if (budget) {
      out += fmt::format(
          "<path class=\"budget-capacity\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1\" "
          "stroke-dasharray=\"2,2\"/>\n",
          step_path(*budget, top, false), kReserved);
      use("the budget's capacity (cap less margin and residents)",
          fmt::format("<line x1=\"0\" y1=\"5\" x2=\"16\" y2=\"5\" stroke=\"{}\" stroke-dasharray=\"2,2\"/>",
                      kReserved));
    }
    if (capacity) {
      // A step line: another process's memory lowers what this one can get.
      const auto last = static_cast<double>(capacity->back().bytes);
      out += fmt::format(
          "<path class=\"cap\" data-bytes=\"{}\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.2\" "
          "stroke-dasharray=\"6,3\"/>"
          "<text x=\"{}\" y=\"{:.1f}\" fill=\"{}\">cap {}</text>\n",
          cap, step_path(*capacity, top, false), kCap, label_width_ + kPlotWidth + 6, y_of_bytes(top, last) + 4, kCap,
          format_bytes(static_cast<Bytes>(last)));
      use("the card's memory (the configured cap)",
          fmt::format("<line x1=\"0\" y1=\"5\" x2=\"16\" y2=\"5\" stroke=\"{}\" stroke-dasharray=\"6,3\"/>", kCap));
    }
  }

  // The peak of what was held: where it is first reached, labelled as the report prints it.
  void draw_memory_peak(std::string& out, const std::vector<Step>& held, std::int64_t peak_held, int top) {
    Nanoseconds peak_at = from_ns_;
    for (const auto& step : held) {
      if (step.bytes == peak_held) {
        peak_at = step.at_ns;
        break;
      }
    }
    double py = y_of_bytes(top, static_cast<double>(peak_held));
    out += fmt::format(
        "<g class=\"peak\" data-bytes=\"{}\" data-at-ns=\"{}\"><circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" "
        "fill=\"#08519c\"/>"
        "<text x=\"{}\" y=\"{}\" fill=\"#08519c\">peak {}</text></g>\n",
        peak_held, peak_at, x_of(peak_at), py, label_width_ + kPlotWidth + 6, top + kMemoryHeight - 4,
        format_bytes(static_cast<Bytes>(peak_held)));
  }

  // Each allocation that failed, drawn on top of what was held: it crosses the cap.
  void draw_ooms(std::string& out, const GpuView& gpu, const std::vector<Step>* held, int top) {
    for (const auto& oom : gpu.ooms) {
      double base = static_cast<double>(value_at(held, oom.at_ns));
      double x = x_of(oom.at_ns);
      double y0 = y_of_bytes(top, base);
      double y1 = y_of_bytes(top, base + oom.requested_bytes);
      out += fmt::format(
          "<g class=\"oom\" data-at-ns=\"{}\" data-held-bytes=\"{:.0f}\" data-requested-bytes=\"{:.0f}\"><rect "
          "x=\"{:.1f}\" y=\"{:.1f}\" width=\"4\" height=\"{:.1f}\" "
          "fill=\"{}\" fill-opacity=\"0.55\"/><text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\" font-weight=\"bold\" "
          "text-anchor=\"middle\">✕</text><title>{}</title></g>\n",
          oom.at_ns, base, oom.requested_bytes, x - 2, y1, std::max(1.0, y0 - y1), kOom, x, y1 - 1, kOom,
          escape(oom.detail));
      use("out of memory (✕; on the memory chart, the failed request above what was held)",
          fmt::format("<text x=\"8\" y=\"9\" fill=\"{}\" font-weight=\"bold\" text-anchor=\"middle\">✕</text>", kOom));
    }
  }

  int draw_link(std::string& out, const GpuView& gpu, int gpu_index, int y) {
    if (gpu.copies_to_device.empty() && gpu.copies_to_host.empty()) return y;
    const int top = y + 2;
    auto in = link_rates(gpu.copies_to_device);
    auto back = link_rates(gpu.copies_to_host);
    double peak_in = *std::max_element(in.begin(), in.end());
    double peak_back = *std::max_element(back.begin(), back.end());
    out += fmt::format(
        "<g class=\"link\" data-gpu=\"{}\" data-peak-htod-gbps=\"{:.2f}\" data-peak-dtoh-gbps=\"{:.2f}\">\n", gpu_index,
        peak_in, peak_back);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} PCIe link, GB/s</text>\n", label_width_ - 8,
                       top + 12, gpu_label(gpu_index));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#777\">0 to {:.3g}</text>\n",
                       label_width_ - 8, top + 25, link_scale_);
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fbfbfb\" stroke=\"#ddd\"/>\n",
                       label_width_, top, kPlotWidth, kLinkHeight);
    auto area = [&](const std::vector<double>& rates, const char* colour, const char* css) {
      std::string path = fmt::format("M{},{}", label_width_, top + kLinkHeight);
      for (int c = 0; c < kPlotWidth; ++c) {
        double h = link_scale_ > 0 ? rates[static_cast<std::size_t>(c)] / link_scale_ * kLinkHeight : 0;
        path += fmt::format("L{},{:.1f}L{},{:.1f}", label_width_ + c, top + kLinkHeight - h, label_width_ + c + 1,
                            top + kLinkHeight - h);
      }
      path += fmt::format("L{},{}Z", label_width_ + kPlotWidth, top + kLinkHeight);
      out += fmt::format("<path class=\"{}\" d=\"{}\" fill=\"{}\" fill-opacity=\"0.6\"/>\n", css, path, colour);
    };
    area(in, kLinkIn, "htod");
    area(back, kLinkOut, "dtoh");
    use("PCIe rate, host to device",
        fmt::format("<rect width=\"16\" height=\"10\" fill=\"{}\" fill-opacity=\"0.6\"/>", kLinkIn));
    use("PCIe rate, device to host",
        fmt::format("<rect width=\"16\" height=\"10\" fill=\"{}\" fill-opacity=\"0.6\"/>", kLinkOut));
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\">max {:.1f} / {:.1f}</text>\n",
                       label_width_ + kPlotWidth + 6, top + 12, peak_in, peak_back);
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#777\">in / out GB/s</text>\n", label_width_ + kPlotWidth + 6,
                       top + 25);
    out += "</g>\n";
    return top + kLinkHeight + 2;
  }

  int draw_lane_header(std::string& out, const LaneView& lane, int y) {
    out += fmt::format("<rect x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#eef1f5\"/>\n", y,
                       label_width_ + kPlotWidth + kRightMargin, kLaneHeader - 4);
    out += fmt::format(
        "<text x=\"10\" y=\"{}\" font-size=\"13\"><tspan font-weight=\"bold\">{}</tspan><tspan fill=\"#333\" "
        "dx=\"12\">{}</tspan></text>\n",
        y + 13, escape(lane.name), escape(lane.figures));
    return y + kLaneHeader;
  }

  int draw_lane(std::string& out, const LaneView& lane, int y) {
    out += fmt::format("<g class=\"lane\" data-name=\"{}\">\n", escape(lane.name));
    if (!lane.name.empty() || !lane.figures.empty()) y = draw_lane_header(out, lane, y);
    for (const auto& [index, gpu] : lane.gpus) {
      const auto prefix = gpu_label(index);
      if (!gpu.compute.boxes.empty())
        y = draw_row(out, gpu.compute, y, fmt::format("{} compute engine", prefix), index);
      if (!gpu.to_device.boxes.empty())
        y = draw_row(out, gpu.to_device, y, fmt::format("{} copy engine, to device", prefix), index);
      if (!gpu.to_host.boxes.empty())
        y = draw_row(out, gpu.to_host, y, fmt::format("{} copy engine, to host", prefix), index);
      if (options_.worker_rows) {
        for (const auto& [key, row] : gpu.workers)
          y = draw_row(out, row, y, fmt::format("{} {}", prefix, row.label), index);
        if (!gpu.host_calls.boxes.empty())
          y = draw_row(out, gpu.host_calls, y, fmt::format("{} host calls", prefix), index);
      }
      y = draw_link(out, gpu, index, y);
      y = draw_memory(out, gpu, index, y);
    }
    if (options_.job_rows) {
      for (const auto& [index, job] : lane.jobs) {
        Row row{"", "job", job.boxes, {}};
        y = draw_row(out, row, y, fmt::format("{} {}", options_.job_word, index), job.gpu);
      }
    }
    out += "</g>\n";
    return y;
  }

  std::vector<LaneView> lanes_;
  std::string title_;
  PictureOptions options_;
  Nanoseconds from_ns_ = 0;
  Nanoseconds to_ns_ = 1;
  int label_width_ = 200;
  double memory_scale_ = 1;
  double link_scale_ = 0;
  std::set<std::string> legend_seen_;
  std::vector<std::pair<std::string, std::string>> legend_order_;
};

}  // namespace

std::string svg_picture(const std::vector<PictureLane>& lanes, const std::string& title,
                        const PictureOptions& options) {
  std::vector<LaneView> views;
  for (const auto& lane : lanes) {
    if (lane.trace) views.push_back(gather(lane));
  }
  return Picture(std::move(views), title, options).draw();
}

void write_svg_picture(const std::vector<PictureLane>& lanes, const std::filesystem::path& path,
                       const std::string& title, const PictureOptions& options) {
  auto svg = svg_picture(lanes, title, options);
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", path.string()));
  out << svg;
  if (!out) throw std::runtime_error(fmt::format("writing '{}' failed", path.string()));
}

void write_svg_timeline(const Trace& trace, const std::filesystem::path& path, const std::string& title,
                        Nanoseconds from_ns, Nanoseconds to_ns) {
  PictureOptions options;
  options.worker_rows = true;
  options.from_ns = from_ns;
  options.to_ns = to_ns;
  write_svg_picture({PictureLane{"", "", &trace}}, path, title, options);
}

}  // namespace stagehand
