// stagehand_zkey_read_bench: where reading a .zkey goes (`stagehand prove` reads the key first).
//
//   stagehand_zkey_read_bench FILE [--rounds R]
//
// R rounds (default 3) of: read_zkey (every section decoded and checked, the point sets read
// straight into their own memory), the container read whole (BinFile, every byte into its
// buffer), and the coefficient section decoded on one thread and on every thread
// (groth16::detail::decode_coefficients, which read_zkey runs on every thread: the one-thread time
// is what it took before). Prints each round, the medians in ms, and the process's peak resident
// memory after the first read_zkey (the first thing it does: read_zkey's own peak).
#include "groth16/binfile.hpp"
#include "groth16/zkey.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}
double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double peak_resident_gib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB
}

}  // namespace

int main(int argc, char** argv) {
  using namespace stagehand::groth16;
  if (argc < 2) {
    std::fprintf(stderr, "usage: stagehand_zkey_read_bench FILE [--rounds R]\n");
    return 2;
  }
  const std::string path = argv[1];
  int rounds = 3;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--rounds") rounds = std::max(1, std::atoi(argv[i + 1]));
  }
  std::printf("%s, %u hardware threads\n", path.c_str(), std::thread::hardware_concurrency());
  std::printf("%-6s %12s %12s %18s %18s\n", "round", "file ms", "read_zkey ms", "coeff 1 thread ms", "coeff all ms");
  std::vector<double> file_ms, key_ms, one_ms, all_ms;
  std::size_t record_count = 0;
  double peak_gib = 0;
  for (int round = 0; round < rounds; ++round) {
    auto start = Clock::now();
    const ProvingKey key = read_zkey(path);
    key_ms.push_back(ms_since(start));
    if (round == 0) peak_gib = peak_resident_gib();
    start = Clock::now();
    BinFile file(path, "zkey", "snarkjs proving key (.zkey)", 2);
    file_ms.push_back(ms_since(start));
    const auto section = file.section(4, "coefficients");
    const auto records = section.subspan(4);
    std::vector<Coefficient> out(key.coefficients.size());
    record_count = out.size();
    start = Clock::now();
    const auto bad_one = detail::decode_coefficients(records, key.domain_size, key.n_vars, out, 1);
    one_ms.push_back(ms_since(start));
    start = Clock::now();
    const auto bad_all = detail::decode_coefficients(records, key.domain_size, key.n_vars, out, 0);
    all_ms.push_back(ms_since(start));
    if (bad_one != out.size() || bad_all != out.size()) {
      std::fprintf(stderr, "a record out of range in a key read_zkey accepted\n");
      return 1;
    }
    std::printf("%-6d %12.1f %12.1f %18.1f %18.1f\n", round + 1, file_ms.back(), key_ms.back(), one_ms.back(),
                all_ms.back());
  }
  std::printf("%-6s %12.1f %12.1f %18.1f %18.1f   (%zu records)\n", "median", median(file_ms), median(key_ms),
              median(one_ms), median(all_ms), record_count);
  std::printf("peak resident memory after the first read_zkey: %.2f GiB\n", peak_gib);
  return 0;
}
