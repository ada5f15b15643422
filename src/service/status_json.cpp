#include "service/status_json.hpp"

#include "groth16/curve.hpp"

#include <nlohmann/json.hpp>

namespace stagehand::engine {

std::string status_json(const EngineStatus& status) {
  nlohmann::json out;
  out["backend"] = status.backend;
  out["uptime_seconds"] = status.uptime_seconds;
  out["stopping"] = status.stopping;
  nlohmann::json by_priority;
  for (const auto priority : {Priority::low, Priority::normal, Priority::high, Priority::critical}) {
    by_priority[to_string(priority)] = status.queued_by_priority[static_cast<std::size_t>(priority)];
  }
  out["queue"] = {{"queued", status.queued},
                  {"queued_by_priority", by_priority},
                  {"capacity", status.queue_capacity},
                  {"running", status.running},
                  {"witness_bytes", status.witness_bytes}};
  out["proofs"] = {{"accepted", status.accepted},
                   {"done", status.done},
                   {"failed", status.failed},
                   {"cancelled", status.cancelled},
                   {"batches", status.batches}};
  out["gpus"] = nlohmann::json::array();
  for (const auto& gpu : status.gpus) {
    out["gpus"].push_back({{"index", gpu.index},
                           {"running", gpu.running},
                           {"proofs_ended", gpu.done},
                           {"vram_capacity_bytes", gpu.vram_capacity_bytes},
                           {"vram_reserved_bytes", gpu.vram_reserved_bytes},
                           {"device_used_bytes", gpu.device_used_bytes},
                           {"pinned_host_budget_bytes", gpu.pinned_host_budget_bytes},
                           {"pinned_host_kept_bytes", gpu.pinned_host_kept_bytes},
                           {"pinned_host_allocations", gpu.pinned_host_allocations},
                           {"busy_seconds", gpu.busy_seconds},
                           {"lost", gpu.lost}});
  }
  out["keys"] = nlohmann::json::array();
  for (const auto& key : status.keys) {
    out["keys"].push_back({{"name", key.name},
                           {"path", key.path},
                           {"format", key.format},
                           {"curve", groth16::snarkjs_curve_name(key.curve)},
                           {"host_bytes", key.host_bytes},
                           {"resident", key.resident},
                           {"queued", key.queued},
                           {"running", key.running},
                           {"unloading", key.unloading},
                           {"read_seconds", key.read_seconds},
                           {"device_set_ups", key.device_set_ups},
                           {"device_bytes", key.device_bytes},
                           {"proof_bytes", key.proof_bytes},
                           {"layout", key.layout}});
    if (!key.r1cs_path.empty()) out["keys"].back()["r1cs"] = key.r1cs_path;
  }
  return out.dump();
}

}  // namespace stagehand::engine
