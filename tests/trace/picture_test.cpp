// The pictures show what a run did: one lane per policy on one time axis, a memory chart whose
// peak is the report's VRAM peak, the card's cap, an out-of-memory mark wherever an allocation
// failed and none where none did; the SVG renders (rsvg-convert) to a PNG of its own size; and
// the trace with its memory counters is still Chrome trace JSON that Perfetto opens.
#define BOOST_TEST_MODULE pictures
#include <boost/test/unit_test.hpp>

#include "runner/fixture.hpp"
#include "coordinator/run_report_format.hpp"
#include "config/run_config.hpp"
#include "runner/sim_runner.hpp"
#include "trace/svg_timeline.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

using namespace stagehand;
namespace fs = std::filesystem;

namespace {

// The SVG's elements of one class, each as its opening tag's attributes.
std::vector<std::map<std::string, std::string>> elements(const std::string& svg, const std::string& css_class) {
  std::vector<std::map<std::string, std::string>> found;
  std::regex tag("<(g|path|line) class=\"" + css_class + "\"([^>]*)>");
  std::regex attribute("([a-z-]+)=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tag); it != std::sregex_iterator(); ++it) {
    std::map<std::string, std::string> attributes;
    const std::string rest = (*it)[2];
    for (auto a = std::sregex_iterator(rest.begin(), rest.end(), attribute); a != std::sregex_iterator(); ++a) {
      attributes[(*a)[1]] = (*a)[2];
    }
    found.push_back(std::move(attributes));
  }
  return found;
}

// The SVG of each lane, in order: from its opening tag to the next lane's.
std::vector<std::string> lanes_of(const std::string& svg) {
  std::vector<std::string> lanes;
  const std::string open = "<g class=\"lane\"";
  for (auto at = svg.find(open); at != std::string::npos;) {
    auto next = svg.find(open, at + 1);
    lanes.push_back(svg.substr(at, next == std::string::npos ? std::string::npos : next - at));
    at = next;
  }
  return lanes;
}

std::uint64_t number(const std::map<std::string, std::string>& attributes, const std::string& name) {
  auto found = attributes.find(name);
  BOOST_REQUIRE_MESSAGE(found != attributes.end(), "no attribute " << name);
  return static_cast<std::uint64_t>(std::stod(found->second));
}

fs::path scratch(const std::string& name) {
  auto folder = fs::temp_directory_path() / fmt::format("stagehand-picture-test-{}", ::getpid());
  fs::create_directories(folder);
  return folder / name;
}

// Renders the SVG with rsvg-convert and checks the PNG: its signature and the SVG's size.
void check_renders(const std::string& svg, const std::string& name) {
  BOOST_REQUIRE_MESSAGE(std::system("command -v rsvg-convert >/dev/null 2>&1") == 0,
                        "rsvg-convert is missing: scripts/install-deps.sh installs librsvg2-bin");
  auto svg_path = scratch(name + ".svg");
  auto png_path = scratch(name + ".png");
  std::ofstream(svg_path) << svg;
  auto command = fmt::format("rsvg-convert -o '{}' '{}'", png_path.string(), svg_path.string());
  BOOST_REQUIRE_MESSAGE(std::system(command.c_str()) == 0, command << " failed");
  std::ifstream png(png_path, std::ios::binary);
  std::string header(24, '\0');
  png.read(header.data(), 24);
  BOOST_REQUIRE_EQUAL(header.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  auto be32 = [&](std::size_t at) {
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(header[at])) << 24) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(header[at + 1])) << 16) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(header[at + 2])) << 8) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(header[at + 3]));
  };
  std::smatch size;
  BOOST_REQUIRE(std::regex_search(svg, size, std::regex("<svg [^>]*width=\"([0-9]+)\" height=\"([0-9]+)\"")));
  BOOST_CHECK_EQUAL(be32(16), std::stoul(size[1]));
  BOOST_CHECK_EQUAL(be32(20), std::stoul(size[2]));
  png.close();
  fs::remove(svg_path);
  fs::remove(png_path);
}

struct DefaultRun {
  RunConfig config = load_run_config("config/default.toml");
  std::vector<SimulatedRun> runs;
  std::string svg;
  DefaultRun() {
    std::vector<PictureLane> lanes;
    for (auto policy : config.policies) {
      runs.push_back(run_on_simulator(config, policy));
      BOOST_REQUIRE_MESSAGE(runs.back().error.empty(), runs.back().error);
    }
    for (const auto& run : runs)
      lanes.push_back(PictureLane{run.report.policy, headline_figures(run.report), &run.system->trace()});
    svg = svg_picture(lanes, "default run");
  }
};

const DefaultRun& default_run() {
  static DefaultRun run;
  return run;
}

FixtureOutcome replay(const std::string& path) {
  auto outcome = replay_fixture(load_fixture(path));
  BOOST_REQUIRE_MESSAGE(outcome.passed(), path << " did not meet its expectations");
  return outcome;
}

std::string fixture_picture(const std::string& name, const FixtureOutcome& outcome) {
  PictureOptions options;
  options.worker_rows = true;
  return svg_picture({PictureLane{name, headline_figures(outcome.report), &outcome.system->trace()}}, name, options);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_run_picture_has_one_lane_per_policy_on_one_axis) {
  const auto& run = default_run();
  BOOST_REQUIRE_GE(run.config.policies.size(), 2u);
  BOOST_CHECK_EQUAL(elements(run.svg, "axis").size(), 1u);
  auto lanes = elements(run.svg, "lane");
  BOOST_REQUIRE_EQUAL(lanes.size(), run.config.policies.size());
  for (std::size_t i = 0; i < lanes.size(); ++i)
    BOOST_CHECK_EQUAL(lanes[i]["data-name"], to_string(run.config.policies[i]));
  // The common axis reaches the end of the slowest policy's run.
  auto axis = elements(run.svg, "axis").front();
  Nanoseconds longest = 0;
  for (const auto& r : run.runs) longest = std::max(longest, r.report.makespan_ns);
  BOOST_CHECK_GE(static_cast<Nanoseconds>(number(axis, "data-to-ns")), longest);
  // Every lane has the compute engine's and the copy engines' rows.
  for (const auto& lane : lanes_of(run.svg)) {
    BOOST_CHECK_EQUAL(elements(lane, "row").size() >= 2, true);
    BOOST_CHECK(lane.find("data-kind=\"compute\"") != std::string::npos);
    BOOST_CHECK(lane.find("data-kind=\"copy-htod\"") != std::string::npos);
    BOOST_CHECK_EQUAL(elements(lane, "link").size(), static_cast<std::size_t>(run.config.gpus));
  }
  check_renders(run.svg, "run");
}

BOOST_AUTO_TEST_CASE(each_lanes_memory_peak_is_the_reports_vram_peak_under_the_cap) {
  const auto& run = default_run();
  auto lanes = lanes_of(run.svg);
  BOOST_REQUIRE_EQUAL(lanes.size(), run.runs.size());
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const auto& report = run.runs[i].report;
    auto charts = elements(lanes[i], "memory");
    BOOST_REQUIRE_EQUAL(charts.size(), static_cast<std::size_t>(run.config.gpus));
    std::uint64_t peak = 0;
    for (auto& chart : charts) peak = std::max(peak, number(chart, "data-peak-held-bytes"));
    BOOST_CHECK_MESSAGE(peak == report.vram_peak_bytes,
                        report.policy << ": chart peak " << peak << ", report " << report.vram_peak_bytes);
    auto caps = elements(lanes[i], "cap");
    BOOST_REQUIRE_EQUAL(caps.size(), static_cast<std::size_t>(run.config.gpus));
    for (auto& cap : caps) BOOST_CHECK_EQUAL(number(cap, "data-bytes"), run.config.vram_cap_bytes);
    BOOST_CHECK_LE(peak, run.config.vram_cap_bytes);
    // The default run runs out of memory under no policy: no mark.
    BOOST_CHECK_EQUAL(report.oom_count, 0u);
    BOOST_CHECK_EQUAL(elements(lanes[i], "oom").size(), 0u);
    // Only the budgeted policy reserves.
    bool budgeted = report.policy == "budgeted";
    BOOST_CHECK_EQUAL(elements(lanes[i], "reserved").size(), budgeted ? charts.size() : 0u);
    if (budgeted) {
      for (auto& chart : charts) BOOST_CHECK_LE(number(chart, "data-peak-reserved-bytes"), run.config.vram_cap_bytes);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_incident_fixture_is_marked_where_its_allocations_cross_the_cap) {
  auto outcome = replay("fixtures/01-dual-worker-incident.toml");
  BOOST_REQUIRE_GT(outcome.report.oom_count, 0u);
  auto svg = fixture_picture("01-dual-worker-incident", outcome);
  auto marks = elements(svg, "oom");
  BOOST_CHECK_EQUAL(marks.size(), outcome.report.oom_count);
  auto cap = number(elements(svg, "cap").at(0), "data-bytes");
  for (auto& mark : marks) {
    // What was held and what was asked for together pass the card's memory.
    BOOST_CHECK_GT(number(mark, "data-held-bytes") + number(mark, "data-requested-bytes"), cap);
  }
  BOOST_CHECK_EQUAL(number(elements(svg, "memory").at(0), "data-peak-held-bytes"), outcome.report.vram_peak_bytes);
  check_renders(svg, "incident");
}

BOOST_AUTO_TEST_CASE(the_budgeted_fixture_has_no_mark_and_its_reservations_stay_under_the_cap) {
  auto outcome = replay("fixtures/09-budgeted-dual-worker.toml");
  auto svg = fixture_picture("09-budgeted-dual-worker", outcome);
  BOOST_CHECK_EQUAL(elements(svg, "oom").size(), 0u);
  BOOST_CHECK_EQUAL(elements(svg, "job-oom").size(), 0u);
  auto chart = elements(svg, "memory").at(0);
  auto cap = number(elements(svg, "cap").at(0), "data-bytes");
  BOOST_CHECK_GT(number(chart, "data-peak-reserved-bytes"), 0u);
  BOOST_CHECK_LE(number(chart, "data-peak-reserved-bytes"), cap);
  BOOST_CHECK_EQUAL(number(chart, "data-peak-held-bytes"), outcome.report.vram_peak_bytes);
  check_renders(svg, "budgeted");
}

BOOST_AUTO_TEST_CASE(the_trace_with_counters_is_still_chrome_trace_json) {
  const auto& run = default_run();
  std::ostringstream out;
  run.runs.back().system->trace().write_chrome_json(out);
  auto json = nlohmann::json::parse(out.str());
  std::set<std::string> counters;
  for (const auto& event : json.at("traceEvents")) {
    if (event.at("ph") == "C") {
      BOOST_REQUIRE(event.at("args").at("bytes").is_number_integer());
      counters.insert(event.at("name").get<std::string>());
    }
  }
  for (const char* name : {"VRAM held", "VRAM in use", "VRAM capacity", "VRAM reserved (budget)"}) {
    BOOST_CHECK_MESSAGE(counters.contains(name), "no counter " << name);
  }
}

// A span that starts before the device clock's origin (an engine step recorded on a GPU's clock
// just after the device opened) still writes valid JSON, its time negative.
BOOST_AUTO_TEST_CASE(negative_times_write_valid_chrome_json) {
  stagehand::Trace trace;
  const auto track = trace.track("engine", "dispatcher");
  trace.span(track, "queued", "engine", -538'123, 1'500);
  std::ostringstream out;
  trace.write_chrome_json(out);
  const auto json = nlohmann::json::parse(out.str());
  bool found = false;
  for (const auto& event : json["traceEvents"]) {
    if (event.value("name", "") != "queued") continue;
    found = true;
    BOOST_CHECK_CLOSE(event["ts"].get<double>(), -538.123, 1e-9);
    BOOST_CHECK_CLOSE(event["dur"].get<double>(), 539.623, 1e-9);
  }
  BOOST_CHECK(found);
}
