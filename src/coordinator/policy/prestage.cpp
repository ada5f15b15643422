// prestage: the production prover's pre-staging (pinned_in_place.hpp) with one compute lock; the
// staging itself is unguarded, as the engine had it when two workers ran out of memory.

#include "coordinator/policy/pinned_in_place.hpp"

namespace stagehand {
namespace {

class PrestageWorker final : public PinnedInPlaceWorker {
 public:
  using PinnedInPlaceWorker::PinnedInPlaceWorker;

 private:
  asio::awaitable<bool> stage(JobRecord& job, PlainMemory& memory, const StagedHostBuffers& host,
                              EventHandle uploaded) override {
    co_return co_await try_stage(job, memory, host, uploaded);
  }
};

}  // namespace

std::unique_ptr<Worker> make_prestage_worker(Run& run, Lane& lane, int index) {
  return std::make_unique<PrestageWorker>(run, lane, index);
}

}  // namespace stagehand
