#include "engine/engine_config.hpp"

#include "config/config_table.hpp"

#include <climits>
#include <cmath>
#include <stdexcept>

namespace stagehand::engine {
namespace {

void read_engine_table(const ConfigTable& table, EngineSettings& settings) {
  settings.queue_capacity = static_cast<std::size_t>(table.integer_in("queue_capacity", 64, 1, 1'000'000));
  settings.max_batch = static_cast<std::size_t>(table.integer_in("max_batch", 256, 1, 10'000));
  settings.promote_after_s = table.number_in("promote_after_s", 60, 0.001, 86400);
  settings.request_id_retention_s = table.number_in("request_id_retention_s", 600, 0, 7 * 86400);
  const auto policy = table.choice("policy", "budgeted", policy_names());
  try {
    settings.policy = policy_from_string(policy);
  } catch (const std::invalid_argument& error) {
    table.fail("policy", error.what());
  }
  settings.verify = table.boolean("verify").value_or(true);
  settings.threads = static_cast<unsigned>(table.integer_in("threads", 0, 0, 4096));
  if (table.contains("seed")) settings.seed = static_cast<std::uint64_t>(table.integer_in("seed", 0, 0, INT64_MAX));
  settings.abc_step = groth16::parse_abc_step(table.choice("abc", "auto", groth16::abc_step_choices(/*with_auto=*/true)));
  settings.key_sets =
      groth16::parse_set_placement(table.choice("key_sets", "auto", groth16::set_placement_choices()));
  settings.precompute_bases = table.boolean("precompute_bases").value_or(false);
  settings.keep_key_on_device = table.boolean("keep_key_on_device").value_or(true);
  if (auto dir = table.string("trace_dir")) {
    if (dir->empty()) table.fail("trace_dir", "an empty path: leave the key out for no traces");
    settings.trace_dir = *dir;
  }
  settings.trace_runs = static_cast<std::size_t>(table.integer_in("trace_runs", 8, 1, 100'000));
  const double default_mib = static_cast<double>(settings.stream_buffer_bytes) / kMiB;
  settings.stream_buffer_bytes = static_cast<Bytes>(table.number_in("stream_buffer_mib", default_mib, 1, 1 << 16) * kMiB);
  table.reject_unknown_keys();
}

void read_serve_table(const ConfigTable& table, ServeSettings& settings) {
  const double mib = table.number_in("max_request_mib", 256, 0.001, 1 << 20);
  settings.max_request_bytes = static_cast<std::size_t>(std::llround(mib * 1024 * 1024));
  settings.max_connections = static_cast<int>(table.integer_in("max_connections", 64, 1, 100'000));
  settings.request_timeout_s = table.number_in("request_timeout_s", 600, 0.1, 86400);
  table.reject_unknown_keys();
}

EngineConfig read_document(const ConfigDocument& document, const std::filesystem::path& source) {
  EngineConfig config;
  config.run.source = source;
  auto root = document.root();
  if (root.contains("workload")) {
    root.fail("workload",
              "the engine proves the proofs it is given, so it has no [workload]; the proofs' layout keys (abc, key_sets, "
              "stream_buffer_mib) go in [engine]");
  }
  read_run_config(root, config.run);
  if (auto table = root.table("engine")) read_engine_table(*table, config.engine);
  if (auto table = root.table("serve")) read_serve_table(*table, config.serve);
  root.reject_unknown_keys();
  return config;
}

}  // namespace

EngineConfig load_engine_config(const std::filesystem::path& path) { return read_document(ConfigDocument::load(path), path); }

EngineConfig parse_engine_config(std::string_view text, const std::string& source_name) {
  return read_document(ConfigDocument::parse(text, source_name), source_name);
}

}  // namespace stagehand::engine
