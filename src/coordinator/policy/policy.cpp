#include "coordinator/policy/policy.hpp"

#include "coordinator/policy/workers.hpp"
#include "util/assert.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

namespace stagehand {

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names{"serial", "prestage", "two-lock", "budgeted"};
  return names;
}

std::string to_string(Policy policy) { return policy_names().at(static_cast<std::size_t>(policy)); }

Policy policy_from_string(const std::string& name) {
  const auto& names = policy_names();
  auto found = std::find(names.begin(), names.end(), name);
  if (found == names.end()) {
    throw std::invalid_argument(fmt::format("unknown policy '{}' (one of: {})", name, fmt::join(names, ", ")));
  }
  return static_cast<Policy>(found - names.begin());
}

std::unique_ptr<Worker> make_worker(Policy policy, Run& run, Lane& lane, int index) {
  switch (policy) {
    case Policy::serial: return make_serial_worker(run, lane, index);
    case Policy::prestage: return make_prestage_worker(run, lane, index);
    case Policy::two_lock: return make_two_lock_worker(run, lane, index);
    case Policy::budgeted: return make_budgeted_worker(run, lane, index);
  }
  throw std::invalid_argument("make_worker: unknown policy");
}

// Built outside the coroutines: GCC 12 miscompiles braced lists that live across a co_await.
JobInputs plain_inputs(const PlainMemory& memory, EventHandle uploaded) {
  return JobInputs{.a = memory.a(),
                   .b = memory.b(),
                   .c = memory.c(),
                   .a_uploaded = uploaded,
                   .b_uploaded = uploaded,
                   .c_uploaded = uploaded,
                   .extra = memory.extra(),
                   .extra_uploaded = memory.extra() ? uploaded : EventHandle{},
                   .c_host = {},
                   .extra_host = {}};
}

asio::awaitable<void> upload_plain_inputs(Device& device, PlainMemory& memory, const std::vector<HostRange>& host,
                                          StreamHandle stream) {
  const std::size_t expected = (memory.b() ? 3 : 1) + (memory.extra() ? 1 : 0);
  STAGEHAND_ASSERT(host.size() == expected, "{} host buffers for {} device inputs", host.size(), expected);
  co_await device.copy_to_device(memory.a(), host[0], stream);
  if (memory.b()) {
    co_await device.copy_to_device(memory.b(), host[1], stream);
    co_await device.copy_to_device(memory.c(), host[2], stream);
  }
  if (memory.extra()) co_await device.copy_to_device(memory.extra(), host.back(), stream);
}

}  // namespace stagehand
