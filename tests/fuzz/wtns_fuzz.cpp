// libFuzzer target: groth16::read_wtns on arbitrary bytes.
#include "fuzz_input.hpp"
#include "groth16/errors.hpp"
#include "groth16/witness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = stagehand::fuzz::write_scratch("wtns", ".wtns", data, size);
  try {
    auto witness = stagehand::groth16::read_wtns(path);
    (void)witness;
  } catch (const stagehand::groth16::InputError&) {
  }
  return 0;
}
