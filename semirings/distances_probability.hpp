// spira: the distances of the catalogue between non-negative rows read as distributions
// (jensenshannon, hellinger, kl_divergence). Notation: semirings/distances.hpp.
#pragma once

#include <spira/accuracy.hpp>
#include <spira/semiring.hpp>
#include "distance_norms.hpp"
#include "distance_numerics.hpp"

#include <cmath>
#include <cstdint>

namespace spira::distances {

/// scipy's jensenshannon (natural log): rows are divided by their sums (prepare), m = (p + q) / 2,
/// d = sqrt(JS / 2) with JS = Σ p log(p/m) + q log(q/m) and 0 log 0 = 0. NAMM over the union.
/// Requires non-negative values. All-zero rows: 0 between two of them; sqrt(log 2), the distance of
/// distributions with disjoint supports, between an all-zero and a nonzero row (scipy: inf / nan).
struct jensenshannon {
  using add_monoid = plus_monoid;
  static constexpr bool zero_self_distance = true;  // d(x, x) = 0 for finite x
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
  static constexpr bool zero_self_distance = true;  // d(x, x) = 0 for finite x
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
  template <class T, class ValueT, class IndexT>
  SPIRA_HD T exact(sparse_row<ValueT, IndexT> x, sparse_row<ValueT, IndexT> y, const terms<T, 1>&,
                   const terms<T, 1>&, std::int64_t) const
  {
    using std::sqrt;
    auto difference = [](T a, T b) {
      const T ra = sqrt(a), rb = sqrt(b);
      return a == b ? T(0) : (detail::finite(ra + rb) ? (a - b) / (ra + rb) : ra - rb);
    };
    T m = T(0);  // the largest |difference|: the sum of squares is scaled by it
    spira::detail::for_each_union(x, y, [&](ValueT a, ValueT b) {
      const T v = detail::abs(difference(T(a), T(b)));
      m = (v > m || v != v) ? v : m;
    });
    if (m == T(0) || !detail::finite(m)) {
      return m;
    }
    T s = T(0);
    spira::detail::for_each_union(x, y, [&](ValueT a, ValueT b) {
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
