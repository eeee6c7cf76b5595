// spira: the host engine's tuning policy and the pieces its engines share (argument checks of the
// host operations, row norms, prepared rows, accumulator terms, finalize). Included by
// spira/ops.hpp.
#pragma once

#include <spira/accuracy.hpp>
#include <spira/convert.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>
#include <spira/semiring.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
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

template <class ValueT>
void check_dense_output(dense_view<ValueT> out, std::int64_t rows, std::int64_t cols,
                        const char* op, const char* expected)
{
  require_host_space(out.space, op, "out");
  expects<dimension_mismatch>(out.rows == rows && out.cols == cols, op, ": out is ", out.rows,
                              " x ", out.cols, " but must be ", expected, " = ", rows, " x ", cols);
  expects(out.ld >= out.cols, op, ": out.ld = ", out.ld, " is smaller than out.cols = ", out.cols);
  expects(out.data != nullptr || rows == 0 || cols == 0, op, ": out.data is null");
}

/// Per-row norms of a CSR matrix: norms[i] = ⊕ over row i of map(a), in column order.
template <class Norms, class T, class ValueT, class IndexT>
std::vector<typename Norms::template values<T>> row_norms(const host_resources& res,
                                                          csr_view<ValueT, IndexT> a)
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

/// out[k] = d.prepare(a.values[k], prepare_norm(row of k)) for every stored entry of `a` (computed
/// in T, stored as ValueT).
template <class D, class T, class ValueT, class IndexT>
void prepare_values(const host_resources& res, csr_view<ValueT, IndexT> a, const D& d, ValueT* out)
{
  using pnorm = norm_list<typename D::prepare_norm>;
  const auto scale = row_norms<pnorm, T>(res, a);
SPIRA_OMP(omp parallel for num_threads(res.num_threads()) schedule(static))
for (std::int64_t i = 0; i < a.rows; ++i) {
  for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
    out[k] = ValueT(d.template prepare<T>(T(a.values[k]), scale[i][0]));
  }
}
}

/// A copy of `a` whose values are d.prepare(x, prepare_norm(row)) (prepare_values).
template <class D, class T, class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> prepared_copy(const host_resources& res, csr_view<ValueT, IndexT> a,
                                         const D& d)
{
  csr_matrix<ValueT, IndexT> m(res, a.rows, a.cols, a.nnz);
  std::copy_n(a.row_ptr, a.rows + 1, m.row_ptr());
  std::copy_n(a.col_idx, a.nnz, m.col_idx());
  prepare_values<D, T>(res, a, d, m.values());
  return m;
}

/// B prepared once for calls with many A (the index tiles of the tiled host k-NN graph, each used
/// by every query tile): what the host engine computes of B alone. From the start: B's row norms
/// and its values as ⊗ sees them (D::prepare). Built by the first engine call that needs them
/// (kept_or_own): the intersection engine's NAMM corrections of B's rows, B's CSC and ⊗(0, b) per
/// CSC entry; the selection engine's rows of B in best-first order and B's CSC. A call
/// (pairwise_dispatch with a prepared B) uses the norms, the prepared values and the row
/// corrections always: they do not depend on how the columns are numbered. It uses the parts
/// indexed by column (the CSC, its ⊗(0, b), the selection's rows) only where it keeps the declared
/// columns (columns_worth_compressing false for that pair); where it renumbers the columns to
/// those A and B use, those parts are built for the call, as without a prepared B. Every value is
/// therefore computed by the same code from the same inputs as without it: the results are the
/// same bit for bit. Memory: host_bytes(). Not thread-safe: one call at a time.
template <class D, class ValueT, class IndexT>
struct host_pairwise_prepared {
  using traits = distance_traits<D, host_compute_t>;
  using norm_values = typename traits::norms::template values<host_compute_t>;
  using acc_t = typename traits::accumulator;

  csr_view<ValueT, IndexT> b;  ///< the operand as the caller passes it (raw values)
  std::vector<norm_values> norms;
  std::vector<ValueT> values;  ///< prepared values (D with a prepare step; empty otherwise)
  std::optional<std::vector<acc_t>> corrections;  ///< Σ over each row of ⊗(0, b) (sum NAMM)
  std::optional<csr_matrix<ValueT, IndexT>> csc;  ///< Bᵀ on the declared columns
  std::optional<std::vector<acc_t>> csc_zero;     ///< ⊗(0, b) per entry of csc (sum NAMM)
  std::optional<std::vector<IndexT>> best_cols;   ///< selection NAMM: rows of B best first...
  std::optional<std::vector<host_compute_t>> best_values;  ///< ...and their ⊗(0, b)

  host_pairwise_prepared(const host_resources& res, const D& d, csr_view<ValueT, IndexT> b_in)
      : b(b_in), norms(row_norms<typename traits::norms, host_compute_t>(res, b_in))
  {
    require_host_space(b.space, "host_pairwise_prepared", "B");
    if constexpr (traits::has_prepare) {
      values.resize(static_cast<std::size_t>(b.nnz));
      prepare_values<D, host_compute_t>(res, b, d, values.data());
    }
  }

  /// Bytes of host memory held (growing as the engines build their parts).
  [[nodiscard]] std::size_t host_bytes() const
  {
    auto vec = [](const auto& v) { return v.size() * sizeof(v[0]); };
    auto opt = [&](const auto& o) { return o ? vec(*o) : std::size_t{0}; };
    std::size_t n = vec(norms) + vec(values) + opt(corrections) + opt(csc_zero) + opt(best_cols) +
                    opt(best_values);
    if (csc) {
      n += std::size_t(csc->nnz()) * (sizeof(ValueT) + sizeof(IndexT)) +
           std::size_t(csc->rows() + 1) * sizeof(offset_t);
    }
    return n;
  }
};

/// A part of B that an engine computes: the prepared B's (built there by make() on first use)
/// where `kept` points to its slot, else `own`, built by make() for this call.
template <class X, class Make>
const X& kept_or_own(std::optional<X>* kept, std::optional<X>& own, Make&& make)
{
  std::optional<X>& slot = kept != nullptr ? *kept : own;
  if (!slot) {
    slot.emplace(make());
  }
  return *slot;
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

/// The first pass of guarded_finalize for an annihilating, guarded D over n pairs (query row i
/// against index rows whose totals are acc[t] and norms nb[t]): every pair's fast form into
/// fast[t] and the guard's verdict into trust[t] (1 trusted, 0 not), branch-free for the built-in
/// distances so that the compiler vectorises it. The caller evaluates the untrusted pairs directly
/// (detail::direct_value): together, guarded_finalize's values.
template <class D, class T, class Acc, class Norm>
inline void finalize_and_trust(const D& d, const Acc* acc, const Norm& na, const Norm* nb,
                               std::int64_t dim, std::int64_t n, T* fast, T* trust)
{
  constexpr accumulator_bounds bounds = accumulator_bounds_of<T>();
  for (std::int64_t t = 0; t < n; ++t) {
    fast[t] = finalize_total<D, T>(d, acc[t], na, nb[t], dim);
    trust[t] = guard_trusts<D, T>(d, acc[t], Acc{}, na, nb[t], dim, bounds) ? T(1) : T(0);
  }
}

/// run(pa, pb) on the rows as ⊗ sees them: copies prepared by D (D::prepare) where D has a
/// prepare step, else a and b themselves (norms are taken from the raw rows by the caller).
template <class T, class D, class ValueT, class IndexT, class Run>
void with_prepared(const host_resources& res, csr_view<ValueT, IndexT> a,
                   csr_view<ValueT, IndexT> b, const D& d, Run&& run)
{
  if constexpr (distance_traits<D, T>::has_prepare) {
    const csr_matrix<ValueT, IndexT> pa = prepared_copy<D, T>(res, a, d);
    const csr_matrix<ValueT, IndexT> pb = prepared_copy<D, T>(res, b, d);
    run(pa.view(), pb.view());
  } else {
    run(a, b);
  }
}

}  // namespace detail

}  // namespace spira
