// The user-defined distance of the examples: the mean Huber loss between two rows, with
// threshold delta:
//   d(x, y) = (1/k) Σ_c huber(x_c - y_c),  huber(t) = t²/2 if |t| <= delta, else delta (|t| -
//   delta/2)
// huber(x_c - 0) is not 0, so the multiply does not annihilate on the implicit zero: it is a NAMM
// and spira visits the union of the stored columns of both rows. The struct is plain C++ with
// SPIRA_HD members, so custom_distance.cpp runs it on the host and custom_distance_cuda.cu on the
// GPU.
#pragma once

#include <spira/semiring.hpp>

#include <cstdint>

// [distance]
struct mean_huber {
  double delta = 1.0;  // a parameter carried by value, on the host and on a device alike

  using add_monoid = spira::plus_monoid;       // ⊕ = +, identity 0
  static constexpr bool annihilating = false;  // NAMM: ⊗(a, 0) matters, visit the union

  // ⊗: the first argument comes from a row of A, the second from a row of B. ⊗(0, 0) = 0 = e⊕,
  // so columns missing from both rows contribute nothing, as the NAMM law requires.
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    const T t = a > b ? a - b : b - a;
    const T d = T(delta);
    return t <= d ? T(0.5) * t * t : d * (t - T(0.5) * d);
  }

  // finalize(accumulated ⊕, norms of row i of A, norms of row j of B, number of columns).
  // This distance declares no norms, so they are empty terms.
  template <class T>
  SPIRA_HD T finalize(T acc, const spira::terms<T, 0>&, const spira::terms<T, 0>&,
                      std::int64_t dim) const
  {
    return dim == 0 ? T(0) : acc / T(dim);
  }
};
// [distance]
