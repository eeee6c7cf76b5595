// spira: the accuracy guard of the pairwise engines (host and device).
//
// The engines evaluate distances in fast forms that cancel: expansions such as
//   sqeuclidean(x, y) = |x|² + |y|² - 2 <x, y>
// and, for NAMMs with a sum ⊕, the intersection plus per-row corrections
//   Σ_{A_i ∪ B_j} ⊗(a, b) = Σ_{A_i} ⊗(a, 0) + Σ_{B_j} ⊗(0, b) + Σ_{A_i ∩ B_j} [⊗(a,b) - ⊗(a,0) -
//   ⊗(0,b)].
// Both lose every digit when the rows share large coordinates (rows [1e9, 0.5] and [1e9, 0.25]:
// |x|² = 1e18, the answer 0.0625). The guard keeps the fast form only where a cheap test says it
// is accurate and evaluates the other pairs directly (the union of the two sorted rows, with
// scaling where a direct sum could overflow):
//
//   * a sum NAMM (any distance, also a user's): the accumulated total (corrections included) is
//     trusted when every term is finite and |total| >= bounds.cancel * M, with
//     M = |Σ ⊗(a,0)| + |Σ ⊗(0,b)| >= bounds.tiny (so terms that underflowed are not trusted);
//     otherwise the pair is the ⊕ of ⊗ over the union (the NAMM's definition), or D::exact;
//   * an annihilating distance may declare
//       template <class T> bool trusted(acc, const terms<T, K>& nx, const terms<T, K>& ny,
//                                       std::int64_t dim, accumulator_bounds b) const;
//       template <class T, class ValueT, class IndexT> T exact(sparse_row<ValueT, IndexT> x,
//       sparse_row<ValueT, IndexT> y,
//                                                    const terms<T, K>& nx, const terms<T, K>& ny,
//                                                    std::int64_t dim) const;
//     (the catalogue's expansions do: sqeuclidean, euclidean, cosine, correlation, hellinger,
//     inner_product); a sum NAMM may declare `exact` to replace the plain union (minkowski,
//     braycurtis scale their rows so that no intermediate overflows);
//   * a guarded distance may declare `static constexpr bool zero_self_distance = true`: its direct
//     value of a row with itself (or with an equal row) is exactly 0 whenever the row's values are
//     all finite. The fused k-NN then writes d(i, i) = 0 after a parallel check of the row instead
//     of one thread's serial pass over it, and gives 0 to the pairs of equal rows without
//     evaluating them (equal: the same columns, equal finite values after D's prepare step, and
//     equal finite norms; spira/cuda/detail/knn_equal_rows.cuh). The metrics of the catalogue
//     declare it; tests/semiring/zero_self_test.cpp checks each declaration against the direct
//     value;
//   * an annihilating distance may declare `static constexpr double disjoint_distance = c` with
//       template <class T> bool disjoint_query(const terms<T, K>& n, accumulator_bounds b) const;
//       template <class T, class ValueT, class IndexT>
//       bool disjoint_index(sparse_row<ValueT, IndexT> y, const terms<T, K>& n,
//                           accumulator_bounds b) const;
//     promising that every pair (x, y) with disjoint_query(nx) and disjoint_index(y, ny) whose
//     accumulator is ⊕'s identity (no shared column, or products that cancelled or vanished) has
//     the value c, the fast form's where the guard trusts it and the direct one where not. The
//     k-NN graph (the fused CUDA kernel, the host by rows) then evaluates only the first k such
//     pairs of a row (in index order: later ones tie with them and lose on the index) and skips
//     the rest (cosine and inner_product declare it; tests/semiring/zero_self_test.cpp checks the
//     declarations);
//   * a distance with a disjoint value may declare `static constexpr double zero_rows_distance =
//     z`, promising that a row x storing no nonzero value (empty, or explicit zeros only; the row
//     as ⊗ sees it, after D's prepare step where it has one) has the value z with every row
//     storing none and D::disjoint_distance with every other row y that disjoint_index accepts -
//     whatever disjoint_query says of x (cosine: z = 0, two all-zero rows are equal). The fused
//     k-NN then ranks an all-zero query row without evaluating its pairs (cosine declares it;
//     tests/semiring/zero_self_test.cpp checks it).
//
// bounds.cancel is 2^33 unit roundoffs of the accumulator (2^-20 for double): a trusted result r
// of a sum of n terms of total size M has |error| <= n u M <= n 2^-33 r, far below float32's
// resolution for any realistic n. Pairs that fail the test are rare on ordinary data (near
// duplicates, rows far from the origin); on adversarial data they cost O(deg(x) + deg(y)) each.
#pragma once

#include <spira/config.hpp>
#include <spira/matrix.hpp>
#include <spira/semiring.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace spira {

/// A row of a canonical CSR matrix as the exact evaluation reads it: `size` sorted columns and
/// their values.
template <class ValueT, class IndexT>
struct sparse_row {
  const IndexT* cols = nullptr;
  const ValueT* values = nullptr;
  std::int64_t size = 0;
};

/// The rows of a canonical CSR matrix (row pointers, columns, values), read one at a time by the
/// guard only for the pairs it evaluates directly.
template <class ValueT, class IndexT>
struct csr_rows {
  const offset_t* ptr = nullptr;
  const IndexT* cols = nullptr;
  const ValueT* values = nullptr;
  SPIRA_HD sparse_row<ValueT, IndexT> operator[](std::int64_t i) const
  {
    return {cols + ptr[i], values + ptr[i], ptr[i + 1] - ptr[i]};
  }
};

/// The rows of a CSR view, for the guard and the direct evaluations.
template <class ValueT, class IndexT>
SPIRA_HD inline csr_rows<ValueT, IndexT> rows_of(csr_view<ValueT, IndexT> m)
{
  return {m.row_ptr, m.col_idx, m.values};
}

/// What an engine tells a distance's accuracy test about its accumulator type.
struct accumulator_bounds {
  /// A result of a cancelling expression below `cancel` times the size of the terms it cancels
  /// is not trusted.
  double cancel;
  /// Sums of squares (or of products) below `tiny` may have lost products to underflow.
  double tiny;
};

/// The bounds of an accumulator of type T: cancel = 2^33 unit roundoffs (so float accumulators
/// trust no cancellation at all), tiny = the smallest normal number times 2^digits.
template <class T>
SPIRA_HD constexpr accumulator_bounds accumulator_bounds_of()
{
  if constexpr (sizeof(T) == sizeof(float)) {
    return {512.0, 0x1p-102};  // 2^33 * 2^-24; 2^-126 * 2^24
  } else {
    return {0x1p-20, 0x1p-969};  // 2^33 * 2^-53; 2^-1022 * 2^53
  }
}

/// Optional members of a distance that the guard reads (see the top of this file).
template <class D, class T>
struct accuracy_traits {
  using dt = distance_traits<D, T>;
  using norm_values = typename dt::norm_values;
  using product_type = typename dt::product_type;
  static constexpr bool has_trusted =
      requires(const D d, product_type acc, norm_values n, accumulator_bounds b) {
        { d.template trusted<T>(acc, n, n, std::int64_t{}, b) } -> std::convertible_to<bool>;
      };
  static constexpr bool has_exact =
      requires(const D d, sparse_row<double, std::int64_t> r, norm_values n) {
        { d.template exact<T>(r, r, n, n, std::int64_t{}) } -> std::convertible_to<T>;
      };
  /// A NAMM whose ⊕ is a sum: the engines' corrected totals are guarded.
  static constexpr bool sum_namm = !dt::annihilating && dt::invertible_add;
  /// The engines run the guard for D.
  static constexpr bool guarded = has_trusted || sum_namm;
  /// D's direct value of a finite row with itself (or an equal row) is exactly 0.
  static constexpr bool zero_self = requires { requires D::zero_self_distance; };
  /// D's pairs without a shared column between rows its predicates accept have one value.
  static constexpr bool disjoint =
      dt::annihilating && requires(const D d, norm_values n, accumulator_bounds b) {
        { double(D::disjoint_distance) };
        { d.template disjoint_query<T>(n, b) } -> std::convertible_to<bool>;
        {
          d.template disjoint_index<T>(sparse_row<double, std::int64_t>{}, n, b)
        } -> std::convertible_to<bool>;
      };
  /// ... and an all-zero row has one value with each index row disjoint_index accepts.
  static constexpr bool zero_rows = disjoint && requires { double(D::zero_rows_distance); };
};

namespace detail {

template <class T>
SPIRA_HD inline T abs_value(T x)
{
  return x < T(0) ? -x : x;
}

/// Whether two sorted rows store the same columns (a row with itself, exact and near duplicates).
template <class ValueT, class IndexT>
SPIRA_HD inline bool same_columns(sparse_row<ValueT, IndexT> x, sparse_row<ValueT, IndexT> y)
{
  if (x.size != y.size) {
    return false;
  }
  if (x.cols == y.cols) {
    return true;
  }
  for (std::int64_t k = 0; k < x.size; ++k) {
    if (x.cols[k] != y.cols[k]) {
      return false;
    }
  }
  return true;
}

/// Calls f(a, b) for every column of the union of two sorted rows (0 where a row lacks it), in
/// column order. Rows with the same columns (the pairs the guard evaluates most: a row with itself
/// and near duplicates) are walked in step, without the merge's chain of dependent reads.
template <class ValueT, class IndexT, class F>
SPIRA_HD inline void for_each_union(sparse_row<ValueT, IndexT> x, sparse_row<ValueT, IndexT> y,
                                    F&& f)
{
  if (same_columns(x, y)) {
    for (std::int64_t k = 0; k < x.size; ++k) {
      f(x.values[k], y.values[k]);
    }
    return;
  }
  std::int64_t p = 0, q = 0;
  while (p < x.size && q < y.size) {
    if (x.cols[p] < y.cols[q]) {
      f(x.values[p++], ValueT(0));
    } else if (y.cols[q] < x.cols[p]) {
      f(ValueT(0), y.values[q++]);
    } else {
      const ValueT a = x.values[p++];
      f(a, y.values[q++]);
    }
  }
  for (; p < x.size; ++p) {
    f(x.values[p], ValueT(0));
  }
  for (; q < y.size; ++q) {
    f(ValueT(0), y.values[q]);
  }
}

/// ⊕ over the union of the stored columns of two sorted rows of ⊗ (a column missing from a row is
/// the value 0): the NAMM's definition, in T.
template <class D, class T, class ValueT, class IndexT>
SPIRA_HD auto union_reduce(const D& d, sparse_row<ValueT, IndexT> x, sparse_row<ValueT, IndexT> y)
{
  using traits = distance_traits<D, T>;
  using add = typename traits::add_monoid;
  constexpr int nt = traits::num_terms;
  terms<T, nt> acc;
  for (int t = 0; t < nt; ++t) {
    acc[t] = add::template identity<T>();
  }
  for_each_union(x, y, [&](ValueT a, ValueT b) {
    const auto p = as_terms(d.template multiply<T>(T(a), T(b)));
    for (int t = 0; t < nt; ++t) {
      acc[t] = add{}(acc[t], p[t]);
    }
  });
  return acc;
}

/// The largest |value| of a row (NaN if it holds one).
template <class T, class ValueT, class IndexT>
SPIRA_HD inline T max_abs(sparse_row<ValueT, IndexT> x)
{
  T m = T(0);
  for (std::int64_t k = 0; k < x.size; ++k) {
    const T v = abs_value(T(x.values[k]));
    if (v != v) {
      return v;
    }
    m = v > m ? v : m;
  }
  return m;
}

/// Division by 2^e, the power of two at or above `m` (a row's largest |value|): the scaling of the
/// direct forms of scale-invariant distances, set up once per row so that each entry costs one
/// multiplication (exact, like ldexp: a product by a power of two rounds only to a subnormal
/// result, as ldexp does). An infinite m keeps only the infinite entries, as ±1 (the limit of the
/// row scaled down), so rows with infinite values still have a direction; m = 0 keeps x.
template <class T>
class power_scale {
 public:
  SPIRA_HD explicit power_scale(T m) : m_(m)
  {
    using std::frexp;
    using std::isfinite;
    using std::ldexp;
    if (isfinite(m) && m != T(0)) {
      frexp(m, &e_);
      factor_ = ldexp(T(1), -e_);  // +inf for a subnormal m: then ldexp per entry
    }
  }
  /// x / 2^e.
  SPIRA_HD T operator()(T x) const
  {
    using std::isinf;
    using std::ldexp;
    if (isinf(m_)) {
      return isinf(x) ? (x > T(0) ? T(1) : T(-1)) : T(0);
    }
    if (factor_ == T(0)) {
      return x;
    }
    return isinf(factor_) ? ldexp(x, -e_) : x * factor_;
  }
  /// e (0 for m = 0 or non-finite m).
  SPIRA_HD int exponent() const { return e_; }

 private:
  T m_;
  T factor_ = T(0);
  int e_ = 0;
};

/// Out of line on the device: the direct evaluation is rare, and inlined into the engines' kernels
/// its loops would cost every pair registers.
#if defined(__CUDACC__)
#define SPIRA_RARE_PATH __noinline__
#else
#define SPIRA_RARE_PATH
#endif

/// d(x, y) evaluated directly, in T: D::exact where D has it, else finalize of the ⊕ over the
/// union of the two rows (the definition; no expansion, no correction). x and y as ⊗ sees them.
template <class D, class T, class ValueT, class IndexT, class Norms>
SPIRA_HD SPIRA_RARE_PATH T direct_value(const D& d, sparse_row<ValueT, IndexT> x,
                                        sparse_row<ValueT, IndexT> y, const Norms& nx,
                                        const Norms& ny, std::int64_t dim)
{
  using traits = distance_traits<D, T>;
  if constexpr (accuracy_traits<D, T>::has_exact) {
    return d.template exact<T>(x, y, nx, ny, dim);
  } else {
    const auto acc = union_reduce<D, T>(d, x, y);
    if constexpr (traits::has_finalize) {
      return d.template finalize<T>(from_terms(acc), nx, ny, dim);
    } else {
      return acc[0];
    }
  }
}

}  // namespace detail

/// D's finalize of an accumulated total (the NAMM corrections included), or the total itself.
template <class D, class T, class Norms>
SPIRA_HD T finalize_total(const D& d, const terms<T, distance_traits<D, T>::num_terms>& total,
                          const Norms& nx, const Norms& ny, std::int64_t dim)
{
  if constexpr (distance_traits<D, T>::has_finalize) {
    return d.template finalize<T>(from_terms(total), nx, ny, dim);
  } else {
    return total[0];
  }
}

/// Whether the guard trusts the fast form of a pair: D::trusted where D declares it; for a sum
/// NAMM, every term finite, `magnitude` (per term |Σ ⊗(a,0)| + |Σ ⊗(0,b)|) at least bounds.tiny
/// and |total| at least bounds.cancel times it; true for the other distances.
template <class D, class T, class Norms>
SPIRA_HD bool guard_trusts(const D& d, const terms<T, distance_traits<D, T>::num_terms>& total,
                           const terms<T, distance_traits<D, T>::num_terms>& magnitude,
                           const Norms& nx, const Norms& ny, std::int64_t dim,
                           accumulator_bounds bounds)
{
  using acc_traits = accuracy_traits<D, T>;
  static_assert(!acc_traits::has_trusted || acc_traits::has_exact || acc_traits::sum_namm,
                "a distance that declares trusted must declare exact (its direct form)");
  bool ok = true;
  if constexpr (acc_traits::has_trusted) {
    ok = d.template trusted<T>(from_terms(total), nx, ny, dim, bounds);
  } else if constexpr (acc_traits::sum_namm) {
    using std::isfinite;
    for (int t = 0; t < distance_traits<D, T>::num_terms; ++t) {
      ok = ok && isfinite(total[t]) && isfinite(magnitude[t]) && magnitude[t] >= T(bounds.tiny) &&
           detail::abs_value(total[t]) >= T(bounds.cancel) * magnitude[t];
    }
  }
  return ok;
}

/// The value of pair (x, y) from the engine's accumulated total: finalize_total when the guard
/// trusts it (guard_trusts), else the direct evaluation of row i of A and row j of B
/// (detail::direct_value). The rows are those ⊗ sees (prepared, where D prepares them).
template <class D, class T, class Norms, class ValueT, class IndexT>
SPIRA_HD T guarded_finalize(const D& d, const terms<T, distance_traits<D, T>::num_terms>& total,
                            const terms<T, distance_traits<D, T>::num_terms>& magnitude,
                            const Norms& nx, const Norms& ny, std::int64_t dim,
                            csr_rows<ValueT, IndexT> a, std::int64_t i, csr_rows<ValueT, IndexT> b,
                            std::int64_t j, accumulator_bounds bounds)
{
  if (guard_trusts<D, T>(d, total, magnitude, nx, ny, dim, bounds)) {
    return finalize_total<D, T>(d, total, nx, ny, dim);
  }
  return detail::direct_value<D, T>(d, a[i], b[j], nx, ny, dim);
}

}  // namespace spira
