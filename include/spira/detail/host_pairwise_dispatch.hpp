// spira: the host pairwise operation's dispatch (the columns renumbered to the used ones, the
// engine chosen by the semiring's traits) and its direct evaluation of pairs (the reference the
// engines are checked against). Included by spira/ops.hpp.
#pragma once

#include <spira/accuracy.hpp>
#include <spira/convert.hpp>
#include <spira/detail/host_pairwise_common.hpp>
#include <spira/detail/host_pairwise_engines.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>
#include <spira/semiring.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace spira::detail {

/// out(i, j) = d(row i of A, row j of B) for every pair, each evaluated directly (direct_value):
/// O(deg_i + deg_j) per pair, the reference the engines' fast forms are checked against (the CLI's
/// recall check). Canonical host CSR; out rows(A) x rows(B).
template <class D, class T, class ValueT, class IndexT>
void pairwise_direct(const host_resources& res, csr_view<ValueT, IndexT> a,
                     csr_view<ValueT, IndexT> b, dense_view<ValueT> out, const D& d)
{
  using traits = distance_traits<D, T>;
  const auto na = row_norms<typename traits::norms, T>(res, a);
  const auto nb = row_norms<typename traits::norms, T>(res, b);
  auto run = [&](csr_view<ValueT, IndexT> pa, csr_view<ValueT, IndexT> pb) {
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(dynamic, 8))
for (std::int64_t i = 0; i < pa.rows; ++i) {
  ValueT* row = out.row(i);
  for (std::int64_t j = 0; j < pb.rows; ++j) {
    row[j] = ValueT(direct_value<D, T>(d, rows_of(pa)[i], rows_of(pb)[j], na[i], nb[j], pa.cols));
  }
}
  };
  with_prepared<T>(res, a, b, d, run);
}

/// d(row i, row i) for every row of a canonical host CSR matrix, computed in T and stored as
/// ValueT, directly (direct_value; the union of a row with itself is the row).
template <class D, class T, class ValueT, class IndexT>
std::vector<ValueT> self_distances(const host_resources& res, csr_view<ValueT, IndexT> m,
                                   const D& d)
{
  using traits = distance_traits<D, T>;
  const auto norms = row_norms<typename traits::norms, T>(res, m);
  auto run = [&](csr_view<ValueT, IndexT> pm) {
    std::vector<ValueT> out(static_cast<std::size_t>(pm.rows));
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t i = 0; i < pm.rows; ++i) {
  const sparse_row<ValueT, IndexT> x = rows_of(pm)[i];
  out[static_cast<std::size_t>(i)] =
      ValueT(direct_value<D, T>(d, x, x, norms[i], norms[i], pm.cols));
}
return out;
  };
  if constexpr (traits::has_prepare) {
    const csr_matrix<ValueT, IndexT> pm = prepared_copy<D, T>(res, m, d);
    return run(pm.view());
  } else {
    return run(m);
  }
}

/// A and B with their columns renumbered to the columns either of them stores, in increasing
/// order: column c becomes its rank among the used columns. The renumbering preserves the order of
/// the columns within a row and which columns two rows share, so every ⊕ over the intersection or
/// the union of two rows is unchanged; only the declared dimension is lost, and the caller passes
/// it to finalize (`dim`). This keeps the engines' memory at O(nnz + rows + used columns) for any
/// declared shape (hashed feature ids, a file that declares 2^31 columns). When the columns are
/// not worth compressing (columns_worth_compressing), a and b are the inputs themselves.
template <class ValueT, class IndexT>
class compressed_columns {
 public:
  compressed_columns(const host_resources& res, csr_view<ValueT, IndexT> a_in,
                     csr_view<ValueT, IndexT> b_in)
      : a(a_in), b(b_in)
  {
    if (!columns_worth_compressing(a_in.cols, a_in.nnz, b_in.nnz)) {
      return;
    }
    const bool same = a_in.col_idx == b_in.col_idx && a_in.nnz == b_in.nnz;
    std::vector<IndexT> used(a_in.col_idx, a_in.col_idx + a_in.nnz);
    if (!same) {
      used.insert(used.end(), b_in.col_idx, b_in.col_idx + b_in.nnz);
    }
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    renumbered_ = true;
    renumber(res, used, a, cols_a_);
    if (same) {
      b.col_idx = a.col_idx;
      b.cols = a.cols;
    } else {
      renumber(res, used, b, cols_b_);
    }
  }
  compressed_columns(const compressed_columns&) = delete;
  compressed_columns& operator=(const compressed_columns&) = delete;

  csr_view<ValueT, IndexT> a;  ///< A over the used columns (or A itself)
  csr_view<ValueT, IndexT> b;  ///< B over the used columns (or B itself)

  /// True when a and b are renumbered (false: they are the inputs, on the declared columns).
  [[nodiscard]] bool renumbered() const noexcept { return renumbered_; }

 private:
  /// Points m at its columns' ranks among `used` (sorted), stored in `ids`.
  static void renumber(const host_resources& res, const std::vector<IndexT>& used,
                       csr_view<ValueT, IndexT>& m, std::vector<IndexT>& ids)
  {
    ids.resize(static_cast<std::size_t>(m.nnz));
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t k = 0; k < m.nnz; ++k) {
  ids[k] = IndexT(std::lower_bound(used.begin(), used.end(), m.col_idx[k]) - used.begin());
}
m.col_idx = ids.data();
m.cols = std::int64_t(used.size());
  }

  std::vector<IndexT> cols_a_, cols_b_;  ///< the renumbered column indices of A and B
  bool renumbered_ = false;
};

/// Norms come from the raw rows; ⊗ sees the prepared rows when D has a prepare step (the
/// prepared copies keep the sparsity pattern of the raw ones). The engines run on the used columns
/// only (compressed_columns); finalize gets the declared column count. `prepared`: B prepared once
/// (host_pairwise_prepared of this b and an equal d) or null: its norms, prepared values and row
/// corrections are used always, its column-indexed parts only where the columns stay the declared
/// ones; the results are the same bit for bit (see host_pairwise_prepared).
template <class D, class T, class ValueT, class IndexT>
void pairwise_dispatch(const host_resources& res, csr_view<ValueT, IndexT> a,
                       csr_view<ValueT, IndexT> b, dense_view<ValueT> out, const D& d,
                       host_pairwise_prepared<D, ValueT, IndexT>* prepared = nullptr)
{
  using traits = distance_traits<D, T>;
  const auto na = row_norms<typename traits::norms, T>(res, a);
  std::remove_const_t<decltype(na)> nb_own;
  if (prepared == nullptr) {
    nb_own = row_norms<typename traits::norms, T>(res, b);
  }
  const auto& nb = prepared != nullptr ? prepared->norms : nb_own;
  const std::int64_t dim = a.cols;
  const compressed_columns<ValueT, IndexT> used(res, a, b);
  const bool declared = !used.renumbered();
  auto run = [&](csr_view<ValueT, IndexT> pa, csr_view<ValueT, IndexT> pb) {
    using add = typename traits::add_monoid;
    if constexpr (traits::annihilating || traits::invertible_add) {
      pairwise_intersection<D, T>(res, pa, pb, out, d, na, nb, dim, prepared, declared);
    } else if constexpr (traits::num_terms == 1 &&
                         (add::kind == monoid_kind::min || add::kind == monoid_kind::max)) {
      pairwise_union_select<D, T>(res, pa, pb, out, d, na, nb, dim, prepared, declared);
    } else {
      pairwise_union_merge<D, T>(res, pa, pb, out, d, na, nb, dim);
    }
  };
  if (prepared == nullptr) {
    with_prepared<T>(res, used.a, used.b, d, run);
  } else if constexpr (traits::has_prepare) {
    const csr_matrix<ValueT, IndexT> pa = prepared_copy<D, T>(res, used.a, d);
    csr_view<ValueT, IndexT> pb =
        used.b;  // B's columns as the call numbers them, its prepared values
    pb.values = prepared->values.data();
    run(pa.view(), pb);
  } else {
    run(used.a, used.b);
  }
}

}  // namespace spira::detail
