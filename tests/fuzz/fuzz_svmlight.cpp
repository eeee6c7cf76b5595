// Fuzz target: the svmlight/libsvm reader in every index-base mode, and the edge-list reader (the
// other line-oriented "id value" text format).
#include "fuzz_common.hpp"

#include <spira/io.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  static spira::fuzz::scratch_file scratch(".svm");
  const auto& path = scratch.write(data, size);
  spira::io::read_options opts;
  opts.max_rows = std::int64_t{1} << 16;
  using spira::fuzz::expect_spira_error_or_success;
  for (auto base : {spira::io::index_base::automatic, spira::io::index_base::zero,
                    spira::io::index_base::one}) {
    opts.svmlight_index_base = base;
    expect_spira_error_or_success(
        [&] { (void)spira::io::read_svmlight<double, std::int32_t>(path, opts); });
  }
  opts.svmlight_features = 5;
  expect_spira_error_or_success(
      [&] { (void)spira::io::read_svmlight<float, std::int64_t>(path, opts); });
  expect_spira_error_or_success(
      [&] { (void)spira::io::read_edge_list<float, std::int32_t>(path, opts); });
  return 0;
}
