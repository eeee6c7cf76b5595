// spira: the intersection strategy of the CUDA pairwise engine: one block per row of A walks the
// CSC of B and accumulates the products that exist in a shared-memory tile of output columns.
// The device pieces are in pairwise_intersection_device.cuh, the kernels in
// pairwise_intersection_kernels.cuh; here the setup and the host driver.
#pragma once

#include <spira/cuda/detail/pairwise_context.cuh>
#include <spira/cuda/detail/pairwise_intersection_device.cuh>
#include <spira/cuda/detail/pairwise_intersection_kernels.cuh>
#include <spira/cuda/detail/pairwise_selection.cuh>

#include <memory>
#include <optional>

namespace spira::detail {

#if defined(__CUDACC__)

// ---- setup and driver ---------------------------------------------------------------------------

/// col, val = the K selection candidates of every row of m (row_candidates_kernel; Left: m is A).
template <class D, class ValueT, class IndexT, bool Left>
void selection_candidates_of(pairwise_context<D, ValueT, IndexT>& ctx, csr_view<ValueT, IndexT> m,
                             buffer<IndexT>& col, buffer<ValueT>& val)
{
  const std::size_t n = std::size_t(std::max<std::int64_t>(m.rows, 1)) * selection_candidates;
  col = buffer<IndexT>(ctx.res, n, "selection candidates (columns)");
  val = buffer<ValueT>(ctx.res, n, "selection candidates (values)");
  row_candidates_kernel<D, ValueT, IndexT, Left>
      <<<row_grid(m.rows, ctx.sms), cuda_pairwise_policy::row_threads, 0, ctx.res.stream>>>(
          ctx.d, m.row_ptr, m.col_idx, m.values, m.rows, col.data(), val.data());
  SPIRA_CHECK_LAUNCH();
}

/// What the intersection kernels read of B alone: its CSC, and its NAMM corrections and one-sided
/// terms (sum ⊕) or selection candidates (min / max ⊕). Built from ctx.b (B as ⊗ sees it, over the
/// context's columns) for one call, or once for a prepared B (pairwise_prepared), which keeps it
/// for every call on B's declared columns.
template <class D, class ValueT, class IndexT>
struct intersection_b_side {
  static constexpr int N = pairwise_context<D, ValueT, IndexT>::N;
  csr_matrix<ValueT, IndexT> bt;
  buffer<terms<double, N>> corr_b, bt_side;
  buffer<IndexT> top_b_col;
  buffer<ValueT> top_b_val;

  // B was validated by the caller: its transpose skips the second validation (a device round
  // trip).
  explicit intersection_b_side(pairwise_context<D, ValueT, IndexT>& ctx)
      : bt(transpose_validated(ctx.res, ctx.b))
  {
    if constexpr (sum_namm_v<D, ValueT>) {
      corr_b = ctx.template corrections<false>(ctx.b);
      bt_side = buffer<terms<double, N>>(ctx.res, std::size_t(std::max<std::int64_t>(bt.nnz(), 1)),
                                         "one-sided terms of B");
      if (bt.nnz() > 0) {
        right_sides_kernel<D, ValueT, N>
            <<<elementwise_grid(bt.nnz(), ctx.sms), cuda_pairwise_policy::row_threads, 0,
               ctx.res.stream>>>(ctx.d, bt.values(), bt.nnz(), bt_side.data());
        SPIRA_CHECK_LAUNCH();
      }
    }
    if constexpr (selection_namm_v<D, ValueT>) {
      selection_candidates_of<D, ValueT, IndexT, false>(ctx, ctx.b, top_b_col, top_b_val);
    }
  }

  /// Bytes of device memory held.
  [[nodiscard]] std::size_t device_bytes() const
  {
    return std::size_t(bt.nnz()) * (sizeof(ValueT) + sizeof(IndexT)) +
           std::size_t(bt.rows() + 1) * sizeof(offset_t) +
           (corr_b.size() + bt_side.size()) * sizeof(terms<double, N>) +
           top_b_col.size() * sizeof(IndexT) + top_b_val.size() * sizeof(ValueT);
  }
};

/// What the intersection kernels read besides A and B: B's part (intersection_b_side: its own, or
/// the prepared B's where ctx.b_side_cache points to it, built there on first use) and A's NAMM
/// corrections or selection candidates, gathered in `args` (out and ld left for the caller). Built
/// once per (A, B) pair; the buffers live as long as the setup (a prepared B's, as long as it).
template <class D, class ValueT, class IndexT>
struct intersection_setup {
  static constexpr int N = pairwise_context<D, ValueT, IndexT>::N;
  std::optional<intersection_b_side<D, ValueT, IndexT>> own_b;  ///< B's part when B is not prepared
  buffer<terms<double, N>> corr_a;
  buffer<IndexT> top_a_col;
  buffer<ValueT> top_a_val;
  intersection_args<D, ValueT, IndexT> args{};

  explicit intersection_setup(pairwise_context<D, ValueT, IndexT>& ctx)
  {
    using policy = cuda_pairwise_policy;
    const intersection_b_side<D, ValueT, IndexT>& side = b_side(ctx);
    intersection_args<D, ValueT, IndexT>& p = args;
    p.d = ctx.d;
    p.rows_a = ctx.a.rows;
    p.rows_b = ctx.b.rows;
    p.cols = ctx.a.cols;
    p.dim = ctx.dim;
    p.a_ptr = ctx.a.row_ptr;
    p.a_col = ctx.a.col_idx;
    p.a_val = ctx.a.values;
    p.bt_ptr = side.bt.row_ptr();
    p.bt_row = side.bt.col_idx();
    p.bt_val = side.bt.values();
    p.norms_a = ctx.norms_a.data();
    p.norms_b = ctx.b_norms();
    p.b_ptr = ctx.b.row_ptr;  // B's rows: the selection fix-up and the accuracy guard read them
    p.b_col = ctx.b.col_idx;
    p.b_val = ctx.b.values;
    if constexpr (sum_namm_v<D, ValueT>) {
      corr_a = ctx.template corrections<true>(ctx.a);
      p.corr_a = corr_a.data();
      p.corr_b = side.corr_b.data();
      p.bt_side = side.bt_side.data();
    }
    if constexpr (selection_namm_v<D, ValueT>) {
      selection_candidates_of<D, ValueT, IndexT, true>(ctx, ctx.a, top_a_col, top_a_val);
      p.top_a_col = top_a_col.data();
      p.top_a_val = top_a_val.data();
      p.top_b_col = side.top_b_col.data();
      p.top_b_val = side.top_b_val.data();
    }
    using A = intersection_accumulator_t<D, ValueT>;
    p.tile_cols = std::int64_t(policy::intersection_shared_bytes / (sizeof(A) * N));
    p.tile_cols = std::max<std::int64_t>(std::min(p.tile_cols, ctx.b.rows), 1);
  }
  /// Shared memory of the accumulator tile.
  [[nodiscard]] std::size_t accumulator_bytes() const
  {
    return std::size_t(args.tile_cols) * N * sizeof(intersection_accumulator_t<D, ValueT>);
  }

 private:
  const intersection_b_side<D, ValueT, IndexT>& b_side(pairwise_context<D, ValueT, IndexT>& ctx)
  {
    if (ctx.b_side_cache == nullptr) {
      return own_b.emplace(ctx);
    }
    if (*ctx.b_side_cache == nullptr) {
      *ctx.b_side_cache = std::make_unique<intersection_b_side<D, ValueT, IndexT>>(ctx);
    }
    return **ctx.b_side_cache;
  }
};

/// Fills prob.products and prob.selection_scan (see pairwise_problem) for a selection NAMM from
/// its intersection setup: one column count of A (unless A is B), one statistics kernel over the
/// columns and a sample of pairs, and one read of 16 bytes.
template <class D, class ValueT, class IndexT>
void measure_selection(pairwise_context<D, ValueT, IndexT>& ctx,
                       const intersection_setup<D, ValueT, IndexT>& setup, pairwise_problem& prob)
{
  using policy = cuda_pairwise_policy;
  const auto& res = ctx.res;
  buffer<unsigned long long> counts_a;
  if (!same_matrix(ctx.a, ctx.b)) {
    counts_a = buffer<unsigned long long>(res, std::size_t(std::max<std::int64_t>(ctx.a.cols, 1)),
                                          "column counts of A");
    SPIRA_CUDA_TRY(cudaMemsetAsync(counts_a.data(), 0, counts_a.size() * sizeof(unsigned long long),
                                   res.stream));
    if (ctx.a.nnz > 0) {
      column_counts_kernel<IndexT>
          <<<elementwise_grid(ctx.a.nnz, ctx.sms), policy::row_threads, 0, res.stream>>>(
              ctx.a.col_idx, ctx.a.nnz, counts_a.data());
      SPIRA_CHECK_LAUNCH();
    }
  }
  buffer<double> stats(res, 2, "selection statistics");
  SPIRA_CUDA_TRY(cudaMemsetAsync(stats.data(), 0, 2 * sizeof(double), res.stream));
  const std::int64_t samples = policy::selection_samples;
  selection_statistics_kernel<D, ValueT, IndexT>
      <<<elementwise_grid(std::max(samples, ctx.a.cols), ctx.sms), policy::row_threads, 0,
         res.stream>>>(setup.args, counts_a.size() > 0 ? counts_a.data() : nullptr, samples,
                       stats.data());
  SPIRA_CHECK_LAUNCH();
  double host[2] = {0, 0};
  copy(host, memory_space::host, stats.data(), memory_space::device, 2, res);
  const double pairs = double(ctx.a.rows) * double(ctx.b.rows);
  prob.products = host[0];
  prob.selection_scan = host[1] * (pairs / std::min(pairs, double(samples)));
}

/// The intersection strategy with a prepared setup: the kernel over (rows of A) x (tiles of B's
/// rows), then for selection NAMMs the warp-per-pair fallback of the pairs it queued.
template <class D, class ValueT, class IndexT>
void run_intersection(pairwise_context<D, ValueT, IndexT>& ctx,
                      const intersection_setup<D, ValueT, IndexT>& setup)
{
  using policy = cuda_pairwise_policy;
  const auto& res = ctx.res;
  intersection_args<D, ValueT, IndexT> p = setup.args;
  p.out = ctx.out.data;
  p.ld = ctx.out.ld;
  buffer<selection_fallback> fallback;
  buffer<unsigned long long> fallback_count;
  if constexpr (selection_namm_v<D, ValueT>) {
    const double pairs = double(ctx.a.rows) * double(ctx.b.rows);
    p.fallback_capacity = std::int64_t(std::min(
        pairs, double(std::max(ctx.a.nnz + ctx.b.nnz, policy::selection_fallback_min_capacity))));
    fallback =
        buffer<selection_fallback>(res, std::size_t(std::max<std::int64_t>(p.fallback_capacity, 1)),
                                   "selection fallback pairs");
    fallback_count = buffer<unsigned long long>(res, 1, "selection fallback count");
    SPIRA_CUDA_TRY(
        cudaMemsetAsync(fallback_count.data(), 0, sizeof(unsigned long long), res.stream));
    p.fallback = fallback.data();
    p.fallback_count = fallback_count.data();
  }
  const std::int64_t tiles = (ctx.b.rows + p.tile_cols - 1) / p.tile_cols;
  const dim3 grid(unsigned(std::min<std::int64_t>(ctx.a.rows, std::numeric_limits<int>::max())),
                  unsigned(std::min<std::int64_t>(tiles, 65535)));
  intersection_kernel<D, ValueT, IndexT>
      <<<grid, policy::intersection_threads, setup.accumulator_bytes(), res.stream>>>(p);
  SPIRA_CHECK_LAUNCH();
  if constexpr (selection_namm_v<D, ValueT>) {
    // At most the list's capacity; the kernel reads the count on the device (no host round trip).
    const std::int64_t most = p.fallback_capacity;
    selection_fallback_kernel<D, ValueT, IndexT>
        <<<row_grid(most, ctx.sms), policy::row_threads, 0, res.stream>>>(p);
    SPIRA_CHECK_LAUNCH();
  }
}

template <class D, class ValueT, class IndexT>
void run_intersection(pairwise_context<D, ValueT, IndexT>& ctx)
{
  const intersection_setup<D, ValueT, IndexT> setup(ctx);
  run_intersection(ctx, setup);
}

#endif  // __CUDACC__

}  // namespace spira::detail
