// stagehand_binfile_read_bench: how long BinFile takes to read a large regular file (pread into its
// own memory, chunks on several threads) against mapping it as BinFile did before, each followed
// by one pass over every byte on every core (what the readers' decoding does next).
//
//   stagehand_binfile_read_bench [--mib N] [--rounds R] [--dir D] [--cold]
//
// Writes a container of N MiB (default 1536) into D (default $TMPDIR or /tmp), then R rounds
// (default 5) of each way, alternating; prints each round and the medians. --cold drops the file
// from the page cache before every read (posix_fadvise DONTNEED after an fdatasync), for a file
// read from the disk.
#include "groth16/binfile.hpp"

#include "math/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// One pass over every byte on every core, as the decoders read the sections.
std::uint64_t touch(const std::uint8_t* data, std::size_t size) {
  std::atomic<std::uint64_t> total{0};
  stagehand::math::detail::run_ranges(size / 8, 0, 1 << 20, [&](std::size_t begin, std::size_t end) {
    std::uint64_t sum = 0;
    for (std::size_t i = begin; i < end; ++i) {
      std::uint64_t word;
      std::memcpy(&word, data + 8 * i, 8);
      sum += word;
    }
    total += sum;
  });
  return total.load();
}

void drop_from_cache(const fs::path& path) {
  const int file = ::open(path.c_str(), O_RDONLY);
  ::fdatasync(file);
  ::posix_fadvise(file, 0, 0, POSIX_FADV_DONTNEED);
  ::close(file);
}

struct Times {
  double read = 0, total = 0;
};

// BinFile before: the file mapped (MADV_WILLNEED), the container's checks over the mapping.
Times mapped(const fs::path& path, std::uint64_t& sink) {
  const auto start = Clock::now();
  const int file = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info {};
  ::fstat(file, &info);
  const auto size = static_cast<std::size_t>(info.st_size);
  void* address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file, 0);
  ::close(file);
  if (address == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  ::madvise(address, size, MADV_WILLNEED);
  const auto* bytes = static_cast<const std::uint8_t*>(address);
  sink += bytes[0] + bytes[12];  // the header, as parse() reads it
  Times times;
  times.read = seconds_since(start);
  sink += touch(bytes, size);
  times.total = seconds_since(start);
  ::munmap(address, size);
  return times;
}

Times read_binfile(const fs::path& path, std::uint64_t& sink) {
  const auto start = Clock::now();
  stagehand::groth16::BinFile file(path, "test", "test container", 1);
  Times times;
  times.read = seconds_since(start);
  const auto data = file.section(1, "data");
  sink += touch(data.data(), data.size());
  times.total = seconds_since(start);
  return times;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t mib = 1536;
  int rounds = 5;
  bool cold = false;
  const char* tmp = std::getenv("TMPDIR");
  fs::path dir = tmp && *tmp ? tmp : "/tmp";
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--cold")
      cold = true;
    else if (i + 1 < argc && flag == "--mib")
      mib = std::strtoull(argv[++i], nullptr, 10);
    else if (i + 1 < argc && flag == "--rounds")
      rounds = std::max(1, std::atoi(argv[++i]));
    else if (i + 1 < argc && flag == "--dir")
      dir = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--mib N] [--rounds R] [--dir D] [--cold]\n", argv[0]);
      return 2;
    }
  }
  const auto path = dir / ("stagehand-binfile-bench-" + std::to_string(::getpid()));
  {
    // magic "test", version 1, one section (id 1) of the rest.
    const std::uint64_t data_size = (std::uint64_t{mib} << 20) - 24;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const std::uint32_t header[3] = {0x74736574u, 1, 1};
    out.write(reinterpret_cast<const char*>(header), sizeof header);
    const std::uint32_t id = 1;
    out.write(reinterpret_cast<const char*>(&id), 4);
    out.write(reinterpret_cast<const char*>(&data_size), 8);
    std::vector<char> block(std::size_t{1} << 20);
    for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>(i * 131 + 7);
    for (std::uint64_t left = data_size; left > 0;) {
      const auto n = std::min<std::uint64_t>(left, block.size());
      out.write(block.data(), static_cast<std::streamsize>(n));
      left -= n;
    }
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
  }
  std::printf("file: %zu MiB, %u hardware threads, %s cache\n", mib, std::thread::hardware_concurrency(),
              cold ? "cold" : "warm");
  std::uint64_t sink = 0;
  if (!cold) {  // the page cache filled once, for both ways alike
    read_binfile(path, sink);
  }
  std::vector<double> map_read, map_total, pread_read, pread_total;
  for (int round = 0; round < rounds; ++round) {
    if (cold) drop_from_cache(path);
    const auto a = mapped(path, sink);
    if (cold) drop_from_cache(path);
    const auto b = read_binfile(path, sink);
    std::printf("round %d: mapped %.3f s (+ pass: %.3f s); BinFile read %.3f s (+ pass: %.3f s)\n", round + 1, a.read,
                a.total, b.read, b.total);
    map_read.push_back(a.read), map_total.push_back(a.total);
    pread_read.push_back(b.read), pread_total.push_back(b.total);
  }
  std::printf(
      "median of %d: mapped %.3f s, with the pass %.3f s; BinFile (pread) %.3f s, with the pass %.3f s (%llu)\n",
      rounds, median(map_read), median(map_total), median(pread_read), median(pread_total),
      static_cast<unsigned long long>(sink % 10));
  fs::remove(path);
  return 0;
}
