// spira: the classic GraphBLAS semirings as spira semiring values (host and device).
//
// All are annihilating: a missing entry is the add identity e⊕ and ⊗(x, e⊕) == e⊕, so only the
// columns stored in both operands contribute; an output entry with no common column is e⊕.
// Laws checked next to each type: the add monoid's laws are in spira/semiring.hpp; below, the
// multiply's annihilation and its distributivity over ⊕ (x ⊗ (y ⊕ z) == (x ⊗ y) ⊕ (x ⊗ z)).
#pragma once

#include <spira/semiring.hpp>

namespace spira::semirings {

/// (+, ×): the ordinary product. e⊕ = 0; 0 × x = 0 (annihilates); × distributes over +.
struct plus_times {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = true;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return a * b;
  }
};

/// (min, +): tropical shortest paths. e⊕ = +inf; x + inf = inf (annihilates, for finite x);
/// + distributes over min.
struct min_plus {
  using add_monoid = min_monoid;
  static constexpr bool annihilating = true;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return a + b;
  }
};

/// (max, +): longest / most-probable paths (log domain). e⊕ = -inf; x + (-inf) = -inf;
/// + distributes over max.
struct max_plus {
  using add_monoid = max_monoid;
  static constexpr bool annihilating = true;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return a + b;
  }
};

/// (max, min): bottleneck / widest paths. e⊕ = -inf; min(x, -inf) = -inf; min distributes over
/// max (a distributive lattice).
struct max_min {
  using add_monoid = max_monoid;
  static constexpr bool annihilating = true;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return b < a ? b : a;
  }
};

/// (or, and) on truth values (nonzero = true), results 0 or 1: reachability. e⊕ = 0 (false);
/// and(x, false) = false; and distributes over or. Terminal 1 (true) allows early exit.
struct lor_land {
  using add_monoid = lor_monoid;
  static constexpr bool annihilating = true;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return (a != T(0) && b != T(0)) ? T(1) : T(0);
  }
};

/// (+, pair): pair(a, b) = 1 for every pair of *stored* entries, whatever their values, so
/// C[i,j] counts the common stored columns (structural; an explicit zero counts). e⊕ = 0.
struct plus_pair {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = true;
  template <class T>
  SPIRA_HD constexpr T multiply(T, T) const
  {
    return T(1);
  }
};

/// (any, pair): 1 when rows share a stored column, else e⊕ = 0 (structural pattern of A·Bᵀ).
/// Terminal 1: a kernel may stop at the first common column.
struct any_pair {
  using add_monoid = any_monoid;
  static constexpr bool annihilating = true;
  template <class T>
  SPIRA_HD constexpr T multiply(T, T) const
  {
    return T(1);
  }
};

}  // namespace spira::semirings
