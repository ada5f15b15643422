// libFuzzer target: groth16::read_any_zkey on arbitrary bytes (the reader of either curve).
#include "fuzz_input.hpp"
#include "groth16/errors.hpp"
#include "groth16/zkey.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = stagehand::fuzz::write_scratch("zkey", ".zkey", data, size);
  try {
    auto key = stagehand::groth16::read_any_zkey(path);
    (void)key;
  } catch (const stagehand::groth16::InputError&) {
  }
  return 0;
}
