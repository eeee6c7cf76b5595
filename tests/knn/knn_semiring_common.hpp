// The user-defined semirings of the k-NN tests (host and CUDA) and their float64 definitions.
#pragma once

#include "support/knn_check.hpp"
#include "support/oracle.hpp"

#include <spira/semiring.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace spira::test {

/// Half the squared difference summed over the union of the stored columns: a NAMM with a sum ⊕
/// (the fused kernel serves it through the intersection plus per-row corrections).
struct half_squared {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    return T(0.5) * (a - b) * (a - b);
  }
};

/// The largest |a - b| over the union: a one-term NAMM with a max ⊕ (the selection fix-ups).
struct max_abs_difference {
  using add_monoid = max_monoid;
  static constexpr bool annihilating = false;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    return a > b ? a - b : b - a;
  }
};

/// Σ a b over the shared columns, a similarity (kept largest): annihilating.
struct dot_similarity {
  using add_monoid = plus_monoid;
  static constexpr bool annihilating = true;
  template <class T>
  SPIRA_HD T multiply(T a, T b) const
  {
    return a * b;
  }
};

inline double half_squared_exact(const std::vector<double>& x, const std::vector<double>& y)
{
  double s = 0;
  for (std::size_t c = 0; c < x.size(); ++c) {
    s += 0.5 * (x[c] - y[c]) * (x[c] - y[c]);
  }
  return s;
}
/// Over the union of the stored columns; rows with no stored column give e⊕ = -inf. With the
/// nonnegative test data, |x - y| over the union equals the max over all columns when any column
/// is stored (absent columns contribute |0 - 0| = 0 <= every stored term).
inline double max_abs_exact(const std::vector<double>& x, const std::vector<double>& y,
                            bool any_stored)
{
  if (!any_stored) {
    return -INFINITY;
  }
  double m = 0;
  for (std::size_t c = 0; c < x.size(); ++c) {
    m = std::max(m, std::abs(x[c] - y[c]));
  }
  return m;
}
inline double dot_exact(const std::vector<double>& x, const std::vector<double>& y)
{
  double s = 0;
  for (std::size_t c = 0; c < x.size(); ++c) {
    s += x[c] * y[c];
  }
  return s;
}

/// exact[r][j] for the three semirings on dense copies (stored flags for the union of max).
inline std::vector<std::vector<double>> exact_distances(int which, const dense_copy& q,
                                                        const dense_copy& x)
{
  std::vector<std::vector<double>> out(q.rows, std::vector<double>(x.rows));
  for (std::int64_t r = 0; r < q.rows; ++r) {
    for (std::int64_t j = 0; j < x.rows; ++j) {
      if (which == 0) {
        out[r][j] = half_squared_exact(q.value[r], x.value[j]);
      } else if (which == 1) {
        const bool any =
            std::any_of(q.stored[r].begin(), q.stored[r].end(), [](bool b) { return b; }) ||
            std::any_of(x.stored[j].begin(), x.stored[j].end(), [](bool b) { return b; });
        out[r][j] = max_abs_exact(q.value[r], x.value[j], any);
      } else {
        out[r][j] = dot_exact(q.value[r], x.value[j]);
      }
    }
  }
  return out;
}

}  // namespace spira::test
