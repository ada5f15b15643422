// The C test's helper (tests/capi/supraseal_c2_test.sh), so that the C caller needs no field
// arithmetic and the check needs no trust in the ABI under test:
//   supraseal_c2_tool assignment <r1cs> <wtns> <out.bin> <public.json>
//       the circuit's assignment as bellperson synthesises it (tests/support/filecoin_assignment.hpp)
//       in the flat layout below, and its public signals as snarkjs's public.json
//   supraseal_c2_tool proof-json <proof.bin> <index> <proof.json>
//       the index-th 384-byte groth16_proof of a file, as snarkjs's proof.json
// The assignment's layout, for supraseal_c2_test.c: six u64 (inputs, aux, abc_size and the
// popcounts of a_aux, b_inp, b_aux), the bitmaps' words (a_aux, b_inp, b_aux: (bits + 63) / 64
// each), then a, b, c, the inputs and the aux values as 32-byte Montgomery fr_t; all little-endian.

#include "support/filecoin_assignment.hpp"
#include "groth16/assignment_prover.hpp"
#include "groth16/json.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/witness.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

using namespace stagehand;

namespace {

void write_all(std::ofstream& out, const void* data, std::size_t bytes) {
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

void write_values(std::ofstream& out, const std::vector<math::Fr>& values) {
  for (const auto& value : values) write_all(out, value.montgomery_limbs().data(), 32);
}

void write_assignment(const std::string& r1cs_path, const std::string& wtns_path, const std::string& out_path,
                      const std::string& public_path) {
  const auto r1cs = groth16::read_r1cs(r1cs_path);
  const auto witness = groth16::read_wtns(wtns_path);
  const auto assignment = testing::filecoin_assignment(r1cs, witness);
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  const std::uint64_t header[] = {assignment.inputs.size(),  assignment.aux.size(),     assignment.a.size(),
                                  assignment.a_aux_popcount, assignment.b_inp_popcount, assignment.b_aux_popcount};
  write_all(out, header, sizeof(header));
  for (const auto* words : {&assignment.a_aux_words, &assignment.b_inp_words, &assignment.b_aux_words}) {
    write_all(out, words->data(), words->size() * sizeof(std::uint64_t));
  }
  for (const auto* values : {&assignment.a, &assignment.b, &assignment.c, &assignment.inputs, &assignment.aux}) {
    write_values(out, *values);
  }
  if (!out.flush()) throw std::runtime_error("cannot write " + out_path);
  std::ofstream(public_path) << groth16::public_json(std::span(assignment.inputs).subspan(1));
}

void write_proof_json(const std::string& proof_path, std::size_t index, const std::string& out_path) {
  std::ifstream in(proof_path, std::ios::binary);
  const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (bytes.size() < (index + 1) * groth16::kSuprasealProofBytes) throw std::runtime_error(proof_path + ": too short");
  const auto proof = groth16::decode_supraseal_proof(std::span<const std::uint8_t, groth16::kSuprasealProofBytes>(
      bytes.data() + index * groth16::kSuprasealProofBytes, groth16::kSuprasealProofBytes));
  std::ofstream(out_path) << groth16::proof_json(proof);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 5 && args[0] == "assignment") {
      write_assignment(args[1], args[2], args[3], args[4]);
    } else if (args.size() == 4 && args[0] == "proof-json") {
      write_proof_json(args[1], std::stoul(args[2]), args[3]);
    } else {
      std::fprintf(stderr,
                   "usage: supraseal_c2_tool assignment R1CS WTNS OUT.bin PUBLIC.json"
                   " | proof-json PROOF.bin INDEX OUT.json\n");
      return 2;
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "supraseal_c2_tool: %s\n", error.what());
    return 1;
  }
  return 0;
}
