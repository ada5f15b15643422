#pragma once
// The policies' workers (one file each beside this one), and what serial, prestage and two-lock
// share: a, b and c in plainly allocated device buffers (PlainMemory).

#include "coordinator/job_memory.hpp"
#include "coordinator/policy/policy.hpp"
#include "coordinator/worker.hpp"

#include <memory>
#include <vector>

namespace stagehand {

std::unique_ptr<Worker> make_serial_worker(Run& run, Lane& lane, int index);
std::unique_ptr<Worker> make_prestage_worker(Run& run, Lane& lane, int index);
std::unique_ptr<Worker> make_two_lock_worker(Run& run, Lane& lane, int index);
std::unique_ptr<Worker> make_budgeted_worker(Run& run, Lane& lane, int index);

// The plain buffers as a job's inputs, each one's upload told by `uploaded` (none: ordered before
// the compute stream).
JobInputs plain_inputs(const PlainMemory& memory, EventHandle uploaded);
// Uploads a, b, c and the extra input (where there are) from `host`, in staged_input_sizes's
// order, into the plain buffers on `stream`.
asio::awaitable<void> upload_plain_inputs(Device& device, PlainMemory& memory, const std::vector<HostRange>& host,
                                          StreamHandle stream);

}  // namespace stagehand
