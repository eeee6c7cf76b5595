// spira: the distance catalogue as semiring values (host and device).
//
// Each struct is a distance in the sense of spira/semiring.hpp: an add monoid, a multiply (the
// first argument from a row of A, the second from a row of B), an annihilating flag, optional row
// norms and a finalize. They compute in the engine's arithmetic type T (the host engine uses
// double). The formulas, their scipy.spatial.distance correspondence and every edge case are in
// docs/metrics.md; the comments below give the decomposition each struct relies on.
//
// Notation: x = row i of A, y = row j of B, k = dim (number of columns), nnz(x) = number of
// nonzero values (explicitly stored zeros do not count), [P] = 1 if P else 0.
#pragma once

#include <spira/accuracy.hpp>
#include <spira/distance.hpp>
#include <spira/error.hpp>
#include <spira/semiring.hpp>
#include "distance_numerics.hpp"

#include <cmath>
#include <cstdint>

namespace spira::distances {

using sum_of_squares = norm<square_map, plus_monoid>;
using row_sum = norm<identity_map, plus_monoid>;
using nonzero_count = norm<nonzero_map, plus_monoid>;

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
  template <class T, class V, class I, class Norms>
  SPIRA_HD T exact(sparse_row<V, I> x, sparse_row<V, I> y, const Norms&, const Norms&,
                   std::int64_t) const
  {
    using std::ldexp;
    const T mx = spira::detail::max_abs<T>(x);
    const T my = spira::detail::max_abs<T>(y);
    if (!detail::finite(mx) || !detail::finite(my)) {
      // Infinite entries: the infinite products decide (finite ones, even if they overflow, do
      // not count against them); NaN for ∞ · 0 and for infinite products of both signs.
      T inf_sum = T(0);
      spira::detail::for_each_union(x, y, [&](V a, V b) {
        if (!detail::finite(T(a)) || !detail::finite(T(b))) {
          inf_sum += T(a) * T(b);
        }
      });
      return inf_sum;
    }
    const spira::detail::power_scale<T> sx(mx), sy(my);
    T dot = T(0);
    spira::detail::for_each_union(x, y, [&](V a, V b) { dot += sx(T(a)) * sy(T(b)); });
    return ldexp(dot, sx.exponent() + sy.exponent());
  }
};

/// Σ (x - y)^2 = |x|^2 + |y|^2 - 2<x, y>, clamped at 0 (expansion; intersection). Pairs where
/// the expansion cancels (see spira/accuracy.hpp) are summed directly over the union.
struct sqeuclidean {
  using add_monoid = plus_monoid;
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
  template <class T, class V, class I>
  SPIRA_HD T exact(sparse_row<V, I> x, sparse_row<V, I> y, const terms<T, 1>&, const terms<T, 1>&,
                   std::int64_t) const
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
  template <class T, class V, class I>
  SPIRA_HD T exact(sparse_row<V, I> x, sparse_row<V, I> y, const terms<T, 1>&, const terms<T, 1>&,
                   std::int64_t) const
  {
    return detail::scaled_p_norm_of_difference<T>(x, y, 2.0);
  }
};

/// 1 - <x, y> / (|x| |y|), clamped to [0, 2]. All-zero rows: 0 between two of them, 1 between an
/// all-zero and a nonzero row (scipy returns nan).
struct cosine {
  using add_monoid = plus_monoid;
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
    if (nx[0] == T(0) || ny[0] == T(0)) {
      return nx[0] == ny[0] ? T(0) : T(1);
    }
    // sqrt(|x|^2 |y|^2) rather than |x| |y|: exact for x == y, so d(x, x) == 0.
    return detail::one_minus_clamped(dot / sqrt(nx[0] * ny[0]));
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
    return detail::finite(dot) && detail::finite(norms) && nx[0] >= T(b.tiny) &&
           ny[0] >= T(b.tiny) && norms >= T(b.tiny) &&
           detail::similarity_below(dot, norms, T(1) - T(detail::near_zero(b)));
  }
  /// Each row scaled by its largest |value| (cosine is scale-invariant; rows with infinite values
  /// point along their infinite coordinates).
  template <class T, class V, class I>
  SPIRA_HD T exact(sparse_row<V, I> x, sparse_row<V, I> y, const terms<T, 1>&, const terms<T, 1>&,
                   std::int64_t) const
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
    spira::detail::for_each_union(x, y, [&](V a, V b) {
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
  template <class T, class V, class I>
  SPIRA_HD T exact(sparse_row<V, I> x, sparse_row<V, I> y, const terms<T, 2>&, const terms<T, 2>&,
                   std::int64_t dim) const
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
    spira::detail::for_each_union(x, y, [&](V a, V b) {
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

/// Boolean Dice on "nonzero = true": (ntf + nft) / (2 ntt + ntf + nft)
///   = (nnz(x) + nnz(y) - 2 ntt) / (nnz(x) + nnz(y)); 0 for two all-zero rows (scipy: nan).
struct dice {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = true;
  using norms = norm_list<nonzero_count>;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return detail::nonzero(a) * detail::nonzero(b);
  }
  template <class T>
  SPIRA_HD T finalize(T ntt, const terms<T, 1>& nx, const terms<T, 1>& ny, std::int64_t) const
  {
    const T n = nx[0] + ny[0];
    return n == T(0) ? T(0) : (n - T(2) * ntt) / n;
  }
};

/// Boolean Russell-Rao on "nonzero = true": (k - ntt) / k; 0 when k == 0.
struct russellrao {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = true;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return detail::nonzero(a) * detail::nonzero(b);
  }
  template <class T>
  SPIRA_HD T finalize(T ntt, const terms<T, 0>&, const terms<T, 0>&, std::int64_t dim) const
  {
    return dim == 0 ? T(0) : (T(dim) - ntt) / T(dim);
  }
};

/// Boolean Jaccard on "nonzero = true" (scipy's `jaccard`, which treats its input as booleans):
/// (ntf + nft) / (ntt + ntf + nft) = (U - I) / U with I = #{x≠0, y≠0} and U = nnz(x) + nnz(y) - I;
/// 0 when U == 0 (two all-zero rows, as scipy).
struct jaccard {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = true;
  using norms = norm_list<nonzero_count>;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return detail::nonzero(a) * detail::nonzero(b);
  }
  template <class T>
  SPIRA_HD T finalize(T both, const terms<T, 1>& nx, const terms<T, 1>& ny, std::int64_t) const
  {
    const T u = nx[0] + ny[0] - both;
    return u == T(0) ? T(0) : (u - both) / u;
  }
};

/// scipy's hamming: the fraction of all k coordinates where x != y. NAMM ⊗ = [a != b] over the
/// union (coordinates zero in both agree); 0 when k == 0.
struct hamming {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return a != b ? T(1) : T(0);
  }
  template <class T>
  SPIRA_HD T finalize(T acc, const terms<T, 0>&, const terms<T, 0>&, std::int64_t dim) const
  {
    return dim == 0 ? T(0) : acc / T(dim);
  }
};

/// Σ |x - y|. NAMM ⊗ = |a - b| over the union (Appendix A.1 of the seed paper); equal values
/// (infinite ones too) contribute 0.
struct manhattan {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return detail::abs_diff(a, b);
  }
};

/// (Σ |x - y|^p)^(1/p), p >= 1 (the public entry validates p). NAMM ⊗ = |a - b|^p.
struct minkowski {
  double p = 2.0;
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    using std::pow;
    const T d = detail::abs_diff(a, b);
    return p == 1.0 ? d : (p == 2.0 ? d * d : pow(d, T(p)));
  }
  template <class T>
  SPIRA_HD T finalize(T acc, const terms<T, 0>&, const terms<T, 0>&, std::int64_t) const
  {
    using std::pow;
    using std::sqrt;
    const T s = detail::clamp_nonnegative(acc);
    return p == 1.0 ? s : (p == 2.0 ? sqrt(s) : pow(s, T(1.0 / p)));
  }
  /// The direct form scaled by the largest |x - y|: |x - y|^p may overflow (p = 1000) where the
  /// distance does not.
  template <class T, class V, class I>
  SPIRA_HD T exact(sparse_row<V, I> x, sparse_row<V, I> y, const terms<T, 0>&, const terms<T, 0>&,
                   std::int64_t) const
  {
    return detail::scaled_p_norm_of_difference<T>(x, y, p);
  }
};

/// max |x - y|. NAMM ⊗ = |a - b| with ⊕ = max over the union. ⊗(0, 0) = 0 is not the identity
/// -inf of max, so finalize folds the coordinates missing from both rows back in: max(acc, 0).
struct chebyshev {
  using add_monoid = max_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return detail::abs_diff(a, b);
  }
  template <class T>
  SPIRA_HD T finalize(T acc, const terms<T, 0>&, const terms<T, 0>&, std::int64_t) const
  {
    return detail::clamp_nonnegative(acc);
  }
};

/// Σ |x - y| / (|x| + |y|), terms with x == y count 0 (x == y == 0 as scipy). NAMM ⊗ over the
/// union. A term whose parts overflow is taken on the halved values; a finite value against an
/// infinite one counts 1 (the limit).
struct canberra {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    if (a == b) {
      return T(0);
    }
    const T den = detail::abs(a) + detail::abs(b);
    if (detail::finite(den)) {
      return detail::abs(a - b) / den;
    }
    if (!detail::finite(a) || !detail::finite(b)) {
      return (a != a || b != b) ? a + b : T(1);
    }
    const T ha = a / T(2), hb = b / T(2);
    return detail::abs(ha - hb) / (detail::abs(ha) + detail::abs(hb));
  }
};

/// Σ |x - y| / Σ |x + y|. Two NAMM sums over the union. 0/0 (both rows all-zero) gives 0 (scipy:
/// nan); n/0 with n > 0 (only possible with mixed signs, e.g. y = -x) gives +inf (as scipy).
struct braycurtis {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD constexpr terms<T, 2> multiply(T a, T b) const
  {
    return {{detail::abs_diff(a, b), detail::abs(a + b)}};
  }
  template <class T>
  SPIRA_HD T finalize(const terms<T, 2>& acc, const terms<T, 0>&, const terms<T, 0>&,
                      std::int64_t) const
  {
    const T num = detail::clamp_nonnegative(acc[0]);
    const T den = detail::clamp_nonnegative(acc[1]);
    if (den == T(0)) {
      return num == T(0) ? T(0) : spira::detail::infinity<T>();
    }
    return num / den;
  }
  /// Both sums over the union on the rows scaled by one power of two at or above their largest
  /// |value| (the ratio is scale-invariant), so neither sum overflows.
  template <class T, class V, class I>
  SPIRA_HD T exact(sparse_row<V, I> x, sparse_row<V, I> y, const terms<T, 0>& nx,
                   const terms<T, 0>& ny, std::int64_t dim) const
  {
    const T mx = spira::detail::max_abs<T>(x);
    const T my = spira::detail::max_abs<T>(y);
    const T m = mx > my ? mx : my;
    if (mx != mx || my != my) {
      return mx != mx ? mx : my;
    }
    terms<T, 2> acc{{T(0), T(0)}};
    const spira::detail::power_scale<T> ps(m);
    spira::detail::for_each_union(x, y, [&](V a, V b) {
      const auto t = multiply(ps(T(a)), ps(T(b)));
      acc[0] += t[0];
      acc[1] += t[1];
    });
    return finalize(acc, nx, ny, dim);
  }
};

/// scipy's jensenshannon (natural log): rows are divided by their sums (prepare), m = (p + q) / 2,
/// d = sqrt(JS / 2) with JS = Σ p log(p/m) + q log(q/m) and 0 log 0 = 0. NAMM over the union.
/// Requires non-negative values. All-zero rows: 0 between two of them; sqrt(log 2), the distance of
/// distributions with disjoint supports, between an all-zero and a nonzero row (scipy: inf / nan).
struct jensenshannon {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = false;
  using norms = norm_list<row_sum>;
  using prepare_norm = norm<detail::mass_map, detail::mass_monoid>;
  /// x / mass: the row normalised to sum 1. A row with infinite entries is their limit: each
  /// infinite entry 1 / (their number), the finite ones 0. (A row of finite values whose sum
  /// overflows double is normalised as if its finite entries were 0: documented.)
  template <class T>
  SPIRA_HD T prepare(T x, T mass) const
  {
    if (mass < T(0)) {
      return detail::finite(x) ? T(0) : T(1) / -mass;
    }
    if (!detail::finite(mass) && mass == mass) {
      return T(0);
    }
    return mass > T(0) ? x / mass : T(0);
  }
  template <class T>
  SPIRA_HD T multiply(T p, T q) const
  {
    using std::log;
    // p log(p / m) with p / m = 2p / (p + q): no m = (p + q) / 2 that underflows to 0.
    const T pq = p + q;
    T r = T(0);
    if (p > T(0)) {
      r += p * log((p + p) / pq);
    }
    if (q > T(0)) {
      r += q * log((q + q) / pq);
    }
    return r;
  }
  template <class T>
  SPIRA_HD T finalize(T acc, const terms<T, 1>& nx, const terms<T, 1>& ny, std::int64_t) const
  {
    using std::sqrt;
    if (nx[0] == T(0) || ny[0] == T(0)) {
      return nx[0] == ny[0] ? T(0) : sqrt(T(0.69314718055994530942));
    }
    return sqrt(detail::clamp_nonnegative(acc) / T(2));
  }
};

/// Hellinger on raw (non-negative) values: (1/sqrt 2) |sqrt(x) - sqrt(y)|_2
///   = sqrt((Σx + Σy - 2 Σ sqrt(x y)) / 2), which is sqrt(1 - Σ sqrt(x y)) when rows sum to 1.
/// Expansion over the intersection; requires non-negative values.
struct hellinger {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = true;
  using norms = norm_list<row_sum>;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    using std::sqrt;
    return sqrt(a) * sqrt(b);  // not sqrt(a * b), which underflows for tiny values
  }
  template <class T>
  SPIRA_HD T finalize(T acc, const terms<T, 1>& nx, const terms<T, 1>& ny, std::int64_t) const
  {
    using std::sqrt;
    return sqrt(detail::clamp_nonnegative((nx[0] + ny[0]) - T(2) * acc) / T(2));
  }
  template <class T>
  SPIRA_HD bool trusted(T acc, const terms<T, 1>& nx, const terms<T, 1>& ny, std::int64_t,
                        accumulator_bounds b) const
  {
    return detail::expansion_trusted(acc, nx[0], ny[0], b);
  }
  /// sqrt(Σ (sqrt(x) - sqrt(y))^2 / 2) over the union, each difference as (x - y) / (sqrt(x) +
  /// sqrt(y)) (no cancellation between close values).
  template <class T, class V, class I>
  SPIRA_HD T exact(sparse_row<V, I> x, sparse_row<V, I> y, const terms<T, 1>&, const terms<T, 1>&,
                   std::int64_t) const
  {
    using std::sqrt;
    auto difference = [](T a, T b) {
      const T ra = sqrt(a), rb = sqrt(b);
      return a == b ? T(0) : (detail::finite(ra + rb) ? (a - b) / (ra + rb) : ra - rb);
    };
    T m = T(0);  // the largest |difference|: the sum of squares is scaled by it
    spira::detail::for_each_union(x, y, [&](V a, V b) {
      const T v = detail::abs(difference(T(a), T(b)));
      m = (v > m || v != v) ? v : m;
    });
    if (m == T(0) || !detail::finite(m)) {
      return m;
    }
    T s = T(0);
    spira::detail::for_each_union(x, y, [&](V a, V b) {
      const T v = difference(T(a), T(b)) / m;
      s += v * v;
    });
    return m * sqrt(s / T(2));
  }
};

/// Kullback-Leibler divergence of raw (non-negative) values over the union:
///   Σ_c x_c log(x_c / max(y_c, epsilon)),  terms with x_c == 0 count 0 (0 log 0 = 0),
/// so a column where x > 0 and y == 0 contributes x log(x / epsilon) instead of +inf.
/// Not symmetric: x is the row of A. NAMM ⊗ over the union.
struct kl_divergence {
  /// Floor for the denominator; documented in docs/metrics.md.
  static constexpr double epsilon = 1e-10;
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD T multiply(T x, T y) const
  {
    using std::log;
    if (!(x > T(0))) {
      return x == x ? T(0) : x;
    }
    if (y != y) {
      return y;
    }
    const T q = y > T(epsilon) ? y : T(epsilon);
    if (x == q) {
      return T(0);
    }
    using std::log1p;
    // log(x / q): log1p of the exact difference for close values, log x - log q where the ratio
    // overflows or leaves the normal range.
    const T r = x / q;
    if (r > T(0.5) && r < T(2)) {
      return x * log1p((x - q) / q);
    }
    const T smallest_normal = T(sizeof(T) == sizeof(float) ? 0x1p-126 : 0x1p-1022);
    return x * (detail::finite(r) && r >= smallest_normal ? log(r) : log(x) - log(q));
  }
};

}  // namespace spira::distances

namespace spira {

/// Calls f with the distance struct of a catalogue metric (minkowski with exponent p) and returns
/// its result: the one place where a runtime `metric` becomes a compile-time semiring.
template <class F>
decltype(auto) visit_metric(metric m, double p, F&& f)
{
  namespace d = spira::distances;
  switch (m) {
    case metric::cosine:
      return f(d::cosine{});
    case metric::euclidean:
      return f(d::euclidean{});
    case metric::sqeuclidean:
      return f(d::sqeuclidean{});
    case metric::manhattan:
      return f(d::manhattan{});
    case metric::chebyshev:
      return f(d::chebyshev{});
    case metric::minkowski:
      return f(d::minkowski{p});
    case metric::canberra:
      return f(d::canberra{});
    case metric::braycurtis:
      return f(d::braycurtis{});
    case metric::hamming:
      return f(d::hamming{});
    case metric::jaccard:
      return f(d::jaccard{});
    case metric::dice:
      return f(d::dice{});
    case metric::russellrao:
      return f(d::russellrao{});
    case metric::correlation:
      return f(d::correlation{});
    case metric::jensenshannon:
      return f(d::jensenshannon{});
    case metric::hellinger:
      return f(d::hellinger{});
    case metric::kl_divergence:
      return f(d::kl_divergence{});
    case metric::inner_product:
      return f(d::inner_product{});
  }
  throw invalid_argument(detail::concat("unknown metric value ", static_cast<int>(m)));
}

}  // namespace spira
