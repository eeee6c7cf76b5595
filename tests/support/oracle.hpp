// Test support: a deliberately naive float64 dense oracle for semirings and distances, and random
// sparse matrices shaped like real data (power-law row degrees, empty rows and columns).
//
// The oracle never looks at the library's operator structs: every formula is written out again,
// straight from its definition over all `dim` coordinates (scipy.spatial.distance where scipy
// defines the metric; docs/metrics.md for the documented edge cases). It is O(m n dim) on purpose.
#pragma once

#include <spira/convert.hpp>
#include <spira/distance.hpp>
#include <spira/matrix.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

namespace spira::test {

/// A dense float64 copy of a sparse matrix: values and which entries are stored.
struct dense_copy {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::vector<double>> value;
  std::vector<std::vector<bool>> stored;
};

template <class V, class I>
dense_copy densify(const csr_matrix<V, I>& m)
{
  dense_copy d;
  d.rows = m.rows();
  d.cols = m.cols();
  d.value.assign(d.rows, std::vector<double>(d.cols, 0.0));
  d.stored.assign(d.rows, std::vector<bool>(d.cols, false));
  for (std::int64_t i = 0; i < m.rows(); ++i) {
    for (offset_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) {
      d.value[i][m.col_idx()[k]] += double(m.values()[k]);
      d.stored[i][m.col_idx()[k]] = true;
    }
  }
  return d;
}

namespace oracle {

using vec = std::vector<double>;

inline double sum(const vec& x)
{
  double s = 0;
  for (double v : x) {
    s += v;
  }
  return s;
}

/// One distance between two dense rows, written from the definitions in docs/metrics.md.
inline double distance(metric m, const vec& x, const vec& y, double p = 2.0)
{
  const std::size_t k = x.size();
  const double inf = std::numeric_limits<double>::infinity();
  auto all_zero = [](const vec& v) {
    return std::all_of(v.begin(), v.end(), [](double e) { return e == 0.0; });
  };
  switch (m) {
    case metric::inner_product: {
      double s = 0;
      for (std::size_t c = 0; c < k; ++c) {
        s += x[c] * y[c];
      }
      return s;
    }
    case metric::sqeuclidean:
    case metric::euclidean: {
      double s = 0;
      for (std::size_t c = 0; c < k; ++c) {
        s += (x[c] - y[c]) * (x[c] - y[c]);
      }
      return m == metric::euclidean ? std::sqrt(s) : s;
    }
    case metric::cosine: {
      if (all_zero(x) || all_zero(y)) {
        return all_zero(x) && all_zero(y) ? 0.0 : 1.0;
      }
      double xy = 0, xx = 0, yy = 0;
      for (std::size_t c = 0; c < k; ++c) {
        xy += x[c] * y[c];
        xx += x[c] * x[c];
        yy += y[c] * y[c];
      }
      return std::clamp(1.0 - xy / (std::sqrt(xx) * std::sqrt(yy)), 0.0, 2.0);
    }
    case metric::correlation: {
      auto constant = [](const vec& v) {
        return std::all_of(v.begin(), v.end(), [&](double e) { return e == v[0]; });
      };
      if (k == 0) {
        return 0.0;
      }
      if (constant(x) || constant(y)) {
        return constant(x) && constant(y) ? 0.0 : 1.0;
      }
      const double mx = sum(x) / double(k), my = sum(y) / double(k);
      double xy = 0, xx = 0, yy = 0;
      for (std::size_t c = 0; c < k; ++c) {
        xy += (x[c] - mx) * (y[c] - my);
        xx += (x[c] - mx) * (x[c] - mx);
        yy += (y[c] - my) * (y[c] - my);
      }
      return std::clamp(1.0 - xy / (std::sqrt(xx) * std::sqrt(yy)), 0.0, 2.0);
    }
    case metric::dice:
    case metric::russellrao: {
      double tt = 0, tf = 0, ft = 0;
      for (std::size_t c = 0; c < k; ++c) {
        const bool a = x[c] != 0, b = y[c] != 0;
        tt += a && b;
        tf += a && !b;
        ft += !a && b;
      }
      if (m == metric::russellrao) {
        return k == 0 ? 0.0 : (double(k) - tt) / double(k);
      }
      return (2 * tt + tf + ft) == 0 ? 0.0 : (tf + ft) / (2 * tt + tf + ft);
    }
    case metric::jaccard: {  // booleans: true = nonzero
      double either = 0, both = 0;
      for (std::size_t c = 0; c < k; ++c) {
        either += x[c] != 0 || y[c] != 0;
        both += x[c] != 0 && y[c] != 0;
      }
      return either == 0 ? 0.0 : (either - both) / either;
    }
    case metric::hamming: {
      double unequal = 0;
      for (std::size_t c = 0; c < k; ++c) {
        unequal += x[c] != y[c];
      }
      return k == 0 ? 0.0 : unequal / double(k);
    }
    case metric::manhattan: {
      double s = 0;
      for (std::size_t c = 0; c < k; ++c) {
        s += std::abs(x[c] - y[c]);
      }
      return s;
    }
    case metric::minkowski: {
      double s = 0;
      for (std::size_t c = 0; c < k; ++c) {
        s += std::pow(std::abs(x[c] - y[c]), p);
      }
      return std::pow(s, 1.0 / p);
    }
    case metric::chebyshev: {
      double s = 0;
      for (std::size_t c = 0; c < k; ++c) {
        s = std::max(s, std::abs(x[c] - y[c]));
      }
      return s;
    }
    case metric::canberra: {
      double s = 0;
      for (std::size_t c = 0; c < k; ++c) {
        const double den = std::abs(x[c]) + std::abs(y[c]);
        if (den != 0) {
          s += std::abs(x[c] - y[c]) / den;
        }
      }
      return s;
    }
    case metric::braycurtis: {
      double num = 0, den = 0;
      for (std::size_t c = 0; c < k; ++c) {
        num += std::abs(x[c] - y[c]);
        den += std::abs(x[c] + y[c]);
      }
      if (den == 0) {
        return num == 0 ? 0.0 : inf;
      }
      return num / den;
    }
    case metric::jensenshannon: {
      const double sx = sum(x), sy = sum(y);
      if (sx == 0 || sy == 0) {
        return sx == sy ? 0.0 : std::sqrt(std::log(2.0));
      }
      auto rel_entr = [](double a, double b) { return a > 0 ? a * std::log(a / b) : 0.0; };
      double js = 0;
      for (std::size_t c = 0; c < k; ++c) {
        const double pc = x[c] / sx, qc = y[c] / sy, mc = (pc + qc) / 2;
        js += rel_entr(pc, mc) + rel_entr(qc, mc);
      }
      return std::sqrt(std::max(js, 0.0) / 2);
    }
    case metric::hellinger: {
      double s = 0;
      for (std::size_t c = 0; c < k; ++c) {
        const double d = std::sqrt(x[c]) - std::sqrt(y[c]);
        s += d * d;
      }
      return std::sqrt(s) / std::sqrt(2.0);
    }
    case metric::kl_divergence: {
      double s = 0;
      for (std::size_t c = 0; c < k; ++c) {
        if (x[c] > 0) {
          s += x[c] * std::log(x[c] / std::max(y[c], 1e-10));
        }
      }
      return s;
    }
  }
  throw std::logic_error("oracle::distance: unknown metric");
}

/// All pairs, rows of a x rows of b.
inline std::vector<vec> pairwise(metric m, const dense_copy& a, const dense_copy& b, double p = 2.0)
{
  std::vector<vec> out(a.rows, vec(b.rows));
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (std::int64_t j = 0; j < b.rows; ++j) {
      out[i][j] = distance(m, a.value[i], b.value[j], p);
    }
  }
  return out;
}

/// C = A ⊕.⊗ Bᵀ over the columns stored in both rows (GraphBLAS semantics); entries with no common
/// stored column hold `identity`. add and mul are plain callables on doubles.
template <class Add, class Mul>
std::vector<vec> semiring_product(const dense_copy& a, const dense_copy& b, Add add, Mul mul,
                                  double identity)
{
  std::vector<vec> out(a.rows, vec(b.rows, identity));
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (std::int64_t j = 0; j < b.rows; ++j) {
      double acc = identity;
      for (std::int64_t c = 0; c < a.cols; ++c) {
        if (a.stored[i][c] && b.stored[j][c]) {
          acc = add(acc, mul(a.value[i][c], b.value[j][c]));
        }
      }
      out[i][j] = acc;
    }
  }
  return out;
}

}  // namespace oracle

/// Shape of a random test matrix.
struct random_options {
  std::int64_t rows = 40;
  std::int64_t cols = 60;
  double mean_degree = 6;  ///< mean stored entries per row (power-law distributed)
  double empty_row_fraction = 0.1;
  double empty_col_fraction = 0.15;  ///< columns that never receive an entry
  bool signed_values = false;        ///< values in [-2, 2] instead of (0, 2]
  bool small_integers = false;       ///< values in {1, 2, 3} (so that equal values occur)
  std::uint32_t seed = 1;
};

/// A canonical CSR matrix with power-law (Pareto, alpha 1.5) row degrees capped at cols, some empty
/// rows and some columns that no row uses. Deterministic for a given seed.
template <class V, class I>
csr_matrix<V, I> random_csr(const random_options& o)
{
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<std::int64_t> usable;
  for (std::int64_t c = 0; c < o.cols; ++c) {
    if (unit(rng) >= o.empty_col_fraction) {
      usable.push_back(c);
    }
  }
  std::vector<offset_t> row_ptr{0};
  std::vector<I> col_idx;
  std::vector<V> values;
  for (std::int64_t i = 0; i < o.rows; ++i) {
    std::int64_t deg = 0;
    if (unit(rng) >= o.empty_row_fraction && !usable.empty()) {
      // Pareto(x_m, 1.5) has mean 3 x_m; the heavy tail gives a few long rows.
      const double x_m = o.mean_degree / 3.0;
      deg = std::int64_t(x_m / std::pow(1.0 - unit(rng), 1.0 / 1.5));
      deg = std::clamp<std::int64_t>(deg, 1, std::int64_t(usable.size()));
    }
    std::set<std::int64_t> cols;
    while (std::int64_t(cols.size()) < deg) {
      cols.insert(usable[std::size_t(unit(rng) * double(usable.size())) % usable.size()]);
    }
    for (std::int64_t c : cols) {
      double v;
      if (o.small_integers) {
        v = double(1 + std::int64_t(unit(rng) * 3) % 3);
      } else if (o.signed_values) {
        v = 4.0 * unit(rng) - 2.0;
      } else {
        v = 2.0 * (1.0 - unit(rng));
      }
      col_idx.push_back(I(c));
      values.push_back(V(v));
    }
    row_ptr.push_back(offset_t(col_idx.size()));
  }
  return make_csr<V, I>(host_resources{}, o.rows, o.cols, row_ptr, col_idx, values,
                        csr_check::canonical);
}

/// A canonical CSR matrix whose row t is row rows[t] of `base` with its first stored value times
/// scales[t] (1 where scales is shorter): copies and near-copies of rows.
template <class V, class I>
csr_matrix<V, I> copied_rows(const csr_matrix<V, I>& base, const std::vector<std::int64_t>& rows,
                             const std::vector<V>& scales = {})
{
  std::vector<offset_t> row_ptr{0};
  std::vector<I> col_idx;
  std::vector<V> values;
  for (std::size_t t = 0; t < rows.size(); ++t) {
    const V scale = t < scales.size() ? scales[t] : V(1);
    for (offset_t e = base.row_ptr()[rows[t]]; e < base.row_ptr()[rows[t] + 1]; ++e) {
      col_idx.push_back(base.col_idx()[e]);
      values.push_back(e == base.row_ptr()[rows[t]] ? base.values()[e] * scale : base.values()[e]);
    }
    row_ptr.push_back(offset_t(col_idx.size()));
  }
  return make_csr<V, I>(host_resources{}, std::int64_t(rows.size()), base.cols(), row_ptr, col_idx,
                        values, csr_check::canonical);
}

}  // namespace spira::test
