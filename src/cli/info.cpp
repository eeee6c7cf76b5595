// spira info FILE: what a matrix file holds (format, extents, nonzeros, density, row degrees).
#include "args.hpp"
#include "commands.hpp"

#include <spira/io.hpp>

#include <algorithm>
#include <cstdio>
#include <span>

namespace spira::cli {

int run_info(int argc, char** argv)
{
  const arguments args(argc, argv, 2, {});
  if (args.positional().size() != 1) {
    throw usage_error("expects exactly one FILE (usage: spira info FILE)");
  }
  const std::string path = args.positional()[0];
  const io::matrix_file_info info = io::describe(path);
  // int64 indices: any extent the readers accept; double values: exact for every integer count.
  auto m = io::read_matrix<double, std::int64_t>(path);

  // The row degrees overwrite the row pointers (degree i reads pointers i and i + 1 before
  // pointer i is overwritten): no second array of rows entries; m is not used as a matrix after.
  const std::span<offset_t> degree(m.row_ptr(), static_cast<std::size_t>(m.rows()));
  for (std::int64_t i = 0; i < m.rows(); ++i) {
    degree[i] = m.row_ptr()[i + 1] - m.row_ptr()[i];
  }
  const auto empty = std::count(degree.begin(), degree.end(), offset_t{0});
  const auto [least, most] = std::minmax_element(degree.begin(), degree.end());
  const double cells = double(m.rows()) * double(m.cols());

  std::printf("file: %s\n", path.c_str());
  std::printf("format: %s", info.format_name.c_str());
  if (info.format == io::file_format::matrix_market) {
    std::printf(", %s %s", info.field.c_str(), info.symmetry.c_str());
  }
  std::printf("\nrows: %lld\ncols: %lld\nnnz: %lld\n", static_cast<long long>(m.rows()),
              static_cast<long long>(m.cols()), static_cast<long long>(m.nnz()));
  if (info.nnz != m.nnz()) {
    std::printf("entries in file: %lld\n", static_cast<long long>(info.nnz));
  }
  std::printf("density: %.6g\n", cells > 0 ? double(m.nnz()) / cells : 0.0);
  if (m.rows() > 0) {
    // The lower median for an even number of rows, so the value is always a degree that occurs.
    const long long min_degree = *least, max_degree = *most;
    const auto median = degree.begin() + static_cast<std::ptrdiff_t>((degree.size() - 1) / 2);
    std::nth_element(degree.begin(), median, degree.end());
    std::printf("row degree min / median / max: %lld / %lld / %lld\n", min_degree,
                static_cast<long long>(*median), max_degree);
  } else {
    std::printf("row degree min / median / max: - / - / -\n");
  }
  std::printf("empty rows: %lld\n", static_cast<long long>(empty));
  return 0;
}

}  // namespace spira::cli
