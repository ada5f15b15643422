#include "proving/batch_trace.hpp"

#include "coordinator/run_report_format.hpp"
#include "trace/svg_timeline.hpp"
#include "util/assert.hpp"

#include <algorithm>
#include <limits>

namespace stagehand::proving {

void write_batch_trace(const Trace& trace, const RunReport& report, const BatchTraceFiles& files,
                       const std::string& title) {
  STAGEHAND_ASSERT(!files.trace.empty() && !files.picture.empty(),
                   "a batch's trace of policy {} given no file to go to", report.policy);
  trace.write_chrome_json(files.trace);
  PictureOptions options;
  options.worker_rows = true;
  options.job_rows = true;
  options.job_word = "proof";
  if (files.own_window) {
    options.from_ns = std::numeric_limits<Nanoseconds>::max();
    for (const auto& event : trace.events()) {
      options.from_ns = std::min(options.from_ns, event.start_ns);
      options.to_ns = std::max(options.to_ns, event.end_ns);
    }
  }
  write_svg_picture({PictureLane{report.policy, headline_figures(report), &trace}}, files.picture, title, options);
}

}  // namespace stagehand::proving
