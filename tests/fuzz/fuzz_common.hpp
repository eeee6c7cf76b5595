// Shared by the fuzz targets: the readers take paths, so each input is written to a scratch file
// (one per process) before the reader runs. Any spira::error is an accepted outcome; every other
// exception escapes to the driver (or libFuzzer) and is reported as a finding.
#pragma once

#include <spira/error.hpp>

#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace spira::fuzz {

/// A per-process scratch file, removed when the process exits normally. It lives in /dev/shm when
/// that exists (writing to a disk-backed /tmp dominated the run time).
class scratch_file {
 public:
  explicit scratch_file(const std::string& suffix)
      : path_(scratch_dir() / ("spira_fuzz_" + std::to_string(::getpid()) + suffix))
  {
  }
  scratch_file(const scratch_file&) = delete;
  scratch_file& operator=(const scratch_file&) = delete;
  ~scratch_file()
  {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }

  const std::filesystem::path& write(const std::uint8_t* data, std::size_t size)
  {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (f == nullptr) {
      throw std::runtime_error("fuzz: cannot write " + path_.string());
    }
    if (size > 0) {
      std::fwrite(data, 1, size, f);
    }
    std::fclose(f);
    return path_;
  }

 private:
  static std::filesystem::path scratch_dir()
  {
    std::error_code ec;
    if (std::filesystem::is_directory("/dev/shm", ec)) {
      return "/dev/shm";
    }
    return std::filesystem::temp_directory_path();
  }

  std::filesystem::path path_;
};

/// Runs one reader call; spira::error is the documented failure mode and is swallowed.
template <class F>
void expect_spira_error_or_success(F&& f)
{
  try {
    f();
  } catch (const spira::error&) {
    // Malformed input: the reader reported it as documented.
  }
}

}  // namespace spira::fuzz
