// GET /v1/proofs/ID?wait=SECONDS (service/api.hpp, service/proof_wait.hpp) on the functional
// simulator's engine: a wait that the proof's end answers (with the proof, long before the wait
// runs out), a wait that runs out while the proof is queued (with its state, and nothing posted
// to the executor when the proof ends later), what needs no wait answered at once, a wait above
// serve.request_timeout_s cut to it, and bad values refused naming the field. Proofs sit in the
// queue behind a gate that holds the engine's dispatcher (engine_harness.hpp); the test waits on
// the answers themselves, running the executor until it has nothing left to do.

#define BOOST_TEST_MODULE service_proof_wait
#include <boost/test/unit_test.hpp>

#include "service/api.hpp"
#include "service/proof_wait.hpp"
#include "support/engine_harness.hpp"

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <variant>

using namespace stagehand;
using namespace stagehand::testing;
using nlohmann::json;

namespace {

service::Reply get(service::Api& api, const std::string& target) {
  return api.handle(service::HttpRequest{"GET", target, "", {}});
}

std::string proof_target(const ProofHandle& proof, const std::string& query) {
  return "/v1/proofs/" + std::to_string(proof.id()) + query;
}

// A proof of the test key held in the queue behind `gate`'s first proof.
struct Queued {
  Gate gate;  // before the engine: it outlives the dispatcher's last look at it
  EngineConfig settings = testing::config();
  std::optional<Engine> engine;
  std::optional<service::Api> api;
  ProofHandle first, queued;

  explicit Queued(double request_timeout_s = 600) {
    settings.serve.request_timeout_s = request_timeout_s;
    engine.emplace(settings);
    engine->load_key("small", files().zkey);
    api.emplace(*engine, settings.serve);
    first = hold_dispatcher(*engine, gate);
    queued = engine->submit("small", files().wtns(4, 5));
  }
  ~Queued() { gate.open(); }
};

// The answer answer_proof_wait gives `wait` on `io`, once io has nothing left to run.
std::optional<service::HttpResponse> answered(boost::asio::io_context& io, service::ProofWait wait) {
  std::optional<service::HttpResponse> answer;
  service::answer_proof_wait(io.get_executor(), std::move(wait), [&answer](service::HttpResponse response) {
    BOOST_TEST(!answer.has_value(), "answered twice");
    answer = std::move(response);
  });
  io.run();
  return answer;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_wait_is_answered_by_the_proofs_end) {
  Queued held;
  auto reply = get(*held.api, proof_target(held.queued, "?wait=600"));
  BOOST_TEST_REQUIRE(std::holds_alternative<service::ProofWait>(reply));
  auto wait = std::get<service::ProofWait>(std::move(reply));
  BOOST_TEST((wait.most == std::chrono::seconds(600)));
  BOOST_TEST(wait.proof.id() == held.queued.id());

  boost::asio::io_context io;
  std::optional<service::HttpResponse> answer;
  service::answer_proof_wait(io.get_executor(), std::move(wait),
                             [&answer](service::HttpResponse response) { answer = std::move(response); });
  BOOST_TEST(io.poll() == 0u);  // queued: nothing to answer yet
  BOOST_TEST(!answer.has_value());
  held.gate.open();
  // Returns once the answer is given: the proof's end cancels the 600 s timer.
  io.run();
  BOOST_TEST_REQUIRE(answer.has_value());
  BOOST_TEST(answer->status == 200u);
  const auto body = json::parse(answer->body);
  BOOST_TEST(body["state"] == "done", answer->body);
  BOOST_TEST(body["id"] == std::to_string(held.queued.id()));
  BOOST_TEST(body.contains("proof"));
  BOOST_TEST(body.contains("timings"));
  check_done(held.queued, 4, 5);
}

BOOST_AUTO_TEST_CASE(a_wait_that_runs_out_answers_the_proofs_state) {
  Queued held;
  auto reply = get(*held.api, proof_target(held.queued, "?wait=0.05"));
  BOOST_TEST_REQUIRE(std::holds_alternative<service::ProofWait>(reply));
  auto wait = std::get<service::ProofWait>(std::move(reply));
  BOOST_TEST((wait.most == std::chrono::milliseconds(50)));
  Counter later_callbacks;
  boost::asio::io_context io;
  const auto answer = answered(io, std::move(wait));
  BOOST_TEST_REQUIRE(answer.has_value());
  BOOST_TEST(answer->status == 200u);
  const auto body = json::parse(answer->body);
  BOOST_TEST(body["state"] == "queued", answer->body);
  BOOST_TEST(!body.contains("proof"));

  // The proof ends after the answer: the wait's end callback, registered before this one, runs
  // first and posts nothing to the executor, whose caller has its answer.
  held.queued.on_end([&later_callbacks](const ProofHandle&) { later_callbacks.add(); });
  held.gate.open();
  later_callbacks.wait_for_at_least(1);
  io.restart();
  BOOST_TEST(io.poll() == 0u);
  check_done(held.queued, 4, 5);
}

BOOST_AUTO_TEST_CASE(what_needs_no_wait_is_answered_at_once_and_long_waits_are_cut) {
  Queued held(/*request_timeout_s=*/2);
  // Above serve.request_timeout_s: cut to it.
  const auto long_wait = get(*held.api, proof_target(held.queued, "?wait=100000"));
  BOOST_TEST_REQUIRE(std::holds_alternative<service::ProofWait>(long_wait));
  BOOST_TEST((std::get<service::ProofWait>(long_wait).most == std::chrono::seconds(2)));
  // wait=0 and no wait: the state now.
  for (const char* query : {"?wait=0", ""}) {
    const auto reply = get(*held.api, proof_target(held.queued, query));
    BOOST_TEST_REQUIRE(std::holds_alternative<service::HttpResponse>(reply), query);
    BOOST_TEST(json::parse(std::get<service::HttpResponse>(reply).body)["state"] == "queued", query);
  }
  held.gate.open();
  check_done(held.first, 2, 3);
  check_done(held.queued, 4, 5);
  // An ended proof: answered at once, whatever the wait.
  const auto ended = get(*held.api, proof_target(held.queued, "?wait=30"));
  BOOST_TEST_REQUIRE(std::holds_alternative<service::HttpResponse>(ended));
  BOOST_TEST(json::parse(std::get<service::HttpResponse>(ended).body)["state"] == "done");
}

BOOST_AUTO_TEST_CASE(bad_waits_are_refused_naming_the_field) {
  Queued held;
  for (const std::string value : {"soon", "-1", "inf", "nan", "", "1s", "0x10"}) {
    BOOST_TEST_CONTEXT("wait=" << value) {
      const auto reply = get(*held.api, proof_target(held.queued, "?wait=" + value));
      BOOST_TEST_REQUIRE(std::holds_alternative<service::HttpResponse>(reply));
      const auto& response = std::get<service::HttpResponse>(reply);
      BOOST_TEST(response.status == 400u);
      BOOST_TEST(json::parse(response.body)["error"].get<std::string>().starts_with(
                     "wait=" + value + ": expected the seconds to wait for the proof's end"),
                 response.body);
    }
  }
  const auto unknown = get(*held.api, proof_target(held.queued, "?wait=1&colour=red"));
  BOOST_TEST_REQUIRE(std::holds_alternative<service::HttpResponse>(unknown));
  BOOST_TEST(std::get<service::HttpResponse>(unknown).status == 400u);
  BOOST_TEST(std::get<service::HttpResponse>(unknown).body.find("unknown query parameter 'colour'") !=
             std::string::npos);
  // An unknown proof is still a 404, waiting or not.
  const auto missing = get(*held.api, "/v1/proofs/99999?wait=5");
  BOOST_TEST_REQUIRE(std::holds_alternative<service::HttpResponse>(missing));
  BOOST_TEST(std::get<service::HttpResponse>(missing).status == 404u);
}
