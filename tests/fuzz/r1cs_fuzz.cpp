// libFuzzer target: groth16::read_any_r1cs on arbitrary bytes (the reader of either curve).
#include "fuzz_input.hpp"
#include "groth16/errors.hpp"
#include "groth16/r1cs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = stagehand::fuzz::write_scratch("r1cs", ".r1cs", data, size);
  try {
    auto r1cs = stagehand::groth16::read_any_r1cs(path);
    (void)r1cs;
  } catch (const stagehand::groth16::InputError&) {
  }
  return 0;
}
