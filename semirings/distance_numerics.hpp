// spira: the numerical building blocks of the distance catalogue (host and device): the guard's
// tests of the expanded forms, and the direct forms that scale their rows so that no intermediate
// overflows or cancels (see spira/accuracy.hpp and docs/metrics.md, "Precision").
#pragma once

#include <spira/accuracy.hpp>
#include <spira/semiring.hpp>

#include <cmath>
#include <cstdint>

namespace spira::distances::detail {
template <class T>
SPIRA_HD constexpr T abs(T x)
{
  return x < T(0) ? -x : x;
}
/// max(x, +0) for numbers; NaN stays NaN (NaN input must not become a distance of 0).
template <class T>
SPIRA_HD constexpr T clamp_nonnegative(T x)
{
  return x > T(0) ? x : (x == x ? T(0) : x);
}
template <class T>
SPIRA_HD constexpr T nonzero(T x)
{
  return x != T(0) ? T(1) : T(0);
}
/// |a - b|, with 0 for equal values (so equal infinite coordinates contribute nothing).
template <class T>
SPIRA_HD constexpr T abs_diff(T a, T b)
{
  return a == b ? T(0) : abs(a - b);
}
/// isfinite(x) without a branch or a call, so that loops over pairs vectorise: x - x is 0 for a
/// finite x and NaN for an infinite or NaN one.
template <class T>
SPIRA_HD constexpr bool finite(T x)
{
  return x - x == T(0);
}
/// d = 1 - s clamped to [0, 2].
template <class T>
SPIRA_HD constexpr T one_minus_clamped(T s)
{
  const T d = T(1) - s;
  return d < T(0) ? T(0) : (d > T(2) ? T(2) : d);
}

/// Distances in [0, 2] (cosine, correlation) below this are near duplicates whose value the
/// rounding of the accumulated dot product could decide: 2^-19 of the bound's cancel threshold
/// (2^-10 for float sums, 2^-39 for double), far above the rounding of either.
SPIRA_HD constexpr double near_zero(accumulator_bounds b)
{
  return b.cancel * 0x1p-19;
}

/// dot / sqrt(p) <= limit (p > 0, 0 < limit <= 1) without the square root: the test of cosine and
/// correlation that the distance 1 - dot / sqrt(p) is not near 0.
template <class T>
SPIRA_HD constexpr bool similarity_below(T dot, T p, T limit)
{
  return (dot <= T(0)) | (dot * dot <= limit * limit * p);
}

/// An expansion n_x + n_y - 2 dot (n the norms of the rows) that the guard trusts: finite parts,
/// norms large enough that no square underflowed, and a result that is not a cancellation.
template <class T>
SPIRA_HD constexpr bool expansion_trusted(T dot, T nx, T ny, accumulator_bounds b)
{
  const T s = nx + ny;
  return finite(s) & finite(dot) & (s >= T(b.tiny)) & (s - T(2) * dot >= T(b.cancel) * s);
}

/// (scale m, Σ (|a - b| / m)^p) over the union of two rows, p = 2 or any p >= 1: the overflow-safe
/// form of Σ |a - b|^p, with m = max |a - b| (0 when the rows are equal; inf or NaN when a
/// difference is). Returns the p-th root of the sum times m.
template <class T, class ValueT, class IndexT>
SPIRA_HD inline T scaled_p_norm_of_difference(sparse_row<ValueT, IndexT> x,
                                              sparse_row<ValueT, IndexT> y, double p)
{
  using std::pow;
  using std::sqrt;
  T m = T(0);
  bool nan = false;
  spira::detail::for_each_union(x, y, [&](ValueT a, ValueT b) {
    const T v = abs_diff(T(a), T(b));
    nan = nan || v != v;
    m = v > m ? v : m;
  });
  if (nan) {
    return spira::detail::infinity<T>() - spira::detail::infinity<T>();
  }
  if (m == T(0) || !finite(m)) {
    return m;
  }
  T s = T(0);
  spira::detail::for_each_union(x, y, [&](ValueT a, ValueT b) {
    const T v = abs_diff(T(a), T(b)) / m;
    s += p == 1.0 ? v : (p == 2.0 ? v * v : pow(v, T(p)));
  });
  return m * (p == 1.0 ? s : (p == 2.0 ? sqrt(s) : pow(s, T(1.0 / p))));
}

/// Σ (a - b)^2 over the union (equal values contribute 0).
template <class T, class ValueT, class IndexT>
SPIRA_HD inline T squared_difference(sparse_row<ValueT, IndexT> x, sparse_row<ValueT, IndexT> y)
{
  T s = T(0);
  spira::detail::for_each_union(x, y, [&](ValueT a, ValueT b) {
    const T v = abs_diff(T(a), T(b));
    s += v * v;
  });
  return s;
}

/// Statistics of a row scaled by its largest |value| (spira::detail::power_scale): the scale, Σ x,
/// Σ x², and whether the row is constant over all dim columns (every stored value equal, and
/// equal to 0 unless every column is stored).
template <class T>
struct scaled_row_stats {
  T scale = T(0);
  T sum = T(0);
  T sum_sq = T(0);
  bool constant = true;
};
template <class T, class ValueT, class IndexT>
SPIRA_HD inline scaled_row_stats<T> row_stats(sparse_row<ValueT, IndexT> x, std::int64_t dim)
{
  scaled_row_stats<T> r;
  r.scale = spira::detail::max_abs<T>(x);
  const spira::detail::power_scale<T> ps(r.scale);
  for (std::int64_t k = 0; k < x.size; ++k) {
    const T v = ps(T(x.values[k]));
    r.sum += v;
    r.sum_sq += v * v;
    if (!(T(x.values[k]) == T(x.values[0]))) {
      r.constant = false;
    }
  }
  if (x.size > 0 && x.size < dim && !(T(x.values[0]) == T(0))) {
    r.constant = false;
  }
  return r;
}
/// The mass of a non-negative row for jensenshannon's normalisation: the sum of its entries, or,
/// when it has infinite entries, minus their number (a value < 0 says "count of infinities").
struct mass_map {
  template <class T>
  SPIRA_HD T operator()(T x) const
  {
    return finite(x) || x != x ? x : T(-1);
  }
};
/// Sums of masses: counts of infinities (negative) win over finite sums. Associative,
/// commutative, identity 0.
struct mass_monoid {
  static constexpr monoid_kind kind = monoid_kind::custom;
  template <class T>
  SPIRA_HD static constexpr T identity()
  {
    return T(0);
  }
  template <class T>
  SPIRA_HD constexpr T operator()(T x, T y) const
  {
    if (x < T(0) || y < T(0)) {
      return (x < T(0) ? x : T(0)) + (y < T(0) ? y : T(0));
    }
    return x + y;
  }
};
}  // namespace spira::distances::detail
