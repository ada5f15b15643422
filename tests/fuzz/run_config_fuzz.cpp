// libFuzzer target: parse_run_config on arbitrary text, then the coordinator settings of every
// policy it names (settings_for checks what the parser let through).
#include "config/config_table.hpp"
#include "config/run_config.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto config = stagehand::parse_run_config(text, "fuzz.toml");
    for (auto policy : config.policies) (void)stagehand::settings_for(config, policy);
  } catch (const stagehand::ConfigError&) {
  }
  return 0;
}
