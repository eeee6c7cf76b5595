// Fuzz target: the .npy reader (header dict parser, dtype conversion, fortran order) and the
// dense-to-CSR path of read_matrix.
#include "fuzz_common.hpp"

#include <spira/io.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  static spira::fuzz::scratch_file scratch(".npy");
  const auto& path = scratch.write(data, size);
  spira::io::read_options opts;
  opts.max_rows = std::int64_t{1} << 16;
  using spira::fuzz::expect_spira_error_or_success;
  expect_spira_error_or_success([&] { (void)spira::io::read_npy_header(path); });
  expect_spira_error_or_success([&] { (void)spira::io::read_npy<double>(path); });
  expect_spira_error_or_success([&] { (void)spira::io::read_npy<std::int32_t>(path); });
  expect_spira_error_or_success([&] { (void)spira::io::read_npy_vector<std::int64_t>(path); });
  expect_spira_error_or_success(
      [&] { (void)spira::io::read_matrix<float, std::int32_t>(path, opts); });
  return 0;
}
