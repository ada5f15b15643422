#pragma once
// Errors of the Groth16 inputs: each names the file and, where it applies, the section.

#include <stdexcept>
#include <string>

namespace stagehand::groth16 {

// A .zkey, .wtns or .r1cs file that is missing, truncated, malformed or does not belong with the
// other inputs (another curve, another circuit).
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace stagehand::groth16
