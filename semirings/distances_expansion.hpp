// spira: the distances of the catalogue computed from a dot product over the intersection and row
// norms (inner_product, sqeuclidean, euclidean, cosine, correlation), with their direct forms for
// the pairs the accuracy guard does not trust. Notation: semirings/distances.hpp.
#pragma once

#include <spira/accuracy.hpp>
#include <spira/semiring.hpp>
#include "distance_norms.hpp"
#include "distance_numerics.hpp"

#include <cmath>
#include <cstdint>

namespace spira::distances {

/// <x, y> (a similarity: larger is closer). Intersection; no norms. A dot product that
/// overflowed is summed again on rows scaled by powers of two (so +inf and -inf products of
/// finite rows cannot meet).
struct inner_product {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = true;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return a * b;
  }
  // The (empty) norms are taken as any type: nothing is deduced from terms<T, 0>.
  template <class T, class Norms>
  SPIRA_HD bool trusted(T dot, const Norms&, const Norms&, std::int64_t, accumulator_bounds) const
  {
    return detail::finite(dot);
  }
  /// Rows without a shared column: a dot product of 0, which the guard trusts.
  static constexpr double disjoint_distance = 0.0;
  template <class T, class Norms>
  SPIRA_HD bool disjoint_query(const Norms&, accumulator_bounds) const
  {
    return true;
  }
  template <class T, class ValueT, class IndexT, class Norms>
  SPIRA_HD bool disjoint_index(sparse_row<ValueT, IndexT>, const Norms&, accumulator_bounds) const
  {
    return true;
  }
  template <class T, class ValueT, class IndexT, class Norms>
  SPIRA_HD T exact(sparse_row<ValueT, IndexT> x, sparse_row<ValueT, IndexT> y, const Norms&,
                   const Norms&, std::int64_t) const
  {
    using std::ldexp;
    const T mx = spira::detail::max_abs<T>(x);
    const T my = spira::detail::max_abs<T>(y);
    if (!detail::finite(mx) || !detail::finite(my)) {
      // Infinite entries: the infinite products decide (finite ones, even if they overflow, do
      // not count against them); NaN for ∞ · 0 and for infinite products of both signs.
      T inf_sum = T(0);
      spira::detail::for_each_union(x, y, [&](ValueT a, ValueT b) {
        if (!detail::finite(T(a)) || !detail::finite(T(b))) {
          inf_sum += T(a) * T(b);
        }
      });
      return inf_sum;
    }
    const spira::detail::power_scale<T> sx(mx), sy(my);
    T dot = T(0);
    spira::detail::for_each_union(x, y, [&](ValueT a, ValueT b) { dot += sx(T(a)) * sy(T(b)); });
    return ldexp(dot, sx.exponent() + sy.exponent());
  }
};

/// Σ (x - y)^2 = |x|^2 + |y|^2 - 2<x, y>, clamped at 0 (expansion; intersection). Pairs where
/// the expansion cancels (see spira/accuracy.hpp) are summed directly over the union.
struct sqeuclidean {
  using add_monoid = plus_monoid;
  static constexpr bool zero_self_distance = true;  // d(x, x) = 0 for finite x
  static constexpr bool annihilating = true;
  using norms = norm_list<sum_of_squares>;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return a * b;
  }
  template <class T>
  SPIRA_HD T finalize(T dot, const terms<T, 1>& nx, const terms<T, 1>& ny, std::int64_t) const
  {
    return detail::clamp_nonnegative((nx[0] + ny[0]) - T(2) * dot);
  }
  template <class T>
  SPIRA_HD bool trusted(T dot, const terms<T, 1>& nx, const terms<T, 1>& ny, std::int64_t,
                        accumulator_bounds b) const
  {
    return detail::expansion_trusted(dot, nx[0], ny[0], b);
  }
  template <class T, class ValueT, class IndexT>
  SPIRA_HD T exact(sparse_row<ValueT, IndexT> x, sparse_row<ValueT, IndexT> y, const terms<T, 1>&,
                   const terms<T, 1>&, std::int64_t) const
  {
    return detail::squared_difference<T>(x, y);
  }
};

/// sqrt(sqeuclidean); the direct form is scaled, so it overflows only where the distance does.
struct euclidean : sqeuclidean {
  template <class T>
  SPIRA_HD T finalize(T dot, const terms<T, 1>& nx, const terms<T, 1>& ny, std::int64_t k) const
  {
    using std::sqrt;
    return sqrt(sqeuclidean::finalize(dot, nx, ny, k));
  }
  template <class T, class ValueT, class IndexT>
  SPIRA_HD T exact(sparse_row<ValueT, IndexT> x, sparse_row<ValueT, IndexT> y, const terms<T, 1>&,
                   const terms<T, 1>&, std::int64_t) const
  {
    return detail::scaled_p_norm_of_difference<T>(x, y, 2.0);
  }
};

/// 1 - <x, y> / (|x| |y|), clamped to [0, 2]. All-zero rows: 0 between two of them, 1 between an
/// all-zero and a nonzero row (scipy returns nan).
struct cosine {
  using add_monoid = plus_monoid;
  static constexpr bool zero_self_distance = true;  // d(x, x) = 0 for finite x
  static constexpr bool annihilating = true;
  using norms = norm_list<sum_of_squares>;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return a * b;
  }
  template <class T>
  SPIRA_HD T finalize(T dot, const terms<T, 1>& nx, const terms<T, 1>& ny, std::int64_t) const
  {
    using std::sqrt;
    const T norms = nx[0] * ny[0];
#if defined(__CUDA_ARCH__)
    // A pair without a shared column (most pairs of sparse data) skips the root and the division.
    if ((dot == T(0)) & detail::finite(norms) & (nx[0] != T(0)) & (ny[0] != T(0))) {
      return T(1);
    }
#endif
    // Every case computed and one chosen (no branch: the host's loop over pairs vectorises).
    // sqrt(|x|^2 |y|^2) rather than |x| |y|: exact for x == y, so d(x, x) == 0.
    const T general = detail::one_minus_clamped(dot / sqrt(norms));
    // No shared column (most pairs of sparse data): 1.
    const T apart = (dot == T(0)) & detail::finite(norms) ? T(1) : general;
    const T zero_row = nx[0] == ny[0] ? T(0) : T(1);
    return (nx[0] == T(0)) | (ny[0] == T(0)) ? zero_row : apart;
  }
  /// Trusted unless a part overflowed, the norms are so small that products underflowed (an
  /// all-zero row included: the direct form decides those pairs), or the distance is so close to
  /// 0 that the rounding of the dot product could decide it (near duplicates: the direct form
  /// gives d(x, x) = 0 exactly).
  template <class T>
  SPIRA_HD bool trusted(T dot, const terms<T, 1>& nx, const terms<T, 1>& ny, std::int64_t,
                        accumulator_bounds b) const
  {
    const T norms = nx[0] * ny[0];
    return detail::finite(dot) & detail::finite(norms) & (nx[0] >= T(b.tiny)) &
           (ny[0] >= T(b.tiny)) & (norms >= T(b.tiny)) &
           detail::similarity_below(dot, norms, T(1) - T(detail::near_zero(b)));
  }
  /// Rows without a shared column are at distance 1 (spira/accuracy.hpp) when |x|^4 is finite
  /// and at least b.tiny and |y|^4 too, or y stores no nonzero value: then |x|^2 |y|^2 is finite
  /// and at least b.tiny, so the guard trusts a dot product of 0 and finalize gives 1; an all-zero
  /// y is left to the direct form, which gives 1 against a nonzero x. (|y| = 0 alone is not
  /// enough: the squares of tiny double values vanish, and so may their products with x.)
  static constexpr double disjoint_distance = 1.0;
  /// ... and an all-zero row is at 0 from another all-zero row, at 1 from any other (the direct
  /// form's values, spira/accuracy.hpp).
  static constexpr double zero_rows_distance = 0.0;
  template <class T>
  SPIRA_HD bool disjoint_query(const terms<T, 1>& n, accumulator_bounds b) const
  {
    const T q = n[0] * n[0];
    return (n[0] > T(0)) & detail::finite(q) & (q >= T(b.tiny));
  }
  template <class T, class ValueT, class IndexT>
  SPIRA_HD bool disjoint_index(sparse_row<ValueT, IndexT> y, const terms<T, 1>& n,
                               accumulator_bounds b) const
  {
    const T q = n[0] * n[0];
    return (detail::finite(q) & (q >= T(b.tiny))) ||
           (n[0] == T(0) && spira::detail::max_abs<T>(y) == T(0));
  }
  /// Each row scaled by its largest |value| (cosine is scale-invariant; rows with infinite values
  /// point along their infinite coordinates).
  template <class T, class ValueT, class IndexT>
  SPIRA_HD T exact(sparse_row<ValueT, IndexT> x, sparse_row<ValueT, IndexT> y, const terms<T, 1>&,
                   const terms<T, 1>&, std::int64_t) const
  {
    using std::sqrt;
    const T mx = spira::detail::max_abs<T>(x);
    const T my = spira::detail::max_abs<T>(y);
    if (mx != mx || my != my) {
      return mx != mx ? mx : my;
    }
    if (mx == T(0) || my == T(0)) {
      return mx == my ? T(0) : T(1);
    }
    const spira::detail::power_scale<T> px(mx), py(my);
    T dot = T(0), sx = T(0), sy = T(0);
    spira::detail::for_each_union(x, y, [&](ValueT a, ValueT b) {
      const T u = px(T(a));
      const T v = py(T(b));
      dot += u * v;
      sx += u * u;
      sy += v * v;
    });
    return detail::one_minus_clamped(dot / sqrt(sx * sy));
  }
};

/// 1 - <x - mean(x), y - mean(y)> / (|x - mean(x)| |y - mean(y)|), expanded over all k columns:
///   cov = <x,y> - Σx Σy / k,   var(x) = Σx² - (Σx)² / k.
/// Constant rows (zero variance, including all-zero rows): 0 between two of them, 1 between a
/// constant and a non-constant row (scipy returns nan). Clamped to [0, 2].
struct correlation {
  using add_monoid = plus_monoid;
  static constexpr bool zero_self_distance = true;  // d(x, x) = 0 for finite x
  static constexpr bool annihilating = true;
  using norms = norm_list<row_sum, sum_of_squares>;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return a * b;
  }
  /// The expanded form; only called on pairs the guard trusts (both variances well above the
  /// rounding of their expansion, so neither row is constant).
  template <class T>
  SPIRA_HD T finalize(T dot, const terms<T, 2>& nx, const terms<T, 2>& ny, std::int64_t dim) const
  {
    using std::sqrt;
    if (dim == 0) {
      return T(0);
    }
    const T k = T(dim);
    const T vx = nx[1] - nx[0] * nx[0] / k;
    const T vy = ny[1] - ny[0] * ny[0] / k;
    if (!(vx > T(0)) || !(vy > T(0))) {
      return vx == vy ? T(0) : T(1);
    }
    const T cov = dot - nx[0] * ny[0] / k;
    return detail::one_minus_clamped(cov / sqrt(vx * vy));
  }
  /// Trusted when both expanded variances and the covariance keep their digits: var(x) >=
  /// cancel Σx², and the rounding of the covariance (about Σ|x y| + |Σx Σy| / k) is below
  /// cancel sqrt(var(x) var(y)).
  template <class T>
  SPIRA_HD bool trusted(T dot, const terms<T, 2>& nx, const terms<T, 2>& ny, std::int64_t dim,
                        accumulator_bounds b) const
  {
    using std::sqrt;
    if (dim == 0) {
      return true;
    }
    const T k = T(dim);
    if (!(detail::finite(dot) && detail::finite(nx[0]) && detail::finite(nx[1]) &&
          detail::finite(ny[0]) && detail::finite(ny[1]) && nx[1] >= T(b.tiny) &&
          ny[1] >= T(b.tiny))) {
      return false;
    }
    const T c = T(b.cancel);
    const T vx = nx[1] - nx[0] * nx[0] / k;
    const T vy = ny[1] - ny[0] * ny[0] / k;
    if (!(vx >= c * nx[1] && vy >= c * ny[1] && detail::finite(vx * vy) && vx * vy >= T(b.tiny))) {
      return false;
    }
    const T scale = sqrt(nx[1]) * sqrt(ny[1]) + detail::abs(nx[0]) * detail::abs(ny[0]) / k;
    const T cov = dot - nx[0] * ny[0] / k;
    return c * scale <= sqrt(vx) * sqrt(vy) &&
           detail::similarity_below(cov, vx * vy, T(1) - T(detail::near_zero(b)));
  }
  /// Two passes on rows scaled by their largest |value| (correlation is scale-invariant): the
  /// means, then the centred sums over all dim columns; the constant-row test is exact.
  template <class T, class ValueT, class IndexT>
  SPIRA_HD T exact(sparse_row<ValueT, IndexT> x, sparse_row<ValueT, IndexT> y, const terms<T, 2>&,
                   const terms<T, 2>&, std::int64_t dim) const
  {
    using std::sqrt;
    if (dim == 0) {
      return T(0);
    }
    const auto sx = detail::row_stats<T>(x, dim);
    const auto sy = detail::row_stats<T>(y, dim);
    if (sx.scale != sx.scale || sy.scale != sy.scale) {
      return sx.scale != sx.scale ? sx.scale : sy.scale;
    }
    if (sx.constant || sy.constant) {
      return sx.constant == sy.constant ? T(0) : T(1);
    }
    // Corrected two-pass sums (Björck): the rounding error e of a mean shifts every centred
    // value by e, which su = Σ u (exactly 0 for an exact mean) measures and removes.
    const T k = T(dim);
    const T mx = sx.sum / k;
    const T my = sy.sum / k;
    T cov = T(0), vx = T(0), vy = T(0), su = T(0), sv = T(0);
    std::int64_t both_missing = dim;
    const spira::detail::power_scale<T> px(sx.scale), py(sy.scale);
    spira::detail::for_each_union(x, y, [&](ValueT a, ValueT b) {
      const T u = px(T(a)) - mx;
      const T v = py(T(b)) - my;
      cov += u * v;
      vx += u * u;
      vy += v * v;
      su += u;
      sv += v;
      --both_missing;
    });
    const T rest = T(both_missing);
    cov += rest * mx * my;
    vx += rest * mx * mx;
    vy += rest * my * my;
    su -= rest * mx;
    sv -= rest * my;
    cov -= su * sv / k;
    vx -= su * su / k;
    vy -= sv * sv / k;
    if (!(vx > T(0)) || !(vy > T(0))) {
      return vx == vy ? T(0) : T(1);
    }
    return detail::one_minus_clamped(cov / sqrt(vx * vy));
  }
};

}  // namespace spira::distances
