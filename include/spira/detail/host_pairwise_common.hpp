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

}  // namespace detail

}  // namespace spira
