#pragma once
// The figures `stagehand prove` and `stagehand bench prove` print after their proofs, from the
// engine's report of the run (proving::BatchFigures): where the proofs' time went, the key's
// set-up, the kernels, the pairing check, the devices' memory, the per-GPU table.

#include "proving/proof_batch.hpp"

#include <chrono>
#include <cstddef>
#include <string>

namespace stagehand::cli {

// What the figures are about, beside the run's own report.
struct ProvedSoFar {
  std::size_t proofs = 0;  // the command's proofs, made or not
  std::size_t failed = 0;
  double proving_seconds = 0;                   // from the first submit to the run's end
  std::chrono::steady_clock::time_point start;  // of the whole command
  bool on_gpu = false;
  bool abc_on_host = false;
  std::size_t checked = 0;   // proofs that passed the pairing check
  double check_seconds = 0;  // their checks' seconds, summed
  std::string r1cs_note;     // ", witnesses checked against ...", or empty
};

// From the first job taking its GPU's lock to the last releasing it (device clock), over the jobs
// that held one (none: jobs 0).
struct HeldWindow {
  Nanoseconds first = -1;
  Nanoseconds last = -1;
  std::size_t jobs = 0;
};
HeldWindow held_window(const RunReport& report);
// "NAME 1.23 ms (4 launches), ...": each kernel's time and launches from `before` to `after` (the
// devices' counters), divided by `count` (the jobs, for figures per job).
std::string kernels_between(const std::vector<DeviceCounters>& before, const std::vector<DeviceCounters>& after,
                            std::uint64_t count);

// "X of N proofs in ..." (also without a run: every witness was refused before one began).
void print_proof_count(const ProvedSoFar& so_far, const proving::BatchFigures* figures);
// Everything after that line: the set-up, the kernels, the time breakdown, the check, the memory.
void print_run_figures(const proving::BatchFigures& figures, const ProvedSoFar& so_far);

}  // namespace stagehand::cli
