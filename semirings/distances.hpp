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

#include <spira/distance.hpp>
#include <spira/error.hpp>
#include <spira/semiring.hpp>

#include <cmath>
#include <cstdint>

namespace spira::distances {

namespace detail {
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
/// Relative threshold under which an expanded variance counts as zero (constant row): a small
/// multiple of the unit roundoff of T.
template <class T>
SPIRA_HD constexpr T variance_tolerance()
{
  if constexpr (sizeof(T) == sizeof(float)) {
    return T(64) * T(1.1920929e-7f);
  } else {
    return T(64) * T(2.220446049250313e-16);
  }
}
}  // namespace detail

using sum_of_squares = norm<square_map, plus_monoid>;
using row_sum = norm<identity_map, plus_monoid>;
using nonzero_count = norm<nonzero_map, plus_monoid>;

/// <x, y> (a similarity: larger is closer). Intersection; no norms.
struct inner_product {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = true;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return a * b;
  }
};

/// Σ (x - y)^2 = |x|^2 + |y|^2 - 2<x, y>, clamped at 0 (expansion; intersection).
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
};

/// sqrt(sqeuclidean).
struct euclidean : sqeuclidean {
  template <class T>
  SPIRA_HD T finalize(T dot, const terms<T, 1>& nx, const terms<T, 1>& ny, std::int64_t k) const
  {
    using std::sqrt;
    return sqrt(sqeuclidean::finalize(dot, nx, ny, k));
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
    if (nx[0] == T(0) || ny[0] == T(0)) { return nx[0] == ny[0] ? T(0) : T(1); }
    // sqrt(|x|^2 |y|^2) rather than |x| |y|: exact for x == y, so d(x, x) == 0.
    const T d = T(1) - dot / sqrt(nx[0] * ny[0]);
    return d < T(0) ? T(0) : (d > T(2) ? T(2) : d);
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
  template <class T>
  SPIRA_HD T finalize(T dot, const terms<T, 2>& nx, const terms<T, 2>& ny, std::int64_t dim) const
  {
    using std::sqrt;
    if (dim == 0) { return T(0); }
    const T k = T(dim);
    const T vx = nx[1] - nx[0] * nx[0] / k;
    const T vy = ny[1] - ny[0] * ny[0] / k;
    const bool cx = vx <= detail::variance_tolerance<T>() * nx[1];
    const bool cy = vy <= detail::variance_tolerance<T>() * ny[1];
    if (cx || cy) { return cx == cy ? T(0) : T(1); }
    const T cov = dot - nx[0] * ny[0] / k;
    const T d = T(1) - cov / sqrt(vx * vy);
    return d < T(0) ? T(0) : (d > T(2) ? T(2) : d);
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

/// Σ |x - y|. NAMM ⊗ = |a - b| over the union (Appendix A.1 of the seed paper).
struct manhattan {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return detail::abs(a - b);
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
    const T d = detail::abs(a - b);
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
};

/// max |x - y|. NAMM ⊗ = |a - b| with ⊕ = max over the union. ⊗(0, 0) = 0 is not the identity
/// -inf of max, so finalize folds the coordinates missing from both rows back in: max(acc, 0).
struct chebyshev {
  using add_monoid = max_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return detail::abs(a - b);
  }
  template <class T>
  SPIRA_HD T finalize(T acc, const terms<T, 0>&, const terms<T, 0>&, std::int64_t) const
  {
    return detail::clamp_nonnegative(acc);
  }
};

/// Σ |x - y| / (|x| + |y|), terms with x == y == 0 count 0 (as scipy). NAMM ⊗ over the union.
struct canberra {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    const T den = detail::abs(a) + detail::abs(b);
    return den == T(0) ? T(0) : detail::abs(a - b) / den;
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
    return {{detail::abs(a - b), detail::abs(a + b)}};
  }
  template <class T>
  SPIRA_HD T finalize(const terms<T, 2>& acc, const terms<T, 0>&, const terms<T, 0>&,
                      std::int64_t) const
  {
    const T num = detail::clamp_nonnegative(acc[0]);
    const T den = detail::clamp_nonnegative(acc[1]);
    if (den == T(0)) { return num == T(0) ? T(0) : spira::detail::infinity<T>(); }
    return num / den;
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
  using prepare_norm = row_sum;
  template <class T>
  SPIRA_HD constexpr T prepare(T x, T sum) const
  {
    return sum > T(0) ? x / sum : T(0);
  }
  template <class T>
  SPIRA_HD T multiply(T p, T q) const
  {
    using std::log;
    const T m = T(0.5) * (p + q);
    T r = T(0);
    if (p > T(0)) { r += p * log(p / m); }
    if (q > T(0)) { r += q * log(q / m); }
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
    return sqrt(a * b);
  }
  template <class T>
  SPIRA_HD T finalize(T acc, const terms<T, 1>& nx, const terms<T, 1>& ny, std::int64_t) const
  {
    using std::sqrt;
    return sqrt(detail::clamp_nonnegative((nx[0] + ny[0]) - T(2) * acc) / T(2));
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
    const T floor = T(epsilon);
    return x > T(0) ? x * log(x / (y > floor ? y : floor)) : T(0);
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
    case metric::cosine: return f(d::cosine{});
    case metric::euclidean: return f(d::euclidean{});
    case metric::sqeuclidean: return f(d::sqeuclidean{});
    case metric::manhattan: return f(d::manhattan{});
    case metric::chebyshev: return f(d::chebyshev{});
    case metric::minkowski: return f(d::minkowski{p});
    case metric::canberra: return f(d::canberra{});
    case metric::braycurtis: return f(d::braycurtis{});
    case metric::hamming: return f(d::hamming{});
    case metric::jaccard: return f(d::jaccard{});
    case metric::dice: return f(d::dice{});
    case metric::russellrao: return f(d::russellrao{});
    case metric::correlation: return f(d::correlation{});
    case metric::jensenshannon: return f(d::jensenshannon{});
    case metric::hellinger: return f(d::hellinger{});
    case metric::kl_divergence: return f(d::kl_divergence{});
    case metric::inner_product: return f(d::inner_product{});
  }
  throw invalid_argument(detail::concat("unknown metric value ", static_cast<int>(m)));
}

}  // namespace spira
