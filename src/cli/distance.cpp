// spira distance A [B] --metric M [--p P] [--backend ...] [--memory-budget-mb MB] -o OUT.npy
// Dense float32 distances between the rows of A and the rows of B (B defaults to A), computed in
// blocks of rows of A that fit the memory budget and appended to the file as they are done: the
// whole matrix is never held.
#include "args.hpp"
#include "commands.hpp"
#include "limits.hpp"
#include "matrix_input.hpp"

#include <spira/convert.hpp>
#include <spira/distance.hpp>
#include <spira/io.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

namespace spira::cli {

namespace {

/// Bytes per output value that a block of rows holds: on the host a float64 tile and its float32
/// copy; on CUDA a tile of the compute type on the device, its host copy and the float32 block.
constexpr std::int64_t host_bytes_per_value = 8 + 4;
constexpr std::int64_t cuda_float_bytes_per_value = 4 + 4;
constexpr std::int64_t cuda_double_bytes_per_value = 8 + 8 + 4;
/// The CUDA tile also stays near 1 GiB of device memory (the former fixed tile).
constexpr std::int64_t cuda_tile_bytes = std::int64_t{1} << 30;

/// Rows of A per block so that a block of `bytes_per_value` outputs fits `budget`; usage_error when
/// not even one row fits.
std::int64_t block_rows(std::int64_t a_rows, std::int64_t b_rows, std::int64_t bytes_per_value,
                        std::size_t budget)
{
  const std::int64_t row_bytes = bytes_per_value * std::max<std::int64_t>(1, b_rows);
  const auto rows = static_cast<std::int64_t>(budget / static_cast<std::size_t>(row_bytes));
  if (rows < 1) {
    throw usage_error(detail::concat("option '--memory-budget-mb': ", budget >> 20,
                                     " MiB cannot hold one row of distances (", b_rows,
                                     " values: ", (row_bytes + (1 << 20) - 1) >> 20, " MiB)"));
  }
  return std::clamp<std::int64_t>(rows, 1, std::max<std::int64_t>(a_rows, 1));
}

/// Computes on the GPU in ValueT (float when every value is exactly a float32, else double), block
/// by block over the rows of A, rounding once to float32.
template <class ValueT, class IndexT>
void cuda_distances(const host_resources& host, const csr_matrix<double, IndexT>& a,
                    const csr_matrix<double, IndexT>& b, const distance_params& params,
                    std::int64_t step, io::npy_row_writer<float>& out)
{
  const cuda_resources res{};
  const auto av = cast_values<ValueT>(host, a.view());
  const auto b_dev = to_device(res, cast_values<ValueT>(host, b.view()).view());
  std::vector<offset_t> ptr;
  for (std::int64_t r0 = 0; r0 < a.rows(); r0 += step) {
    const std::int64_t r1 = std::min(a.rows(), r0 + step);
    const auto a_dev = to_device(res, row_slice(av.view(), r0, r1, ptr));
    dense_matrix<ValueT> d(res, r1 - r0, b.rows());
    pairwise_distance(res, a_dev.view(), b_dev.view(), d.view(), params);
    dense_matrix<ValueT> host_copy(host, r1 - r0, b.rows());
    copy(host_copy.data(), memory_space::host, d.data(), memory_space::device,
         static_cast<std::size_t>(d.rows() * d.cols()), res);
    if constexpr (std::is_same_v<ValueT, float>) {
      out.append(dense_view<const float>(host_copy.view()));
    } else {
      dense_matrix<float> block(host, r1 - r0, b.rows());
      std::transform(host_copy.data(), host_copy.data() + d.rows() * d.cols(), block.data(),
                     [](double x) { return static_cast<float>(x); });
      out.append(dense_view<const float>(block.view()));
    }
  }
}

/// Computes in double on the host, block by block over the rows of A, and rounds once to float32.
template <class IndexT>
void host_distances(const host_resources& res, const csr_matrix<double, IndexT>& a,
                    const csr_matrix<double, IndexT>& b, const distance_params& params,
                    std::int64_t step, io::npy_row_writer<float>& out)
{
  std::vector<offset_t> ptr;
  for (std::int64_t r0 = 0; r0 < a.rows(); r0 += step) {
    const std::int64_t r1 = std::min(a.rows(), r0 + step);
    const csr_view<double, IndexT> tile = row_slice(a.view(), r0, r1, ptr);
    dense_matrix<double> d(res, r1 - r0, b.rows());
    pairwise_distance(res, tile, b.view(), d.view(), params);
    dense_matrix<float> block(res, r1 - r0, b.rows());
    std::transform(d.data(), d.data() + d.rows() * d.cols(), block.data(),
                   [](double x) { return static_cast<float>(x); });
    out.append(dense_view<const float>(block.view()));
  }
}

}  // namespace

int run_distance(int argc, char** argv)
{
  const arguments args(argc, argv, 2,
                       {{"metric", 'm'},
                        {"p", 0},
                        {"backend", 0},
                        {"strategy", 0},
                        {"memory-budget-mb", 0},
                        {"threads", 0},
                        {"output", 'o'}});
  const auto& pos = args.positional();
  if (pos.empty() || pos.size() > 2) {
    throw usage_error("expects A [B] (usage: spira distance A [B] --metric M -o OUT.npy)");
  }
  distance_params params{.metric = parse_metric(args)};
  params.p = minkowski_p(args, params.metric);
  (void)memory_budget(args);  // a bad --memory-budget-mb fails before any work
  const host_resources res = host_resources_of(args);
  const std::string out_path = args.output_path("output", ".npy");
  const backend be = resolve_backend(args.value("backend").value_or("auto"), true, "distance");
  if (auto s = args.value("strategy")) {
    if (be != backend::cuda) {
      throw usage_error(
          "option '--strategy' selects a CUDA engine strategy; it needs the CUDA "
          "backend");
    }
    params.strategy = parse_strategy(*s);
    check_strategy(params.metric, params.strategy);
  }

  auto a = io::read_matrix<double, std::int64_t>(pos[0]);
  std::optional<csr_matrix<double, std::int64_t>> b_own;
  if (pos.size() == 2) {
    b_own = io::read_matrix<double, std::int64_t>(pos[1]);
  }
  const csr_matrix<double, std::int64_t>& b = b_own ? *b_own : a;
  const std::string& b_path = pos.size() == 2 ? pos[1] : pos[0];
  if (a.cols() != b.cols()) {
    throw dimension_mismatch(detail::concat("A (", pos[0], ") has ", a.cols(), " columns but B (",
                                            b_path, ") has ", b.cols()));
  }
  check_values_for_metric(a, pos[0], params.metric);
  if (b_own) {
    check_values_for_metric(b, b_path, params.metric);
  }

  // The .npy: a header of at most 128 bytes for two extents, then rows(A) x rows(B) float32.
  check_free_space(out_path, 128 + std::uint64_t(a.rows()) * std::uint64_t(b.rows()) * 4);
  // The default budget is taken now, with the inputs in memory: it is a share of what is left.
  const std::size_t budget = memory_budget(args);
  // The GPU computes in float when every value is exactly a float32, else in double (rounding
  // the data would change the answer).
  const bool float_exact = values_fit_float(a.view()) && values_fit_float(b.view());
  const std::int64_t cuda_value_bytes = float_exact ? 4 : 8;
  std::int64_t step = block_rows(
      a.rows(), b.rows(),
      be == backend::cuda ? (float_exact ? cuda_float_bytes_per_value : cuda_double_bytes_per_value)
                          : host_bytes_per_value,
      budget);
  if (be == backend::cuda) {
    step = std::min(
        step, std::max<std::int64_t>(
                  1, cuda_tile_bytes / (cuda_value_bytes * std::max<std::int64_t>(1, b.rows()))));
  }
  warn_if_budget_slows("distance",
                       {.query_rows = a.rows(),
                        .index_rows = b.rows(),
                        .cols = a.cols(),
                        .query_nnz = a.nnz(),
                        .index_nnz = b.nnz(),
                        .query_tile = step,
                        .index_tile = b.rows()},
                       budget);

  io::npy_row_writer<float> out(out_path, a.rows(), b.rows());
  auto compute = [&](const auto& a_, const auto& b_) {
    if (be == backend::cuda && float_exact) {
      cuda_distances<float>(res, a_, b_, params, step, out);
    } else if (be == backend::cuda) {
      cuda_distances<double>(res, a_, b_, params, step, out);
    } else {
      host_distances(res, a_, b_, params, step, out);
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  if (detail::fits_index<std::int32_t>(a.cols())) {
    auto a32 = cast_indices<std::int32_t>(res, a.view());
    auto b32 =
        b_own ? cast_indices<std::int32_t>(res, b.view()) : csr_matrix<double, std::int32_t>{};
    compute(a32, b_own ? b32 : a32);
  } else {
    compute(a, b);
  }
  out.commit();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(summary_stream(out_path),
               "spira distance: %lld x %lld distances, %s, %s, %.3f s -> %s\n", (long long)a.rows(),
               (long long)b.rows(), to_string(params.metric), be == backend::cuda ? "cuda" : "host",
               seconds, out_path.c_str());
  return 0;
}

}  // namespace spira::cli
