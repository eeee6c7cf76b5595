// spira distance A [B] --metric M [--p P] [--backend ...] -o OUT.npy
// Dense float32 distances between the rows of A and the rows of B (B defaults to A).
#include "args.hpp"
#include "commands.hpp"

#include <spira/convert.hpp>
#include <spira/distance.hpp>
#include <spira/io.hpp>

#include <algorithm>
#include <optional>

namespace spira::cli {

namespace {

/// Rows of A computed per host tile: the double-precision tile stays near 256 MiB.
std::int64_t tile_rows(std::int64_t b_rows)
{
  constexpr std::int64_t tile_bytes = std::int64_t{256} << 20;
  return std::max<std::int64_t>(1, tile_bytes / (8 * std::max<std::int64_t>(1, b_rows)));
}

/// Computes in double on the host (tile by tile over the rows of A) and rounds once to float32.
template <class I>
dense_matrix<float> host_distances(const csr_matrix<double, I>& a, const csr_matrix<double, I>& b,
                                   const distance_params& params)
{
  const host_resources res{};
  dense_matrix<float> out(res, a.rows(), b.rows());
  const std::int64_t step = tile_rows(b.rows());
  for (std::int64_t r0 = 0; r0 < a.rows(); r0 += step) {
    const std::int64_t r1 = std::min(a.rows(), r0 + step);
    const csr_view<double, I> av = a.view();
    const offset_t* rp = av.row_ptr + r0;
    // A view of rows [r0, r1): row pointers are absolute, so rebase them into a small copy.
    std::vector<offset_t> tile_ptr(rp, rp + (r1 - r0) + 1);
    for (auto& p : tile_ptr) { p -= rp[0]; }
    const csr_view<double, I> tile{r1 - r0,          av.cols,
                                   rp[r1 - r0] - rp[0], tile_ptr.data(),
                                   av.col_idx + rp[0], av.values + rp[0],
                                   memory_space::host};
    dense_matrix<double> d(res, r1 - r0, b.rows());
    pairwise_distance(res, tile, b.view(), d.view(), params);
    std::transform(d.data(), d.data() + d.rows() * d.cols(), out.data() + r0 * b.rows(),
                   [](double x) { return static_cast<float>(x); });
  }
  return out;
}

}  // namespace

int run_distance(int argc, char** argv)
{
  const arguments args(argc, argv, 2,
                       {{"metric", 'm'}, {"p", 0}, {"backend", 0}, {"output", 'o'}});
  const auto& pos = args.positional();
  if (pos.empty() || pos.size() > 2) {
    throw usage_error("expects A [B] (usage: spira distance A [B] --metric M -o OUT.npy)");
  }
  distance_params params{.metric = metric_from_string(args.required("metric"))};
  if (auto p = args.real("p")) {
    if (params.metric != metric::minkowski) {
      throw usage_error("option '--p' applies to --metric minkowski only");
    }
    params.p = *p;
  }
  const std::string out_path = args.required("output");
  // The CUDA pairwise engine is not part of this version: auto runs on the host.
  resolve_backend(args.value("backend").value_or("auto"), /*cuda_supported=*/false, "distance");

  auto a = io::read_matrix<double, std::int64_t>(pos[0]);
  std::optional<csr_matrix<double, std::int64_t>> b_own;
  if (pos.size() == 2) { b_own = io::read_matrix<double, std::int64_t>(pos[1]); }
  const csr_matrix<double, std::int64_t>& b = b_own ? *b_own : a;
  if (a.cols() != b.cols()) {
    throw dimension_mismatch(detail::concat("A (", pos[0], ") has ", a.cols(),
                                            " columns but B (", pos.size() == 2 ? pos[1] : pos[0],
                                            ") has ", b.cols()));
  }
  dense_matrix<float> out;
  const host_resources res{};
  if (detail::fits_index<std::int32_t>(a.cols())) {
    auto a32 = cast_indices<std::int32_t>(res, a.view());
    auto b32 = b_own ? cast_indices<std::int32_t>(res, b.view()) : csr_matrix<double, std::int32_t>{};
    out = host_distances(a32, b_own ? b32 : a32, params);
  } else {
    out = host_distances(a, b, params);
  }
  io::write_npy(out_path, dense_view<const float>(out.view()));
  return 0;
}

}  // namespace spira::cli
