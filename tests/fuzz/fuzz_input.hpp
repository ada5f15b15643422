#pragma once
// Helpers of the fuzz targets. The readers take paths, not bytes (and are another engineer's to
// change), so each input is written to one file per process and the reader is given its path.
// A reader may reject an input only with its documented error (groth16::InputError,
// ConfigError); anything else that escapes -- another exception, an abort, a sanitizer report --
// is a finding.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace stagehand::fuzz {

// The scratch file for this process: under $TMPDIR, named after the target and the pid, removed
// at exit. `extension` matters to the fixture loader, which takes the name from the stem.
inline const std::filesystem::path& scratch_path(const char* target, const char* extension) {
  static const std::filesystem::path path = [&] {
    const char* tmp = std::getenv("TMPDIR");
    auto directory = std::filesystem::path(tmp && *tmp ? tmp : "/tmp");
    auto file = directory / (std::string("stagehand-fuzz-") + target + "-" + std::to_string(::getpid()) + extension);
    static struct Remover {
      std::filesystem::path path;
      ~Remover() {
        std::error_code ignored;
        std::filesystem::remove(path, ignored);
      }
    } remover{file};
    return file;
  }();
  return path;
}

inline const std::filesystem::path& write_scratch(const char* target, const char* extension, const std::uint8_t* data,
                                                  std::size_t size) {
  const auto& path = scratch_path(target, extension);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::perror("stagehand fuzz: cannot write the scratch file");
    std::abort();
  }
  return path;
}

}  // namespace stagehand::fuzz
