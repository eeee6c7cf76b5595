// Fuzz target: the zip reader (directory, zip64 fields, inflate, CRC) and the scipy sparse .npz
// reader, plus named-array access.
#include "fuzz_common.hpp"

#include <spira/io.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  static spira::fuzz::scratch_file scratch(".npz");
  const auto& path = scratch.write(data, size);
  spira::io::read_options opts;
  opts.max_rows = std::int64_t{1} << 16;
  using spira::fuzz::expect_spira_error_or_success;
  expect_spira_error_or_success(
      [&] { (void)spira::io::read_npz<double, std::int32_t>(path, opts); });
  expect_spira_error_or_success(
      [&] { (void)spira::io::read_npz<float, std::int64_t>(path, opts); });
  expect_spira_error_or_success([&] {
    for (const auto& name : spira::io::npz_names(path)) {
      expect_spira_error_or_success([&] { (void)spira::io::read_npz_array<double>(path, name); });
    }
  });
  return 0;
}
