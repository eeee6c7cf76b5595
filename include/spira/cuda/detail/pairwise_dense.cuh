// spira: the dense strategy of the CUDA pairwise engine: distances in dot-product form as a GEMM
// of densified tiles (cuBLAS), then the expansion and the accuracy guard in place.
#pragma once

#include <spira/cuda/detail/pairwise_context.cuh>

namespace spira::detail {

#if defined(__CUDACC__)

// ---- dense tiles
// ---------------------------------------------------------------------------------

/// dense[(i - row0) * cols + c] = Form::map(value) for the entries of rows [row0, row0 + rows)
/// (the tile was zeroed first).
template <class Form, class ValueT, class IndexT>
__global__ void densify_kernel(const offset_t* row_ptr, const IndexT* col_idx, const ValueT* values,
                               std::int64_t row0, std::int64_t rows, std::int64_t cols,
                               ValueT* dense)
{
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t r = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; r < rows;
       r += warps) {
    for (offset_t k = row_ptr[row0 + r] + lane; k < row_ptr[row0 + r + 1]; k += 32) {
      dense[r * cols + col_idx[k]] = Form::template map<ValueT>(values[k]);
    }
  }
}

template <class D, class ValueT, class IndexT>
__global__ void finalize_in_place_kernel(
    D d, ValueT* out, std::int64_t ld, std::int64_t rows, std::int64_t cols_b, std::int64_t dim,
    const typename distance_traits<D, double>::norm_values* norms_a,
    const typename distance_traits<D, double>::norm_values* norms_b, csr_view<ValueT, IndexT> a,
    csr_view<ValueT, IndexT> b)
{
  const std::int64_t total = rows * cols_b;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += stride) {
    const std::int64_t i = e / cols_b, j = e % cols_b;
    ValueT* x = out + i * ld + j;
    *x = ValueT(finalize_pair_device(d, terms<ValueT, 1>{{*x}}, norms_a[i], norms_b[j], dim,
                                     static_cast<const terms<double, 1>*>(nullptr),
                                     static_cast<const terms<double, 1>*>(nullptr), rows_of(a), i,
                                     rows_of(b), j));
  }
}

template <class D, class ValueT, class IndexT>
void finalize_dense_in_place(pairwise_context<D, ValueT, IndexT>& ctx)
{
  finalize_in_place_kernel<D, ValueT, IndexT>
      <<<elementwise_grid(ctx.a.rows * ctx.b.rows, ctx.sms), cuda_pairwise_policy::row_threads, 0,
         ctx.res.stream>>>(ctx.d, ctx.out.data, ctx.out.ld, ctx.a.rows, ctx.b.rows, ctx.dim,
                           ctx.norms_a.data(), ctx.b_norms(), ctx.a, ctx.b);
  SPIRA_CHECK_LAUNCH();
}

/// The dense strategy. `workspace_cap` (0 = none) bounds the densified tiles; pairwise() has
/// checked that it holds at least one row of A and one of B.
template <class D, class ValueT, class IndexT>
void run_dense(pairwise_context<D, ValueT, IndexT>& ctx, std::size_t workspace_cap)
{
  using policy = cuda_pairwise_policy;
  using form = dot_product_form<D>;
  const auto& res = ctx.res;
  const auto& a = ctx.a;
  const auto& b = ctx.b;
  const std::int64_t k = a.cols;
  // Tiles of ta rows of A and tb rows of B, densified: (ta + tb) * k * sizeof(ValueT) bytes, at
  // most min(policy::dense_tile_bytes, cap) (but at least one row of each).
  const std::size_t budget = tile_budget(policy::dense_tile_bytes, workspace_cap);
  const std::size_t row_bytes = sizeof(ValueT) * std::size_t(std::max<std::int64_t>(k, 1));
  const std::int64_t budget_rows = std::int64_t(
      std::clamp<std::size_t>(budget / row_bytes, 2, std::size_t(a.rows) + std::size_t(b.rows)));
  // B gets the rows A leaves over when A is short, and the other way round.
  const std::int64_t tb = std::min(b.rows, budget_rows - std::min(a.rows, budget_rows / 2));
  const std::int64_t ta = std::min(a.rows, budget_rows - tb);
  buffer<ValueT> da(res, std::size_t(ta * k), "dense tile of A");
  buffer<ValueT> db(res, std::size_t(tb * k), "dense tile of B");
  for (std::int64_t j0 = 0; j0 < b.rows; j0 += tb) {
    const std::int64_t nb = std::min(tb, b.rows - j0);
    SPIRA_CUDA_TRY(cudaMemsetAsync(db.data(), 0, std::size_t(nb * k) * sizeof(ValueT), res.stream));
    densify_kernel<form, ValueT, IndexT>
        <<<row_grid(nb, ctx.sms), policy::row_threads, 0, res.stream>>>(
            b.row_ptr, b.col_idx, b.values, j0, nb, k, db.data());
    SPIRA_CHECK_LAUNCH();
    for (std::int64_t i0 = 0; i0 < a.rows; i0 += ta) {
      const std::int64_t na = std::min(ta, a.rows - i0);
      if (j0 == 0 || ta < a.rows) {
        SPIRA_CUDA_TRY(
            cudaMemsetAsync(da.data(), 0, std::size_t(na * k) * sizeof(ValueT), res.stream));
        densify_kernel<form, ValueT, IndexT>
            <<<row_grid(na, ctx.sms), policy::row_threads, 0, res.stream>>>(
                a.row_ptr, a.col_idx, a.values, i0, na, k, da.data());
        SPIRA_CHECK_LAUNCH();
      }
      gemm_abt<ValueT>(res, da.data(), db.data(), ctx.out.data + i0 * ctx.out.ld + j0, na, nb, k,
                       ctx.out.ld);
    }
  }
  // Expansion / finalize (and the accuracy guard) in place: the output holds the dot products.
  if constexpr (distance_traits<D, double>::has_finalize || accuracy_traits<D, double>::guarded) {
    finalize_dense_in_place(ctx);
  }
}

#endif  // __CUDACC__

}  // namespace spira::detail
