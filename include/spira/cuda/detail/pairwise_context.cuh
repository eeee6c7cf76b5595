// spira: the context of one call of the CUDA pairwise engine (pairwise_context: norms, prepared
// values, NAMM corrections and the operands over the used columns) and B prepared once for many
// calls (pairwise_prepared), over the shared pieces of pairwise_common.cuh.
#pragma once

#include <spira/cuda/detail/pairwise_common.cuh>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>

namespace spira::detail {

#if defined(__CUDACC__)

// ---- the context of one call --------------------------------------------------------------------

/// Blocks for a warp-per-row kernel over `rows` rows, at most a few waves.
inline unsigned row_grid(std::int64_t rows, int sms)
{
  constexpr int warps_per_block = cuda_pairwise_policy::row_threads / 32;
  const std::int64_t want = (rows + warps_per_block - 1) / warps_per_block;
  return unsigned(std::clamp<std::int64_t>(want, 1, std::int64_t(sms) * 16));
}
inline unsigned elementwise_grid(std::int64_t n, int sms)
{
  const std::int64_t want =
      (n + cuda_pairwise_policy::row_threads - 1) / cuda_pairwise_policy::row_threads;
  return unsigned(std::clamp<std::int64_t>(want, 1, std::int64_t(sms) * 16));
}

/// norms[i] = D's norm list of row i of m (raw values, in double); one entry for no rows.
template <class D, class ValueT, class IndexT>
buffer<typename distance_traits<D, double>::norm_values> device_row_norms(
    const cuda_resources& res, int sms, csr_view<ValueT, IndexT> m, const char* what)
{
  using norms = typename distance_traits<D, double>::norms;
  buffer<typename distance_traits<D, double>::norm_values> n(
      res, std::size_t(std::max<std::int64_t>(m.rows, 1)), what);
  if constexpr (norms::size > 0) {
    row_norms_kernel<norms, ValueT>
        <<<row_grid(m.rows, sms), cuda_pairwise_policy::row_threads, 0, res.stream>>>(
            m.row_ptr, m.values, m.rows, n.data());
    SPIRA_CHECK_LAUNCH();
  }
  return n;
}

/// m's values as ⊗ sees them: d.prepare of every stored entry (D with a prepare step).
template <class D, class ValueT, class IndexT>
buffer<ValueT> device_prepared_values(const cuda_resources& res, const D& d, int sms,
                                      csr_view<ValueT, IndexT> m)
{
  buffer<ValueT> v(res, std::size_t(std::max<std::int64_t>(m.nnz, 1)), "prepared values");
  prepare_kernel<D, ValueT>
      <<<row_grid(m.rows, sms), cuda_pairwise_policy::row_threads, 0, res.stream>>>(
          d, m.row_ptr, m.values, m.rows, v.data());
  SPIRA_CHECK_LAUNCH();
  return v;
}

/// What the intersection strategy reads of B alone (its CSC, B's NAMM terms or selection
/// candidates); defined in pairwise_intersection.cuh.
template <class D, class ValueT, class IndexT>
struct intersection_b_side;

/// True when two views are the same matrix (the same arrays and extents): A against itself.
template <class ValueT, class IndexT>
bool same_matrix(csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b)
{
  return a.row_ptr == b.row_ptr && a.col_idx == b.col_idx && a.values == b.values &&
         a.rows == b.rows && a.cols == b.cols && a.nnz == b.nnz;
}

/// B prepared once for calls with many A (the index tiles of the tiled k-NN graph, each used by
/// every query tile): what depends on B alone - its row norms, its values as ⊗ sees them
/// (D::prepare) and, built by the first call that runs the intersection strategy on B's declared
/// columns, intersection_b_side (B's CSC, corrections and one-sided terms, or candidates). A call
/// (pairwise_cuda with prepared_b) uses the norms and values always: they do not depend on the
/// column numbering. It uses the intersection part only where it keeps the declared columns
/// (columns_worth_compressing false for that pair, as without a prepared B); where it renumbers
/// the columns to those A and B use, that part is built for the call, as without a prepared B.
/// Every value is therefore computed by the same kernels from the same inputs as without it: the
/// results are the same bit for bit. Device memory: device_bytes().
template <class D, class ValueT, class IndexT>
struct pairwise_prepared {
  using norm_values = typename distance_traits<D, double>::norm_values;

  csr_view<ValueT, IndexT> b;  ///< the operand as the caller passes it (raw values)
  buffer<norm_values> norms;
  buffer<ValueT> values;  ///< prepared values (D with a prepare step; empty otherwise)
  std::unique_ptr<intersection_b_side<D, ValueT, IndexT>> intersection;  ///< built on first use

  pairwise_prepared(const cuda_resources& res, const D& d, csr_view<ValueT, IndexT> b_in) : b(b_in)
  {
    require_device_space(b.space, "pairwise_prepared", "B");
    device_guard scope(res.device);
    const int sms = multiprocessor_count(res.device);
    norms = device_row_norms<D>(res, sms, b, "row norms of B");
    if constexpr (distance_traits<D, ValueT>::has_prepare) {
      values = device_prepared_values(res, d, sms, b);
    }
  }

  /// Bytes of device memory held (the intersection part once it is built).
  [[nodiscard]] std::size_t device_bytes() const
  {
    std::size_t n = norms.size() * sizeof(norm_values) + values.size() * sizeof(ValueT);
    if (intersection) {
      n += intersection->device_bytes();
    }
    return n;
  }
};

/// Everything the strategies share: norms, prepared values, NAMM corrections, and the operands
/// over the used columns only (compress_columns), so that no strategy allocates per declared
/// column; `dim` keeps the declared column count for finalize. With a prepared B
/// (pairwise_prepared) B's norms and prepared values are its, and the intersection strategy takes
/// B's part from it where the columns are not renumbered (b_side_cache).
template <class D, class ValueT, class IndexT>
struct pairwise_context {
  using traits_d = distance_traits<D, double>;
  using norm_values = typename traits_d::norm_values;
  static constexpr int N = distance_traits<D, ValueT>::num_terms;

  const cuda_resources& res;
  const D& d;
  csr_view<ValueT, IndexT> a,
      b;  ///< over the used columns, with prepared values when D has a prepare step
  dense_view<ValueT> out;
  std::int64_t dim = 0;  ///< the declared column count of A and B (finalize's `dim`)
  int sms = 1;
  /// norms_b is empty with a prepared B, and when B is A (b_norms() gives norms_a then).
  buffer<norm_values> norms_a, norms_b;
  buffer<ValueT> prepared_a, prepared_b;
  renumbered_columns<IndexT> renumbered;
  bool columns_renumbered = false;
  /// The prepared B's intersection part (built there on first use), where this call may use it:
  /// a prepared B and the declared columns. Null otherwise.
  std::unique_ptr<intersection_b_side<D, ValueT, IndexT>>* b_side_cache = nullptr;

  pairwise_context(const cuda_resources& r, const D& dist, csr_view<ValueT, IndexT> a_in,
                   csr_view<ValueT, IndexT> b_in, dense_view<ValueT> o,
                   pairwise_prepared<D, ValueT, IndexT>* prepared = nullptr)
      : res(r), d(dist), a(a_in), b(b_in), out(o), dim(a_in.cols), prepared_(prepared)
  {
    sms = multiprocessor_count(res.device);
    b_is_a_ = same_matrix(a_in, b_in);
    norms_a = row_norms(a_in, "row norms of A");
    if (prepared_ == nullptr && !b_is_a_) {
      norms_b = row_norms(b_in, "row norms of B");
    }
    compress_columns();
    if constexpr (distance_traits<D, ValueT>::has_prepare) {
      prepared_a = prepare(a_in);
      if (prepared_ == nullptr && !b_is_a_) {
        prepared_b = prepare(b_in);
      }
      a.values = prepared_a.data();
      b.values = prepared_ != nullptr ? prepared_->values.data()
                 : b_is_a_            ? prepared_a.data()
                                      : prepared_b.data();
    }
    if (prepared_ != nullptr && !columns_renumbered) {
      b_side_cache = &prepared_->intersection;
    }
  }

  /// B's row norms (its own, A's when B is A, or the prepared B's).
  [[nodiscard]] const norm_values* b_norms() const
  {
    return prepared_ != nullptr ? prepared_->norms.data()
           : b_is_a_            ? norms_a.data()
                                : norms_b.data();
  }

  /// Renumbers the columns of a and b to the columns either stores (renumber_columns) when the
  /// declared count exceeds their stored entries (columns_worth_compressing): the CSC of B, the
  /// column counts of the selection statistics, the hybrid kernel's held row and the dense tiles
  /// are then sized by the used columns. The renumbering keeps the order of the columns, so every
  /// strategy computes the same values; B that is A stays the same matrix (same_matrix).
  void compress_columns()
  {
    if (!columns_worth_compressing(a.cols, a.nnz, b.nnz)) {
      return;
    }
    const bool same = same_matrix(a, b);
    renumbered = renumber_columns<IndexT>(res, a.col_idx, a.nnz, same ? nullptr : b.col_idx,
                                          same ? 0 : b.nnz, a.cols);
    a.col_idx = renumbered.col_idx.data();
    b.col_idx = same ? a.col_idx : renumbered.col_idx.data() + a.nnz;
    a.cols = b.cols = renumbered.used;
    columns_renumbered = true;
  }

  buffer<norm_values> row_norms(csr_view<ValueT, IndexT> m, const char* what)
  {
    return device_row_norms<D>(res, sms, m, what);
  }

  buffer<ValueT> prepare(csr_view<ValueT, IndexT> m)
  {
    return device_prepared_values(res, d, sms, m);
  }

  template <bool Left>
  buffer<terms<double, N>> corrections(csr_view<ValueT, IndexT> m)
  {
    buffer<terms<double, N>> c(res, std::size_t(std::max<std::int64_t>(m.rows, 1)),
                               "NAMM row corrections");
    corrections_kernel<D, ValueT, N, Left>
        <<<row_grid(m.rows, sms), cuda_pairwise_policy::row_threads, 0, res.stream>>>(
            d, m.row_ptr, m.values, m.rows, c.data());
    SPIRA_CHECK_LAUNCH();
    return c;
  }

  /// The finalize pass over an accumulator tile of rows [row0, row0 + rows).
  void finalize_tile(const ValueT* acc, std::int64_t acc_ld, std::int64_t row0, std::int64_t rows,
                     const terms<double, N>* corr_a = nullptr,
                     const terms<double, N>* corr_b = nullptr)
  {
    if (rows == 0) {
      return;
    }
    finalize_tile_kernel<D, ValueT, IndexT>
        <<<elementwise_grid(rows * b.rows, sms), cuda_pairwise_policy::row_threads, 0,
           res.stream>>>(d, acc, acc_ld, out.data, out.ld, row0, rows, b.rows, dim, norms_a.data(),
                         b_norms(), corr_a, corr_b, a, b);
    SPIRA_CHECK_LAUNCH();
  }

 private:
  pairwise_prepared<D, ValueT, IndexT>* prepared_ = nullptr;
  bool b_is_a_ = false;  ///< B is the same matrix as A (its norms and prepared values are A's)
};

/// The byte budget of a tiled temporary: the policy's default, or the smaller of it and the
/// caller's cap (0 = no cap).
inline std::size_t tile_budget(std::size_t policy_default, std::size_t cap)
{
  return cap == 0 ? policy_default : std::min(policy_default, cap);
}

#endif  // __CUDACC__

}  // namespace spira::detail
