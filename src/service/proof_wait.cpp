#include "service/proof_wait.hpp"

#include "util/assert.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <utility>

namespace stagehand::service {
namespace {

namespace asio = boost::asio;

// What the engine's thread and the executor share: the executor, until the answer has been given.
// The engine's callback posts only while it is there, so that it never posts to an executor whose
// caller has gone, and keeps no copy of it (nor the timer, which the executor's thread destroys).
struct Race {
  std::mutex mutex;
  std::optional<asio::any_io_executor> executor;  // empty once answered
};

// The executor's side: kept alive by the timer's pending wait until it fires or is cancelled.
struct PendingWait {
  PendingWait(asio::any_io_executor executor, ProofWait wait, std::function<void(HttpResponse)> done)
      : timer(executor), proof(std::move(wait.proof)), done(std::move(done)) {
    race->executor = std::move(executor);
  }

  // On the executor: the first of the proof's end and the timer answers; the other finds it done.
  void finish() {
    {
      std::lock_guard lock(race->mutex);
      if (!race->executor) return;
      race->executor.reset();
    }
    timer.cancel();
    // Its own copy: `done` may end the caller's use of this wait.
    auto answer = std::exchange(done, nullptr);
    answer(proof_response(proof));
  }

  asio::steady_timer timer;
  engine::ProofHandle proof;
  std::function<void(HttpResponse)> done;
  std::shared_ptr<Race> race = std::make_shared<Race>();
};

}  // namespace

void answer_proof_wait(asio::any_io_executor executor, ProofWait wait, std::function<void(HttpResponse)> done) {
  STAGEHAND_ASSERT(done != nullptr, "proof {}: a wait with no one to answer", wait.proof.id());
  const auto most = wait.most;
  auto pending = std::make_shared<PendingWait>(executor, std::move(wait), std::move(done));
  pending->timer.expires_after(most);
  pending->timer.async_wait([pending](const boost::system::error_code&) { pending->finish(); });
  std::weak_ptr<PendingWait> weak = pending;
  // Runs on the thread that ends the proof, or here at once where it has ended already.
  pending->proof.on_end([race = pending->race, weak](const engine::ProofHandle&) {
    std::lock_guard lock(race->mutex);
    if (!race->executor) return;
    asio::post(*race->executor, [weak] {
      if (auto alive = weak.lock()) alive->finish();
    });
  });
}

}  // namespace stagehand::service
