// spira: the boolean distances of the catalogue, on "nonzero = true" (dice, russellrao, jaccard): a
// count of the common nonzeros over the intersection and nnz norms. Notation:
// semirings/distances.hpp.
#pragma once

#include <spira/accuracy.hpp>
#include <spira/semiring.hpp>
#include "distance_norms.hpp"
#include "distance_numerics.hpp"

#include <cmath>
#include <cstdint>

namespace spira::distances {

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

}  // namespace spira::distances
