// Fuzz target: the Matrix Market reader (plain and gzip), header parsing and describe().
#include "fuzz_common.hpp"

#include <spira/io.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  static spira::fuzz::scratch_file scratch(".mtx");
  const auto& path = scratch.write(data, size);
  spira::io::read_options opts;
  opts.max_rows = std::int64_t{1} << 16;  // keep row-pointer arrays small while fuzzing
  using spira::fuzz::expect_spira_error_or_success;
  expect_spira_error_or_success(
      [&] { (void)spira::io::read_mm<double, std::int32_t>(path, opts); });
  expect_spira_error_or_success([&] { (void)spira::io::read_mm<float, std::int64_t>(path, opts); });
  expect_spira_error_or_success([&] { (void)spira::io::describe(path, opts); });
  return 0;
}
