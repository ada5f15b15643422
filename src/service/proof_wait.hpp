#pragma once
// Answering a GET /v1/proofs/ID?wait=SECONDS (api.hpp's ProofWait) without a thread that waits: a
// timer on the transport's executor and the proof's end callback (ProofHandle::on_end) race, and
// the first to reach the executor answers with the proof's state then.

#include "service/api.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <functional>

namespace stagehand::service {

// Calls `done` once, on `executor`, with proof_response(wait.proof) when the proof ends or
// wait.most has passed, whichever comes first. The engine's thread only posts to the executor,
// and only until `done` has been called: a caller that has its answer may go, executor and all.
// The executor must outlive the wait until `done` is called; no copy of it is kept after.
void answer_proof_wait(boost::asio::any_io_executor executor, ProofWait wait, std::function<void(HttpResponse)> done);

}  // namespace stagehand::service
