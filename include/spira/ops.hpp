// spira: GraphBLAS-style operations on the host, templated on the semiring / monoid / distance, so
// a user-defined operator struct runs without rebuilding the library.
//
//   mxv(res, A, x, y, semiring)            y = A ⊕.⊗ x (CSR times dense vector)
//   pairwise(res, A, B, out, distance)     out = finalize(A ⊕.⊗ Bᵀ) (dense output, rows(A) x
//   rows(B)) reduce_rows(res, A, out, monoid, map)  out[i] = ⊕ over the stored entries of row i of
//   map(a) apply(res, A, op)                      a copy of A with every stored value replaced by
//   op(a) apply(res, X, op)                      X(i,j) = op(X(i,j)) in place (dense)
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
#pragma once

#include <spira/accuracy.hpp>
#include <spira/convert.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>
#include <spira/semiring.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

namespace spira {

/// Tuning of the host engine. These are reasoned defaults, not the output of a parameter sweep:
/// the engine reached 19-23x over one thread on 32 cores with them (docs/metrics.md).
struct host_pairwise_policy {
  /// Rows of A handed to a thread at a time (dynamic schedule): small, so that the few very long
  /// rows of power-law data do not leave threads idle at the end; each row already costs
  /// O(rows(B)) for its accumulator reset and finalize, which amortises the scheduling.
  static constexpr std::int64_t rows_per_chunk = 8;
  /// Tile of the merge (union) engine: rows of A x rows of B. 512 rows of B of a typical degree
  /// (< 100 entries of 8-12 bytes) stay in a 1-2 MiB L2 while 16 rows of A are merged against them.
  static constexpr std::int64_t merge_tile_a = 16;
  static constexpr std::int64_t merge_tile_b = 512;
};

namespace detail {

/// The arithmetic type of the host engine.
using host_compute_t = double;

inline void require_host_space(memory_space s, const char* op, const char* name)
{
  expects(s == memory_space::host, op, ": ", name,
          " is in device memory; pass cuda_resources or copy it with spira::to_host");
}

template <class V>
void check_dense_output(dense_view<V> out, std::int64_t rows, std::int64_t cols, const char* op,
                        const char* expected)
{
  require_host_space(out.space, op, "out");
  expects<dimension_mismatch>(out.rows == rows && out.cols == cols, op, ": out is ", out.rows,
                              " x ", out.cols, " but must be ", expected, " = ", rows, " x ", cols);
  expects(out.ld >= out.cols, op, ": out.ld = ", out.ld, " is smaller than out.cols = ", out.cols);
  expects(out.data != nullptr || rows == 0 || cols == 0, op, ": out.data is null");
}

/// Per-row norms of a CSR matrix: norms[i] = ⊕ over row i of map(a), in column order.
template <class Norms, class T, class V, class I>
std::vector<typename Norms::template values<T>> row_norms(const host_resources& res,
                                                          csr_view<V, I> a)
{
  using values = typename Norms::template values<T>;
  std::vector<values> out(static_cast<std::size_t>(a.rows));
  if constexpr (Norms::size > 0) {
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t i = 0; i < a.rows; ++i) {
  values acc = Norms::template identity<T>();
  for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
    Norms::accumulate(acc, T(a.values[k]));
  }
  out[i] = acc;
}
  }
  return out;
}

/// A copy of `a` whose values are d.prepare(x, prepare_norm(row)) (computed in T, stored as V).
template <class D, class T, class V, class I>
csr_matrix<V, I> prepared_copy(const host_resources& res, csr_view<V, I> a, const D& d)
{
  using pnorm = norm_list<typename D::prepare_norm>;
  const auto scale = row_norms<pnorm, T>(res, a);
  csr_matrix<V, I> m(res, a.rows, a.cols, a.nnz);
  std::copy_n(a.row_ptr, a.rows + 1, m.row_ptr());
  std::copy_n(a.col_idx, a.nnz, m.col_idx());
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t i = 0; i < a.rows; ++i) {
  for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
    m.values()[k] = V(d.template prepare<T>(T(a.values[k]), scale[i][0]));
  }
}
return m;
}

template <class Add, class T, int N>
inline void add_terms(terms<T, N>& acc, const terms<T, N>& x)
{
  for (int t = 0; t < N; ++t) {
    acc[t] = Add{}(acc[t], x[t]);
  }
}

template <class Add, class T, int N>
inline terms<T, N> identity_terms()
{
  terms<T, N> r;
  for (int t = 0; t < N; ++t) {
    r[t] = Add::template identity<T>();
  }
  return r;
}

template <class D, class T, class Acc, class Norm>
inline T finalize_pair(const D& d, const Acc& acc, const Norm& na, const Norm& nb, std::int64_t dim)
{
  using traits = distance_traits<D, T>;
  static_assert(traits::has_finalize || !traits::declares_finalize,
                "D::finalize has the wrong signature: expected template <class T> T finalize(acc, "
                "const spira::terms<T, K>& norms_a, const spira::terms<T, K>& norms_b, "
                "std::int64_t dim) const, with acc of the type multiply returns and K the number "
                "of norms D declares");
  if constexpr (traits::has_finalize) {
    return d.template finalize<T>(from_terms(acc), na, nb, dim);
  } else {
    static_assert(traits::num_terms == 1,
                  "a distance with several accumulator terms must define finalize");
    return acc[0];
  }
}

/// Intersection engine (annihilating semirings and NAMMs with a sum-kind ⊕): for every row i of A,
/// scatter its products with the matching columns of B (the rows of bt = Bᵀ) into a dense
/// accumulator row of length n, then finalize the row of the output (through the accuracy guard
/// where D has one). This engine and the two below run on the used columns only
/// (compressed_columns, from pairwise_dispatch); `dim` is the declared column count, which
/// finalize reads.
template <class D, class T, class V, class I, class Norms>
void pairwise_intersection(const host_resources& res, csr_view<V, I> a, csr_view<V, I> b,
                           dense_view<V> out, const D& d, const Norms& na, const Norms& nb,
                           std::int64_t dim)
{
  using traits = distance_traits<D, T>;
  using acc_t = typename traits::accumulator;
  using add = typename traits::add_monoid;
  constexpr int nt = traits::num_terms;

  const csr_matrix<V, I> bt_m = transpose(res, b);
  const csr_view<V, I> bt = bt_m.view();

  // NAMM corrections: Σ over the row of ⊗(a, 0) (rows of A) and of ⊗(0, b) (rows of B).
  std::vector<acc_t> ca, cb, bt_zero;
  if constexpr (!traits::annihilating) {
    auto corrections = [&](csr_view<V, I> m, bool left) {
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
    cb = corrections(b, false);
    // ⊗(0, b) for every entry of the CSC of B, so the intersection pass evaluates ⊗ once per
    // product.
    bt_zero.resize(static_cast<std::size_t>(bt.nnz));
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t q = 0; q < bt.nnz; ++q) {
  bt_zero[q] = as_terms(d.template multiply<T>(T(0), T(bt.values[q])));
}
  }

  const std::int64_t n = b.rows;
  const acc_t zero = identity_terms<add, T, nt>();
  SPIRA_OMP(omp parallel num_threads(res.num_threads()))
  {
    std::vector<acc_t> acc(static_cast<std::size_t>(n));
SPIRA_OMP(omp for schedule(dynamic, host_pairwise_policy::rows_per_chunk))
for (std::int64_t i = 0; i < a.rows; ++i) {
  std::fill(acc.begin(), acc.end(), zero);
  acc_t* const accp = acc.data();
  const I* const bt_cols = bt.col_idx;
  const V* const bt_vals = bt.values;
  for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
    const T x = T(a.values[k]);
    const std::int64_t c = a.col_idx[k];
    const offset_t q_end = bt.row_ptr[c + 1];
    if constexpr (traits::annihilating) {
      for (offset_t q = bt.row_ptr[c]; q < q_end; ++q) {
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
  V* row = out.row(i);
  constexpr accumulator_bounds bounds = accumulator_bounds_of<T>();
  const csr_rows<V, I> rows_a = rows_of(a);
  const csr_rows<V, I> rows_b = rows_of(b);
  for (std::int64_t j = 0; j < n; ++j) {
    acc_t total = acc[j];
    acc_t magnitude{};
    if constexpr (!traits::annihilating) {
      for (int t = 0; t < nt; ++t) {
        total[t] = (ca[i][t] + cb[j][t]) + acc[j][t];
        magnitude[t] = std::abs(ca[i][t]) + std::abs(cb[j][t]);
      }
    }
    if constexpr (accuracy_traits<D, T>::guarded) {
      row[j] = V(guarded_finalize<D, T>(d, total, magnitude, na[i], nb[j], dim, rows_a, i, rows_b,
                                        j, bounds));
    } else {
      row[j] = V(finalize_pair<D, T>(d, total, na[i], nb[j], dim));
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
/// nnz(A) + nnz(B) here: compressed_columns renumbers wider inputs).
template <class D, class T, class V, class I, class Norms>
void pairwise_union_select(const host_resources& res, csr_view<V, I> a, csr_view<V, I> b,
                           dense_view<V> out, const D& d, const Norms& na, const Norms& nb,
                           std::int64_t dim)
{
  using traits = distance_traits<D, T>;
  using add = typename traits::add_monoid;
  // x strictly better than y for the selection ⊕.
  auto better = [](T x, T y) { return x != y && add{}(x, y) == x; };
  auto mul = [&](T p, T q) { return as_terms(d.template multiply<T>(p, q))[0]; };
  const T identity = add::template identity<T>();

  // Rows of B in best-first order of ⊗(0, b): column and value, O(nnz(B) log) once.
  std::vector<I> b_cols(static_cast<std::size_t>(b.nnz));
  std::vector<T> b_vals(static_cast<std::size_t>(b.nnz));
  SPIRA_OMP(omp parallel num_threads(res.num_threads()))
  {
    std::vector<std::pair<T, I>> tmp;
SPIRA_OMP(omp for schedule(dynamic, 64))
for (std::int64_t j = 0; j < b.rows; ++j) {
  tmp.clear();
  for (offset_t k = b.row_ptr[j]; k < b.row_ptr[j + 1]; ++k) {
    tmp.emplace_back(mul(T(0), T(b.values[k])), b.col_idx[k]);
  }
  std::stable_sort(tmp.begin(), tmp.end(),
                   [&](const auto& x, const auto& y) { return better(x.first, y.first); });
  for (std::size_t k = 0; k < tmp.size(); ++k) {
    b_cols[b.row_ptr[j] + k] = tmp[k].second;
    b_vals[b.row_ptr[j] + k] = tmp[k].first;
  }
}
  }

  const csr_matrix<V, I> bt_m = transpose(res, b);
  const csr_view<V, I> bt = bt_m.view();
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
  V* row = out.row(i);
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
    row[j] = V(finalize_pair<D, T>(d, terms<T, 1>{{total}}, na[i], nb[j], dim));
  }
  for (offset_t k = a0; k < a0 + deg; ++k) {
    in_a[std::size_t(a.col_idx[k]) >> 6] = 0;
  }
}
  }
}

/// Union engine for the other NAMMs (custom-kind ⊕, or several terms with a min/max ⊕): a merge
/// of the two sorted rows per pair, on tiles of rows of A x rows of B.
template <class D, class T, class V, class I, class Norms>
void pairwise_union_merge(const host_resources& res, csr_view<V, I> a, csr_view<V, I> b,
                          dense_view<V> out, const D& d, const Norms& na, const Norms& nb,
                          std::int64_t dim)
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
      V* row = out.row(i);
      for (std::int64_t j = tj * tb; j < j_end; ++j) {
        const auto acc = union_reduce<D, T>(d, rows_of(a)[i], rows_of(b)[j]);
        row[j] = V(finalize_pair<D, T>(d, acc, na[i], nb[j], dim));
      }
    }
  }
}
}

/// run(pa, pb) on the rows as ⊗ sees them: copies prepared by D (D::prepare) where D has a
/// prepare step, else a and b themselves (norms are taken from the raw rows by the caller).
template <class T, class D, class V, class I, class Run>
void with_prepared(const host_resources& res, csr_view<V, I> a, csr_view<V, I> b, const D& d,
                   Run&& run)
{
  if constexpr (distance_traits<D, T>::has_prepare) {
    const csr_matrix<V, I> pa = prepared_copy<D, T>(res, a, d);
    const csr_matrix<V, I> pb = prepared_copy<D, T>(res, b, d);
    run(pa.view(), pb.view());
  } else {
    run(a, b);
  }
}

/// out(i, j) = d(row i of A, row j of B) for every pair, each evaluated directly (direct_value):
/// O(deg_i + deg_j) per pair, the reference the engines' fast forms are checked against (the CLI's
/// recall check). Canonical host CSR; out rows(A) x rows(B).
template <class D, class T, class V, class I>
void pairwise_direct(const host_resources& res, csr_view<V, I> a, csr_view<V, I> b,
                     dense_view<V> out, const D& d)
{
  using traits = distance_traits<D, T>;
  const auto na = row_norms<typename traits::norms, T>(res, a);
  const auto nb = row_norms<typename traits::norms, T>(res, b);
  auto run = [&](csr_view<V, I> pa, csr_view<V, I> pb) {
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(dynamic, 8))
for (std::int64_t i = 0; i < pa.rows; ++i) {
  V* row = out.row(i);
  for (std::int64_t j = 0; j < pb.rows; ++j) {
    row[j] = V(direct_value<D, T>(d, rows_of(pa)[i], rows_of(pb)[j], na[i], nb[j], pa.cols));
  }
}
  };
  with_prepared<T>(res, a, b, d, run);
}

/// d(row i, row i) for every row of a canonical host CSR matrix, computed in T and stored as V,
/// directly (direct_value; the union of a row with itself is the row).
template <class D, class T, class V, class I>
std::vector<V> self_distances(const host_resources& res, csr_view<V, I> m, const D& d)
{
  using traits = distance_traits<D, T>;
  const auto norms = row_norms<typename traits::norms, T>(res, m);
  auto run = [&](csr_view<V, I> pm) {
    std::vector<V> out(static_cast<std::size_t>(pm.rows));
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t i = 0; i < pm.rows; ++i) {
  const sparse_row<V, I> x = rows_of(pm)[i];
  out[static_cast<std::size_t>(i)] = V(direct_value<D, T>(d, x, x, norms[i], norms[i], pm.cols));
}
return out;
  };
  if constexpr (traits::has_prepare) {
    const csr_matrix<V, I> pm = prepared_copy<D, T>(res, m, d);
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
template <class V, class I>
class compressed_columns {
 public:
  compressed_columns(const host_resources& res, csr_view<V, I> a_in, csr_view<V, I> b_in)
      : a(a_in), b(b_in)
  {
    if (!columns_worth_compressing(a_in.cols, a_in.nnz, b_in.nnz)) {
      return;
    }
    const bool same = a_in.col_idx == b_in.col_idx && a_in.nnz == b_in.nnz;
    std::vector<I> used(a_in.col_idx, a_in.col_idx + a_in.nnz);
    if (!same) {
      used.insert(used.end(), b_in.col_idx, b_in.col_idx + b_in.nnz);
    }
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
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

  csr_view<V, I> a;  ///< A over the used columns (or A itself)
  csr_view<V, I> b;  ///< B over the used columns (or B itself)

 private:
  /// Points m at its columns' ranks among `used` (sorted), stored in `ids`.
  static void renumber(const host_resources& res, const std::vector<I>& used, csr_view<V, I>& m,
                       std::vector<I>& ids)
  {
    ids.resize(static_cast<std::size_t>(m.nnz));
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t k = 0; k < m.nnz; ++k) {
  ids[k] = I(std::lower_bound(used.begin(), used.end(), m.col_idx[k]) - used.begin());
}
m.col_idx = ids.data();
m.cols = std::int64_t(used.size());
  }

  std::vector<I> cols_a_, cols_b_;  ///< the renumbered column indices of A and B
};

/// Norms come from the raw rows; ⊗ sees the prepared rows when D has a prepare step (the
/// prepared copies keep the sparsity pattern of the raw ones). The engines run on the used columns
/// only (compressed_columns); finalize gets the declared column count.
template <class D, class T, class V, class I>
void pairwise_dispatch(const host_resources& res, csr_view<V, I> a, csr_view<V, I> b,
                       dense_view<V> out, const D& d)
{
  using traits = distance_traits<D, T>;
  const auto na = row_norms<typename traits::norms, T>(res, a);
  const auto nb = row_norms<typename traits::norms, T>(res, b);
  const std::int64_t dim = a.cols;
  const compressed_columns<V, I> used(res, a, b);
  auto run = [&](csr_view<V, I> pa, csr_view<V, I> pb) {
    using add = typename traits::add_monoid;
    if constexpr (traits::annihilating || traits::invertible_add) {
      pairwise_intersection<D, T>(res, pa, pb, out, d, na, nb, dim);
    } else if constexpr (traits::num_terms == 1 &&
                         (add::kind == monoid_kind::min || add::kind == monoid_kind::max)) {
      pairwise_union_select<D, T>(res, pa, pb, out, d, na, nb, dim);
    } else {
      pairwise_union_merge<D, T>(res, pa, pb, out, d, na, nb, dim);
    }
  };
  with_prepared<T>(res, used.a, used.b, d, run);
}

}  // namespace detail

/// out(i, j) = finalize(⊕_c ⊗(A[i,c], B[j,c]), norms(A_i), norms(B_j), A.cols) for every row i of A
/// and row j of B, over the intersection (annihilating D) or the union (NAMM) of their stored
/// columns. D is a semiring or a distance (spira/semiring.hpp); A and B must be canonical host CSR
/// matrices with the same number of columns; out must be rows(A) x rows(B).
template <class D, class V, class I>
void pairwise(const host_resources& res, csr_view<V, I> a, csr_view<V, I> b, dense_view<V> out,
              const D& d = {})
{
  using T = detail::host_compute_t;
  static_assert(semiring<D, T>,
                "spira::pairwise: D must model spira::semiring (add_monoid, "
                "annihilating, multiply<T>(a, b))");
  detail::require_host_space(a.space, "spira::pairwise", "A");
  detail::require_host_space(b.space, "spira::pairwise", "B");
  validate(res, a, csr_check::canonical, "spira::pairwise: A");
  validate(res, b, csr_check::canonical, "spira::pairwise: B");
  detail::expects<dimension_mismatch>(a.cols == b.cols, "spira::pairwise: A has ", a.cols,
                                      " columns but B has ", b.cols);
  detail::check_dense_output(out, a.rows, b.rows, "spira::pairwise", "rows(A) x rows(B)");
  if (a.rows == 0 || b.rows == 0) {
    return;
  }
  detail::pairwise_dispatch<D, T>(res, a, b, out, d);
}

/// y[i] = ⊕_c ⊗(A[i,c], x[c]) over the columns c of row i (annihilating semiring) or over all
/// columns (NAMM: a column missing from the row is the value 0). The semiring has one term.
/// Complexity: O(nnz(A)) for annihilating semirings and sum-kind NAMMs, O(nnz(A) log + cols log
/// cols) for min/max-kind NAMMs, O(rows x cols) for NAMMs with a custom ⊕.
template <class S, class V, class I>
void mxv(const host_resources& res, csr_view<V, I> a, std::span<const V> x, std::span<V> y,
         const S& s = {})
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
  const I* cols = a.col_idx + a.row_ptr[i];
  const V* vals = a.values + a.row_ptr[i];
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
        if (!std::binary_search(cols, cols + deg, I(c))) {
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
  y[i] = V(acc);
}
}

/// out[i] = ⊕ over the stored entries of row i of map(A[i,c]); an empty row gives the identity.
/// Needs a valid (not necessarily canonical) CSR matrix.
template <class M, class Map = identity_map, class V, class I>
void reduce_rows(const host_resources& res, csr_view<V, I> a, std::span<V> out, const M& m = {},
                 const Map& map = {})
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
  out[i] = V(acc);
}
}

/// A copy of A (same pattern, explicit zeros kept) with every stored value replaced by op(value).
template <class Op, class V, class I>
csr_matrix<V, I> apply(const host_resources& res, csr_view<V, I> a, const Op& op)
{
  detail::require_host_space(a.space, "spira::apply", "A");
  validate(res, a, csr_check::valid, "spira::apply: A");
  csr_matrix<V, I> m(res, a.rows, a.cols, a.nnz);
  std::copy_n(a.row_ptr, a.rows + 1, m.row_ptr());
  std::copy_n(a.col_idx, a.nnz, m.col_idx());
  V* out = m.values();
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t k = 0; k < a.nnz; ++k) {
  out[k] = V(op(a.values[k]));
}
return m;
}

/// X(i, j) = op(X(i, j)) for every element of a dense host matrix.
template <class Op, class V>
void apply(const host_resources& res, dense_view<V> x, const Op& op)
{
  detail::require_host_space(x.space, "spira::apply", "X");
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t i = 0; i < x.rows; ++i) {
  V* row = x.row(i);
  for (std::int64_t j = 0; j < x.cols; ++j) {
    row[j] = V(op(row[j]));
  }
}
}

}  // namespace spira
