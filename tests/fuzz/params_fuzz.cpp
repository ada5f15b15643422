// libFuzzer target: groth16::read_params on arbitrary bytes.
#include "fuzz_input.hpp"
#include "groth16/errors.hpp"
#include "groth16/params.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = stagehand::fuzz::write_scratch("params", ".params", data, size);
  try {
    auto key = stagehand::groth16::read_params(path);
    (void)key;
  } catch (const stagehand::groth16::InputError&) {
  }
  return 0;
}
