// spira: GraphBLAS-style operations on the host, templated on the semiring / monoid / distance, so
// a user-defined operator struct runs without rebuilding the library.
//
//   mxv(res, A, x, y, semiring)         y = A ⊕.⊗ x (CSR times dense vector)
//   pairwise(res, A, B, out, distance)  out = finalize(A ⊕.⊗ Bᵀ), dense, rows(A) x rows(B)
//   reduce_rows(res, A, out, monoid)    out[i] = ⊕ over the stored entries of row i of map(A)
//   reduce_cols(res, A, out, monoid)    the same per column
//   reduce_scalar(res, A, monoid)       ⊕ over every stored entry of map(A)
//   apply(res, A, op)                   a copy of A with every stored value replaced by op(a)
//   apply(res, X, op)                   X(i,j) = op(X(i,j)) in place (dense)
// (the masked forms with an accumulator: spira/mxm.hpp, spira/ewise.hpp, spira/apply.hpp,
// spira/select.hpp; reduce_rows into a masked sparse vector: spira/mxv.hpp)
//
// All run on host_resources::num_threads() OpenMP threads, give the same result for any thread
// count, and validate their arguments (mxv and pairwise need canonical CSR: sorted, duplicate-free
// columns; see spira::canonicalize). Complexity and memory of pairwise (nnz = stored entries,
// m = rows(A), n = rows(B), T = threads, u = columns stored by A or B):
//   annihilating semiring       Σ_c nnz(A[:,c]) nnz(B[:,c]) products + m n finalize;
//                               memory: CSC of B (O(nnz(B) + u)) + T n accumulators + norms
//   NAMM with a sum-kind ⊕      the same: one intersection pass with
//                               ⊗'(a,b) = ⊗(a,b) - ⊗(a,0) - ⊗(0,b) plus per-row corrections;
//                               ⊗(0,b) is tabulated once per entry of B (O(nnz(B)) more memory)
//   NAMM with a min/max ⊕       the intersection pass plus best-first selection of the columns
//                               only one row has (see pairwise_union_select)
//   NAMM with another ⊕         a merge of the two sorted rows per pair, O(deg_i + deg_j) each,
//                               on tiles of A rows x B rows; memory: norms only
// Memory besides the output is O(nnz(A) + nnz(B) + m + T n + u) whatever cols(A) declares: when
// cols exceeds nnz(A) + nnz(B), the columns are first renumbered to the u used ones
// (detail::compressed_columns: O(nnz log nnz) time, O(nnz) memory), and finalize still receives
// the declared cols as `dim`.
// Everything is computed in double and rounded to the output type once. Expansions and NAMM
// corrections are guarded (spira/accuracy.hpp): a pair whose fast form cancels is evaluated
// directly over the union of its two rows, O(deg_i + deg_j).
//
// Many A against one B (the index tiles of the tiled k-NN graph): detail::host_pairwise_prepared
// holds what the engine computes of B alone - its norms, prepared values, NAMM row corrections and,
// where a call keeps the declared columns, its CSC and the terms indexed by it - built once and
// passed to detail::pairwise_host; the results are those of calls without it, bit for bit.
//
// The host engine behind pairwise is in spira/detail/: its policy, shared pieces and the prepared
// B (host_pairwise_common.hpp), the three engines (host_pairwise_engines.hpp), the dispatch and the
// direct evaluation (host_pairwise_dispatch.hpp).
#pragma once

#include <spira/accuracy.hpp>
#include <spira/convert.hpp>
#include <spira/detail/host_pairwise_common.hpp>
#include <spira/detail/host_pairwise_dispatch.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>
#include <spira/semiring.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace spira {

namespace detail {

/// spira::pairwise with B prepared once for calls with many A (`prepared_b`: a
/// host_pairwise_prepared of this b and an equal d, or null): the same checks, and the same
/// results bit for bit (see host_pairwise_prepared). The tiled k-NN graph's distance tiles.
template <class D, class ValueT, class IndexT>
void pairwise_host(const host_resources& res, csr_view<ValueT, IndexT> a,
                   csr_view<ValueT, IndexT> b, dense_view<ValueT> out, const D& d,
                   std::type_identity_t<host_pairwise_prepared<D, ValueT, IndexT>>* prepared_b)
{
  using T = host_compute_t;
  static_assert(semiring<D, T>,
                "spira::pairwise: D must model spira::semiring (add_monoid, "
                "annihilating, multiply<T>(a, b))");
  require_host_space(a.space, "spira::pairwise", "A");
  require_host_space(b.space, "spira::pairwise", "B");
  validate(res, a, csr_check::canonical, "spira::pairwise: A");
  validate(res, b, csr_check::canonical, "spira::pairwise: B");
  expects<dimension_mismatch>(a.cols == b.cols, "spira::pairwise: A has ", a.cols,
                              " columns but B has ", b.cols);
  check_dense_output(out, a.rows, b.rows, "spira::pairwise", "rows(A) x rows(B)");
  if (prepared_b != nullptr) {
    const csr_view<ValueT, IndexT> p = prepared_b->b;
    expects(p.row_ptr == b.row_ptr && p.col_idx == b.col_idx && p.values == b.values &&
                p.rows == b.rows && p.cols == b.cols && p.nnz == b.nnz,
            "spira::pairwise: the prepared B is not the operand B of this call");
  }
  if (a.rows == 0 || b.rows == 0) {
    return;
  }
  pairwise_dispatch<D, T>(res, a, b, out, d, prepared_b);
}

}  // namespace detail

/// out(i, j) = finalize(⊕_c ⊗(A[i,c], B[j,c]), norms(A_i), norms(B_j), A.cols) for every row i of A
/// and row j of B, over the intersection (annihilating D) or the union (NAMM) of their stored
/// columns. D is a semiring or a distance (spira/semiring.hpp); A and B must be canonical host CSR
/// matrices with the same number of columns; out must be rows(A) x rows(B).
template <class D, class ValueT, class IndexT>
void pairwise(const host_resources& res, csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b,
              dense_view<ValueT> out, const D& d = {})
{
  detail::pairwise_host(res, a, b, out, d, nullptr);
}

/// y[i] = ⊕_c ⊗(A[i,c], x[c]) over the columns c of row i (annihilating semiring) or over all
/// columns (NAMM: a column missing from the row is the value 0). The semiring has one term.
/// Complexity: O(nnz(A)) for annihilating semirings and sum-kind NAMMs, O(nnz(A) log + cols log
/// cols) for min/max-kind NAMMs, O(rows x cols) for NAMMs with a custom ⊕.
template <class S, class ValueT, class IndexT>
void mxv(const host_resources& res, csr_view<ValueT, IndexT> a, std::span<const ValueT> x,
         std::span<ValueT> y, const S& s = {})
{
  using T = detail::host_compute_t;
  using traits = distance_traits<S, T>;
  using add = typename traits::add_monoid;
  static_assert(semiring<S, T>, "spira::mxv: S must model spira::semiring");
  static_assert(traits::num_terms == 1, "spira::mxv: the semiring must have a single term");
  detail::require_host_space(a.space, "spira::mxv", "A");
  validate(res, a, csr_check::canonical, "spira::mxv: A");
  detail::expects<dimension_mismatch>(std::int64_t(x.size()) == a.cols, "spira::mxv: x has ",
                                      x.size(), " entries but A has ", a.cols, " columns");
  detail::expects<dimension_mismatch>(std::int64_t(y.size()) == a.rows, "spira::mxv: y has ",
                                      y.size(), " entries but A has ", a.rows, " rows");
  auto mul = [&](T p, T q) { return as_terms(s.template multiply<T>(p, q))[0]; };

  // NAMM: the value the columns missing from a row contribute.
  T base = add::template identity<T>();
  std::vector<std::int64_t> order;  // min/max NAMMs: columns, best ⊗(0, x[c]) first
  if constexpr (!traits::annihilating) {
    if constexpr (traits::invertible_add) {
      for (std::int64_t c = 0; c < a.cols; ++c) {
        base = add{}(base, mul(T(0), T(x[c])));
      }
    } else if constexpr (add::kind == monoid_kind::min || add::kind == monoid_kind::max) {
      order.resize(static_cast<std::size_t>(a.cols));
      std::iota(order.begin(), order.end(), std::int64_t{0});
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t p, std::int64_t q) {
        const T vp = mul(T(0), T(x[p])), vq = mul(T(0), T(x[q]));
        return add{}(vp, vq) == vp && vp != vq;  // p strictly better than q
      });
    }
  }

SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(dynamic, 256))
for (std::int64_t i = 0; i < a.rows; ++i) {
  const IndexT* cols = a.col_idx + a.row_ptr[i];
  const ValueT* vals = a.values + a.row_ptr[i];
  const offset_t deg = a.row_ptr[i + 1] - a.row_ptr[i];
  T acc = add::template identity<T>();
  if constexpr (traits::annihilating) {
    for (offset_t k = 0; k < deg; ++k) {
      acc = add{}(acc, mul(T(vals[k]), T(x[cols[k]])));
    }
  } else if constexpr (traits::invertible_add) {
    for (offset_t k = 0; k < deg; ++k) {
      const T xc = T(x[cols[k]]);
      acc = add{}(acc, mul(T(vals[k]), xc) - mul(T(0), xc));
    }
    acc = base + acc;
  } else {
    for (offset_t k = 0; k < deg; ++k) {
      acc = add{}(acc, mul(T(vals[k]), T(x[cols[k]])));
    }
    if constexpr (add::kind == monoid_kind::min || add::kind == monoid_kind::max) {
      // ⊕ is a selection: the best column outside the row is the first one in `order`.
      for (const std::int64_t c : order) {
        if (!std::binary_search(cols, cols + deg, IndexT(c))) {
          acc = add{}(acc, mul(T(0), T(x[c])));
          break;
        }
      }
    } else {
      offset_t k = 0;
      for (std::int64_t c = 0; c < a.cols; ++c) {
        if (k < deg && cols[k] == c) {
          ++k;
        } else {
          acc = add{}(acc, mul(T(0), T(x[c])));
        }
      }
    }
  }
  y[i] = ValueT(acc);
}
}

/// out[i] = ⊕ over the stored entries of row i of map(A[i,c]); an empty row gives the identity.
/// Needs a valid (not necessarily canonical) CSR matrix.
template <class M, class Map = identity_map, class ValueT, class IndexT>
void reduce_rows(const host_resources& res, csr_view<ValueT, IndexT> a, std::span<ValueT> out,
                 const M& m = {}, const Map& map = {})
{
  using T = detail::host_compute_t;
  static_assert(monoid<M, T>, "spira::reduce_rows: M must model spira::monoid");
  detail::require_host_space(a.space, "spira::reduce_rows", "A");
  validate(res, a, csr_check::valid, "spira::reduce_rows: A");
  detail::expects<dimension_mismatch>(std::int64_t(out.size()) == a.rows,
                                      "spira::reduce_rows: out has ", out.size(),
                                      " entries but A has ", a.rows, " rows");
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t i = 0; i < a.rows; ++i) {
  T acc = M::template identity<T>();
  for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
    acc = m(acc, T(map(T(a.values[k]))));
  }
  out[i] = ValueT(acc);
}
}

/// out[j] = ⊕ over the stored entries of column j of map(A[i,j]), in increasing row order; an
/// empty column gives the identity. Needs a canonical CSR matrix (it is transposed: O(nnz) memory).
template <class M, class Map = identity_map, class ValueT, class IndexT>
void reduce_cols(const host_resources& res, csr_view<ValueT, IndexT> a, std::span<ValueT> out,
                 const M& m = {}, const Map& map = {})
{
  detail::require_host_space(a.space, "spira::reduce_cols", "A");
  validate(res, a, csr_check::canonical, "spira::reduce_cols: A");
  detail::expects<dimension_mismatch>(std::int64_t(out.size()) == a.cols,
                                      "spira::reduce_cols: out has ", out.size(),
                                      " entries but A has ", a.cols, " columns");
  const auto t = transpose(res, a);
  reduce_rows(res, t.view(), out, m, map);
}

/// ⊕ over every stored entry of map(A): each row's in column order, then the rows' in row order
/// (the same value for any number of threads); the identity for a matrix with no entries.
template <class M, class Map = identity_map, class ValueT, class IndexT>
[[nodiscard]] ValueT reduce_scalar(const host_resources& res, csr_view<ValueT, IndexT> a,
                                   const M& m = {}, const Map& map = {})
{
  using T = detail::host_compute_t;
  static_assert(monoid<M, T>, "spira::reduce_scalar: M must model spira::monoid");
  detail::require_host_space(a.space, "spira::reduce_scalar", "A");
  validate(res, a, csr_check::valid, "spira::reduce_scalar: A");
  std::vector<T> rows(std::size_t(a.rows));
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t i = 0; i < a.rows; ++i) {
  T acc = M::template identity<T>();
  for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
    acc = m(acc, T(map(T(a.values[k]))));
  }
  rows[std::size_t(i)] = acc;
}
T acc = M::template identity<T>();
for (const T r : rows) {
  acc = m(acc, r);
}
return ValueT(acc);
}

/// A copy of A (same pattern, explicit zeros kept) with every stored value replaced by op(value).
template <class Op, class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> apply(const host_resources& res, csr_view<ValueT, IndexT> a,
                                 const Op& op)
{
  detail::require_host_space(a.space, "spira::apply", "A");
  validate(res, a, csr_check::valid, "spira::apply: A");
  csr_matrix<ValueT, IndexT> m(res, a.rows, a.cols, a.nnz);
  std::copy_n(a.row_ptr, a.rows + 1, m.row_ptr());
  std::copy_n(a.col_idx, a.nnz, m.col_idx());
  ValueT* out = m.values();
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t k = 0; k < a.nnz; ++k) {
  out[k] = ValueT(op(a.values[k]));
}
return m;
}

/// X(i, j) = op(X(i, j)) for every element of a dense host matrix.
template <class Op, class ValueT>
void apply(const host_resources& res, dense_view<ValueT> x, const Op& op)
{
  detail::require_host_space(x.space, "spira::apply", "X");
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t i = 0; i < x.rows; ++i) {
  ValueT* row = x.row(i);
  for (std::int64_t j = 0; j < x.cols; ++j) {
    row[j] = ValueT(op(row[j]));
  }
}
}

}  // namespace spira
