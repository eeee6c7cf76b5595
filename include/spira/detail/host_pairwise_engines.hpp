// spira: the three engines of the host pairwise operation (spira::pairwise in spira/ops.hpp):
// intersection through the CSC of B, union by selection for min / max NAMMs, union by merge for
// the other NAMMs. Included by spira/ops.hpp.
#pragma once

#include <spira/accuracy.hpp>
#include <spira/convert.hpp>
#include <spira/cuda/pairwise_strategy.hpp>  // dot_product_form (host code)
#include <spira/detail/host_pairwise_common.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>
#include <spira/semiring.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace spira::detail {

/// Whether the intersection engine may evaluate A against itself as a symmetric product
/// (intersection_is_symmetric) for D: annihilating, one term, ⊗(a, b) = a * b (dot_product_form
/// with the identity map, so ⊗ commutes bit for bit) and a finalize of the two rows' norms that
/// commutes too (the built-in dot-product distances).
template <class D, class T>
inline constexpr bool symmetric_capable_v =
    distance_traits<D, T>::annihilating && distance_traits<D, T>::num_terms == 1 &&
    dot_product_form<D>::value && std::is_base_of_v<identity_form, dot_product_form<D>>;

/// Whether a and b are the same rows (the same column and value arrays, equal row pointers): a
/// matrix against itself, or a k-NN tile on the diagonal of a self query.
template <class ValueT, class IndexT>
bool intersection_is_symmetric(csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b)
{
  return a.rows == b.rows && a.nnz == b.nnz && a.col_idx == b.col_idx && a.values == b.values &&
         std::equal(a.row_ptr, a.row_ptr + a.rows + 1, b.row_ptr);
}

/// Intersection engine (annihilating semirings and NAMMs with a sum-kind ⊕): for every row i of A,
/// scatter its products with the matching columns of B (the rows of bt = Bᵀ) into a dense
/// accumulator row of length n, then finalize the row of the output (through the accuracy guard
/// where D has one). This engine and the two below run on the used columns only
/// (compressed_columns, from pairwise_dispatch); `dim` is the declared column count, which
/// finalize reads. `prepared`: B prepared once (host_pairwise_prepared) or null; `declared`: the
/// columns are B's declared ones (not renumbered), so that its CSC and ⊗(0, b) may be kept there.
/// A against itself for a D of symmetric_capable_v: row i computes the pairs (i, j >= i) only (the
/// walk of each column starts at row i) and the others are copied from (j, i), which holds the
/// same bits - the same products, in the same increasing order of the shared columns, and a
/// finalize that commutes - so half the products are formed.
template <class D, class T, class ValueT, class IndexT, class Norms>
void pairwise_intersection(const host_resources& res, csr_view<ValueT, IndexT> a,
                           csr_view<ValueT, IndexT> b, dense_view<ValueT> out, const D& d,
                           const Norms& na, const Norms& nb, std::int64_t dim,
                           host_pairwise_prepared<D, ValueT, IndexT>* prepared = nullptr,
                           bool declared = false)
{
  using traits = distance_traits<D, T>;
  using acc_t = typename traits::accumulator;
  using add = typename traits::add_monoid;
  constexpr int nt = traits::num_terms;
  host_pairwise_prepared<D, ValueT, IndexT>* const keep = declared ? prepared : nullptr;

  std::optional<csr_matrix<ValueT, IndexT>> bt_own;
  const csr_view<ValueT, IndexT> bt =
      kept_or_own(keep != nullptr ? &keep->csc : nullptr, bt_own, [&] {
        return transpose(res, b);
      }).view();

  // NAMM corrections: Σ over the row of ⊗(a, 0) (rows of A) and of ⊗(0, b) (rows of B).
  std::vector<acc_t> ca;
  std::optional<std::vector<acc_t>> cb_own, bt_zero_own;
  const std::vector<acc_t>* cb_p = nullptr;
  const std::vector<acc_t>* bt_zero_p = nullptr;
  if constexpr (!traits::annihilating) {
    auto corrections = [&](csr_view<ValueT, IndexT> m, bool left) {
      std::vector<acc_t> c(static_cast<std::size_t>(m.rows));
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t i = 0; i < m.rows; ++i) {
  acc_t s = identity_terms<add, T, nt>();
  for (offset_t k = m.row_ptr[i]; k < m.row_ptr[i + 1]; ++k) {
    const T x = T(m.values[k]);
    add_terms<add>(
        s, as_terms(left ? d.template multiply<T>(x, T(0)) : d.template multiply<T>(T(0), x)));
  }
  c[i] = s;
}
return c;
    };
    ca = corrections(a, true);
    cb_p = &kept_or_own(prepared != nullptr ? &prepared->corrections : nullptr, cb_own,
                        [&] { return corrections(b, false); });
    // ⊗(0, b) for every entry of the CSC of B, so the intersection pass evaluates ⊗ once per
    // product.
    bt_zero_p = &kept_or_own(keep != nullptr ? &keep->csc_zero : nullptr, bt_zero_own, [&] {
      std::vector<acc_t> z(static_cast<std::size_t>(bt.nnz));
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t q = 0; q < bt.nnz; ++q) {
  z[q] = as_terms(d.template multiply<T>(T(0), T(bt.values[q])));
}
return z;
    });
  }
  // (ca when D annihilates: then neither is read)
  const std::vector<acc_t>& cb = cb_p != nullptr ? *cb_p : ca;
  const std::vector<acc_t>& bt_zero = bt_zero_p != nullptr ? *bt_zero_p : ca;

  const std::int64_t n = b.rows;
  const acc_t zero = identity_terms<add, T, nt>();
  bool symmetric = false;
  if constexpr (symmetric_capable_v<D, T>) {
    symmetric = intersection_is_symmetric(a, b);
  }
  SPIRA_OMP(omp parallel num_threads(res.num_threads()))
  {
    std::vector<acc_t> acc(static_cast<std::size_t>(n));
    std::vector<T> fast(static_cast<std::size_t>(n));
    std::vector<T> trust(static_cast<std::size_t>(n));  // 1: the guard trusts the fast form
SPIRA_OMP(omp for schedule(dynamic, host_pairwise_policy::rows_per_chunk))
for (std::int64_t i = 0; i < a.rows; ++i) {
  // The pairs (i, j) this row computes: j >= j0 (j0 = i for a symmetric product).
  const std::int64_t j0 = symmetric ? i : 0;
  std::fill(acc.begin() + j0, acc.end(), zero);
  acc_t* const accp = acc.data();
  const IndexT* const bt_cols = bt.col_idx;
  const ValueT* const bt_vals = bt.values;
  for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
    const T x = T(a.values[k]);
    const std::int64_t c = a.col_idx[k];
    const offset_t q_end = bt.row_ptr[c + 1];
    if constexpr (traits::annihilating) {
      // (symmetric: column c holds row i itself, found by a binary search over its sorted rows)
      const offset_t q_begin =
          symmetric
              ? offset_t(std::lower_bound(bt_cols + bt.row_ptr[c], bt_cols + q_end, IndexT(i)) -
                         bt_cols)
              : bt.row_ptr[c];
      for (offset_t q = q_begin; q < q_end; ++q) {
        add_terms<add>(accp[bt_cols[q]], as_terms(d.template multiply<T>(x, T(bt_vals[q]))));
      }
    } else {
      // ⊗(a,b) - ⊗(a,0) - ⊗(0,b), with ⊗(a,0) hoisted out of the walk over the column.
      const acc_t pa = as_terms(d.template multiply<T>(x, T(0)));
      for (offset_t q = bt.row_ptr[c]; q < q_end; ++q) {
        acc_t p = as_terms(d.template multiply<T>(x, T(bt_vals[q])));
        const acc_t& pb = bt_zero[q];
        for (int t = 0; t < nt; ++t) {
          p[t] = (p[t] - pa[t]) - pb[t];
        }
        add_terms<add>(accp[bt_cols[q]], p);
      }
    }
  }
  ValueT* row = out.row(i);
  constexpr accumulator_bounds bounds = accumulator_bounds_of<T>();
  const csr_rows<ValueT, IndexT> rows_a = rows_of(a);
  const csr_rows<ValueT, IndexT> rows_b = rows_of(b);
  if constexpr (traits::annihilating && accuracy_traits<D, T>::guarded) {
    // guarded_finalize (spira/accuracy.hpp) in two passes: every pair's fast form and the guard's
    // verdict, branch-free for the built-in distances (so the compiler vectorises it), then the
    // direct form where the guard said no.
    finalize_and_trust<D, T>(d, acc.data() + j0, na[i], nb.data() + j0, dim, n - j0, fast.data(),
                             trust.data());
    for (std::int64_t j = j0; j < n; ++j) {
      row[j] = ValueT(trust[j - j0] != T(0)
                          ? fast[j - j0]
                          : detail::direct_value<D, T>(d, rows_a[i], rows_b[j], na[i], nb[j], dim));
    }
    continue;
  }
  for (std::int64_t j = j0; j < n; ++j) {
    acc_t total = acc[j];
    acc_t magnitude{};
    if constexpr (!traits::annihilating) {
      for (int t = 0; t < nt; ++t) {
        total[t] = (ca[i][t] + cb[j][t]) + acc[j][t];
        magnitude[t] = std::abs(ca[i][t]) + std::abs(cb[j][t]);
      }
    }
    if constexpr (accuracy_traits<D, T>::guarded) {
      row[j] = ValueT(guarded_finalize<D, T>(d, total, magnitude, na[i], nb[j], dim, rows_a, i,
                                             rows_b, j, bounds));
    } else {
      row[j] = ValueT(finalize_pair<D, T>(d, total, na[i], nb[j], dim));
    }
  }
}
  }
  if (symmetric) {
    // The pairs (i, j < i) from (j, i), in squares of 64 x 64 so that the reads across rows stay
    // in cache.
    constexpr std::int64_t side = 64;
    const std::int64_t squares = (a.rows + side - 1) / side;
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(dynamic, 1))
for (std::int64_t si = 0; si < squares; ++si) {
  const std::int64_t i_end = std::min(a.rows, (si + 1) * side);
  for (std::int64_t j0 = 0; j0 <= si * side; j0 += side) {
    for (std::int64_t i = std::max(si * side, j0 + 1); i < i_end; ++i) {
      ValueT* row = out.row(i);
      const std::int64_t j_end = std::min(i, j0 + side);
      for (std::int64_t j = j0; j < j_end; ++j) {
        row[j] = out.row(j)[i];
      }
    }
  }
}
  }
}

/// Union engine for NAMMs whose ⊕ is a selection (min or max kind) with one accumulator term.
/// ⊕ over the union of A_i and B_j splits into three selections:
///   ⊕_{A_i ∩ B_j} ⊗(a, b)   scattered through the CSC of B, as in the intersection engine;
///   ⊕_{A_i \ B_j} ⊗(a, 0)   the first column of A_i, in best-first order of ⊗(a, 0), that B_j
///                           lacks; prefix[j] counts how many leading columns of that order B_j
///                           holds (a j advances at step k only if it held columns 0..k-1);
///   ⊕_{B_j \ A_i} ⊗(0, b)   the first column of B_j, in best-first order of ⊗(0, b) (sorted once),
///                           that A_i lacks (a per-thread bitset over the columns marks A_i).
/// Work: the products that exist, plus rows(A) x rows(B) x (1 + columns skipped in the last step),
/// instead of O(deg_i + deg_j) per pair for a merge. Memory: O(nnz(B)) for the sorted rows and the
/// CSC of B, per thread rows(B) accumulators and a.cols / 8 bytes of bitset (a.cols is at most
/// nnz(A) + nnz(B) here: compressed_columns renumbers wider inputs). `prepared` and `declared`: as
/// for pairwise_intersection (the sorted rows and the CSC kept where the columns are declared).
template <class D, class T, class ValueT, class IndexT, class Norms>
void pairwise_union_select(const host_resources& res, csr_view<ValueT, IndexT> a,
                           csr_view<ValueT, IndexT> b, dense_view<ValueT> out, const D& d,
                           const Norms& na, const Norms& nb, std::int64_t dim,
                           host_pairwise_prepared<D, ValueT, IndexT>* prepared = nullptr,
                           bool declared = false)
{
  using traits = distance_traits<D, T>;
  using add = typename traits::add_monoid;
  // x strictly better than y for the selection ⊕.
  auto better = [](T x, T y) { return x != y && add{}(x, y) == x; };
  auto mul = [&](T p, T q) { return as_terms(d.template multiply<T>(p, q))[0]; };
  const T identity = add::template identity<T>();

  host_pairwise_prepared<D, ValueT, IndexT>* const keep = declared ? prepared : nullptr;
  // Rows of B in best-first order of ⊗(0, b): column and value, O(nnz(B) log) once.
  std::optional<std::vector<IndexT>> b_cols_own;
  std::optional<std::vector<T>> b_vals_own;
  if (keep == nullptr || !keep->best_cols) {
    b_cols_own.emplace(static_cast<std::size_t>(b.nnz));
    b_vals_own.emplace(static_cast<std::size_t>(b.nnz));
    std::vector<IndexT>& cols_out = *b_cols_own;
    std::vector<T>& vals_out = *b_vals_own;
    SPIRA_OMP(omp parallel num_threads(res.num_threads()))
    {
      std::vector<std::pair<T, IndexT>> tmp;
SPIRA_OMP(omp for schedule(dynamic, 64))
for (std::int64_t j = 0; j < b.rows; ++j) {
  tmp.clear();
  for (offset_t k = b.row_ptr[j]; k < b.row_ptr[j + 1]; ++k) {
    tmp.emplace_back(mul(T(0), T(b.values[k])), b.col_idx[k]);
  }
  std::stable_sort(tmp.begin(), tmp.end(),
                   [&](const auto& x, const auto& y) { return better(x.first, y.first); });
  for (std::size_t k = 0; k < tmp.size(); ++k) {
    cols_out[b.row_ptr[j] + k] = tmp[k].second;
    vals_out[b.row_ptr[j] + k] = tmp[k].first;
  }
}
    }
    if (keep != nullptr) {
      keep->best_cols = std::move(b_cols_own);
      keep->best_values = std::move(b_vals_own);
    }
  }
  const std::vector<IndexT>& b_cols = keep != nullptr ? *keep->best_cols : *b_cols_own;
  const std::vector<T>& b_vals = keep != nullptr ? *keep->best_values : *b_vals_own;

  std::optional<csr_matrix<ValueT, IndexT>> bt_own;
  const csr_view<ValueT, IndexT> bt =
      kept_or_own(keep != nullptr ? &keep->csc : nullptr, bt_own, [&] {
        return transpose(res, b);
      }).view();
  const std::int64_t n = b.rows;
  SPIRA_OMP(omp parallel num_threads(res.num_threads()))
  {
    std::vector<T> acc(static_cast<std::size_t>(n));
    std::vector<std::int64_t> prefix(static_cast<std::size_t>(n));
    std::vector<std::pair<T, std::int64_t>> order;  // (⊗(a, 0), entry of A) best first
    std::vector<std::uint64_t> in_a(static_cast<std::size_t>((a.cols + 63) / 64), 0);
SPIRA_OMP(omp for schedule(dynamic, host_pairwise_policy::rows_per_chunk))
for (std::int64_t i = 0; i < a.rows; ++i) {
  const offset_t a0 = a.row_ptr[i];
  const offset_t deg = a.row_ptr[i + 1] - a0;
  order.clear();
  for (offset_t k = a0; k < a0 + deg; ++k) {
    order.emplace_back(mul(T(a.values[k]), T(0)), k);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](const auto& x, const auto& y) { return better(x.first, y.first); });
  std::fill(acc.begin(), acc.end(), identity);
  std::fill(prefix.begin(), prefix.end(), std::int64_t{0});
  for (offset_t k = 0; k < deg; ++k) {
    const offset_t e = order[k].second;
    const T x = T(a.values[e]);
    const std::int64_t c = a.col_idx[e];
    for (offset_t q = bt.row_ptr[c]; q < bt.row_ptr[c + 1]; ++q) {
      const std::int64_t j = bt.col_idx[q];
      acc[j] = add{}(acc[j], mul(x, T(bt.values[q])));
      if (prefix[j] == k) {
        prefix[j] = k + 1;
      }
    }
  }
  for (offset_t k = a0; k < a0 + deg; ++k) {
    in_a[std::size_t(a.col_idx[k]) >> 6] |= std::uint64_t{1} << (a.col_idx[k] & 63);
  }
  ValueT* row = out.row(i);
  for (std::int64_t j = 0; j < n; ++j) {
    T total = acc[j];
    if (prefix[j] < deg) {
      total = add{}(total, order[prefix[j]].first);
    }
    for (offset_t q = b.row_ptr[j]; q < b.row_ptr[j + 1]; ++q) {
      const std::size_t c = std::size_t(b_cols[q]);
      if (((in_a[c >> 6] >> (c & 63)) & 1u) == 0) {
        total = add{}(total, b_vals[q]);
        break;
      }
    }
    row[j] = ValueT(finalize_pair<D, T>(d, terms<T, 1>{{total}}, na[i], nb[j], dim));
  }
  for (offset_t k = a0; k < a0 + deg; ++k) {
    in_a[std::size_t(a.col_idx[k]) >> 6] = 0;
  }
}
  }
}

/// Union engine for the other NAMMs (custom-kind ⊕, or several terms with a min/max ⊕): a merge
/// of the two sorted rows per pair, on tiles of rows of A x rows of B.
template <class D, class T, class ValueT, class IndexT, class Norms>
void pairwise_union_merge(const host_resources& res, csr_view<ValueT, IndexT> a,
                          csr_view<ValueT, IndexT> b, dense_view<ValueT> out, const D& d,
                          const Norms& na, const Norms& nb, std::int64_t dim)
{
  constexpr std::int64_t ta = host_pairwise_policy::merge_tile_a;
  constexpr std::int64_t tb = host_pairwise_policy::merge_tile_b;
  const std::int64_t tiles_a = (a.rows + ta - 1) / ta;
  const std::int64_t tiles_b = (b.rows + tb - 1) / tb;
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(dynamic, 1) collapse(2))
for (std::int64_t ti = 0; ti < tiles_a; ++ti) {
  for (std::int64_t tj = 0; tj < tiles_b; ++tj) {
    const std::int64_t j_end = std::min(b.rows, (tj + 1) * tb);
    const std::int64_t i_end = std::min(a.rows, (ti + 1) * ta);
    for (std::int64_t i = ti * ta; i < i_end; ++i) {
      ValueT* row = out.row(i);
      for (std::int64_t j = tj * tb; j < j_end; ++j) {
        const auto acc = union_reduce<D, T>(d, rows_of(a)[i], rows_of(b)[j]);
        row[j] = ValueT(finalize_pair<D, T>(d, acc, na[i], nb[j], dim));
      }
    }
  }
}
}

}  // namespace spira::detail
