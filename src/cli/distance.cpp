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

/// Rows of A per tile so that one tile of `bytes_per_value` outputs stays near `tile_bytes`.
std::int64_t tile_rows(std::int64_t b_rows, std::int64_t bytes_per_value, std::int64_t tile_bytes)
{
  return std::max<std::int64_t>(1, tile_bytes / (bytes_per_value * std::max<std::int64_t>(1, b_rows)));
}

/// Computes in float32 on the GPU, tile by tile over the rows of A (each tile's output near 1 GiB
/// on the device), copying each tile into the host result.
template <class I>
dense_matrix<float> cuda_distances(const csr_matrix<double, I>& a, const csr_matrix<double, I>& b,
                                   const distance_params& params)
{
  const host_resources host{};
  const cuda_resources res{};
  const auto a32 = cast_values<float>(host, a.view());
  const auto b_dev = to_device(res, cast_values<float>(host, b.view()).view());
  dense_matrix<float> out(host, a.rows(), b.rows());
  const std::int64_t step = tile_rows(b.rows(), 4, std::int64_t{1} << 30);
  std::vector<offset_t> ptr;
  for (std::int64_t r0 = 0; r0 < a.rows(); r0 += step) {
    const std::int64_t r1 = std::min(a.rows(), r0 + step);
    const auto a_dev = to_device(res, row_slice(a32.view(), r0, r1, ptr));
    dense_matrix<float> d(res, r1 - r0, b.rows());
    pairwise_distance(res, a_dev.view(), b_dev.view(), d.view(), params);
    copy(out.data() + r0 * b.rows(), memory_space::host, d.data(), memory_space::device,
         static_cast<std::size_t>(d.rows() * d.cols()), res);
  }
  return out;
}

/// Computes in double on the host (tile by tile over the rows of A) and rounds once to float32.
template <class I>
dense_matrix<float> host_distances(const csr_matrix<double, I>& a, const csr_matrix<double, I>& b,
                                   const distance_params& params)
{
  const host_resources res{};
  dense_matrix<float> out(res, a.rows(), b.rows());
  const std::int64_t step = tile_rows(b.rows(), 8, std::int64_t{256} << 20);
  std::vector<offset_t> ptr;
  for (std::int64_t r0 = 0; r0 < a.rows(); r0 += step) {
    const std::int64_t r1 = std::min(a.rows(), r0 + step);
    const csr_view<double, I> tile = row_slice(a.view(), r0, r1, ptr);
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
  const arguments args(argc, argv, 2, {{"metric", 'm'},
                                       {"p", 0},
                                       {"backend", 0},
                                       {"strategy", 0},
                                       {"output", 'o'}});
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
  const std::string out_path = args.output_path("output");
  const backend be = resolve_backend(args.value("backend").value_or("auto"), true, "distance");
  if (auto s = args.value("strategy")) {
    if (be != backend::cuda) {
      throw usage_error("option '--strategy' selects a CUDA engine strategy; it needs the CUDA "
                        "backend");
    }
    params.strategy = pairwise_strategy_from_string(*s);
  }

  auto a = io::read_matrix<double, std::int64_t>(pos[0]);
  std::optional<csr_matrix<double, std::int64_t>> b_own;
  if (pos.size() == 2) { b_own = io::read_matrix<double, std::int64_t>(pos[1]); }
  const csr_matrix<double, std::int64_t>& b = b_own ? *b_own : a;
  if (a.cols() != b.cols()) {
    throw dimension_mismatch(detail::concat("A (", pos[0], ") has ", a.cols(),
                                            " columns but B (", pos.size() == 2 ? pos[1] : pos[0],
                                            ") has ", b.cols()));
  }
  auto compute = [&](const auto& a_, const auto& b_) {
    return be == backend::cuda ? cuda_distances(a_, b_, params) : host_distances(a_, b_, params);
  };
  dense_matrix<float> out;
  const host_resources res{};
  if (detail::fits_index<std::int32_t>(a.cols())) {
    auto a32 = cast_indices<std::int32_t>(res, a.view());
    auto b32 = b_own ? cast_indices<std::int32_t>(res, b.view()) : csr_matrix<double, std::int32_t>{};
    out = compute(a32, b_own ? b32 : a32);
  } else {
    out = compute(a, b);
  }
  io::write_npy(out_path, dense_view<const float>(out.view()));
  return 0;
}

}  // namespace spira::cli
