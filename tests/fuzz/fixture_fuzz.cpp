// libFuzzer target: load_fixture on arbitrary text (written to a scratch .toml file: the loader
// takes a path). The fixture is only loaded, not replayed.
#include "config/config_table.hpp"
#include "fuzz_input.hpp"
#include "runner/fixture.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = stagehand::fuzz::write_scratch("fixture", ".toml", data, size);
  try {
    auto fixture = stagehand::load_fixture(path);
    (void)fixture;
  } catch (const stagehand::ConfigError&) {
  }
  return 0;
}
