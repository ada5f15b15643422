#pragma once
// The policies, to replay the production prover's history and compare (docs/design.md). Each is
// a kind of worker, in a file of its own beside this one:
//   serial     one lock per GPU around the whole GPU program; a/b/c uploaded from pageable
//              memory inside it (serial.cpp).
//   prestage   pin a/b/c in place and upload before a single lock, into plainly allocated
//              buffers, with a free-memory check and margin, a device synchronise and a pool trim
//              (each switchable), and a fallback that uploads inside the lock (prestage.cpp).
//   two-lock   the same pre-staging under a memory lock, then a compute lock that any waiter may
//              get next: the abandoned design (two_lock.cpp).
//   budgeted   the VramBudget, grant order = lock order, pinned-pool staging in chunks that keep
//              off the lock holder's uploads: the default (budgeted.cpp).

#include "device/types.hpp"

#include <memory>
#include <string>
#include <vector>

namespace stagehand {

enum class Policy { serial, prestage, two_lock, budgeted };
std::string to_string(Policy policy);
Policy policy_from_string(const std::string& name);  // throws std::invalid_argument
const std::vector<std::string>& policy_names();

// Prestage's and two-lock's steps, as the production prover's fix took them (each switchable, to
// replay the incident without one).
struct PrestageSwitches {
  bool free_memory_check = true;
  Bytes margin_bytes = 512 * kMiB;
  bool synchronize_device = true;
  bool trim_pool = true;
};

struct Run;
struct Lane;
class Worker;

// The worker of `policy`, number `index` on `lane`.
std::unique_ptr<Worker> make_worker(Policy policy, Run& run, Lane& lane, int index);

}  // namespace stagehand
