// spira: the distances of the catalogue that sum or select a term of each coordinate's pair of
// values over the union of the two rows (NAMMs: hamming, manhattan, minkowski, chebyshev,
// canberra, braycurtis). Notation: semirings/distances.hpp.
#pragma once

#include <spira/accuracy.hpp>
#include <spira/semiring.hpp>
#include "distance_norms.hpp"
#include "distance_numerics.hpp"

#include <cmath>
#include <cstdint>

namespace spira::distances {

/// scipy's hamming: the fraction of all k coordinates where x != y. NAMM ⊗ = [a != b] over the
/// union (coordinates zero in both agree); 0 when k == 0.
struct hamming {
  using add_monoid = plus_monoid;
  static constexpr bool zero_self_distance = true;  // d(x, x) = 0 for finite x
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
  static constexpr bool zero_self_distance = true;  // d(x, x) = 0 for finite x
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
  static constexpr bool zero_self_distance = true;  // d(x, x) = 0 for finite x
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
  template <class T, class ValueT, class IndexT>
  SPIRA_HD T exact(sparse_row<ValueT, IndexT> x, sparse_row<ValueT, IndexT> y, const terms<T, 0>&,
                   const terms<T, 0>&, std::int64_t) const
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
  static constexpr bool zero_self_distance = true;  // d(x, x) = 0 for finite x
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
  static constexpr bool zero_self_distance = true;  // d(x, x) = 0 for finite x
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
  template <class T, class ValueT, class IndexT>
  SPIRA_HD T exact(sparse_row<ValueT, IndexT> x, sparse_row<ValueT, IndexT> y,
                   const terms<T, 0>& nx, const terms<T, 0>& ny, std::int64_t dim) const
  {
    const T mx = spira::detail::max_abs<T>(x);
    const T my = spira::detail::max_abs<T>(y);
    const T m = mx > my ? mx : my;
    if (mx != mx || my != my) {
      return mx != mx ? mx : my;
    }
    terms<T, 2> acc{{T(0), T(0)}};
    const spira::detail::power_scale<T> ps(m);
    spira::detail::for_each_union(x, y, [&](ValueT a, ValueT b) {
      const auto t = multiply(ps(T(a)), ps(T(b)));
      acc[0] += t[0];
      acc[1] += t[1];
    });
    return finalize(acc, nx, ny, dim);
  }
};

}  // namespace spira::distances
