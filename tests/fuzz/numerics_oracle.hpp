// fuzz_numerics' oracle: the metrics of docs/metrics.md from their definitions, in long double,
// with exact summation where terms can cancel, and the bound a result of the library must meet
// (S1 and S2 of fuzz_numerics.cpp).
#pragma once

#include <spira/distance.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace spira::fuzz {

using ld = long double;

/// Exact sum of long doubles (Shewchuk's partials, as Python's math.fsum), rounded once.
class exact_sum {
 public:
  void add(ld x)
  {
    std::size_t i = 0;
    for (ld y : partials_) {
      if (std::abs(x) < std::abs(y)) {
        std::swap(x, y);
      }
      const ld hi = x + y;
      const ld lo = y - (hi - x);
      if (lo != 0) {
        partials_[i++] = lo;
      }
      x = hi;
    }
    partials_.resize(i);
    partials_.push_back(x);
  }
  /// x * y added exactly (the product split into two long doubles with fma).
  void add_product(ld x, ld y)
  {
    const ld p = x * y;
    add(p);
    add(std::fma(x, y, -p));
  }
  [[nodiscard]] ld value() const
  {
    ld s = 0;
    for (auto it = partials_.rbegin(); it != partials_.rend(); ++it) {
      s += *it;
    }
    return s;
  }

 private:
  std::vector<ld> partials_;
};

/// The oracle's verdict for one pair.
struct expected {
  enum class kind { value, range, anything } what = kind::value;
  ld exact = 0;              // kind::value
  ld lo = 0, hi = 0;         // kind::range: the metric's range
  bool nan_allowed = false;  // kind::range: inf - inf in a sum (inner_product, kl_divergence)
};

inline expected value_of(ld v)
{
  return {expected::kind::value, v, 0, 0, false};
}
inline expected range_of(ld lo, ld hi, bool nan_allowed = false)
{
  return {expected::kind::range, 0, lo, hi, nan_allowed};
}

using row_t = std::vector<ld>;

inline bool has_nan(const row_t& x)
{
  return std::any_of(x.begin(), x.end(), [](ld v) { return std::isnan(v); });
}
inline bool has_inf(const row_t& x)
{
  return std::any_of(x.begin(), x.end(), [](ld v) { return std::isinf(v); });
}
inline bool all_zero(const row_t& x)
{
  return std::all_of(x.begin(), x.end(), [](ld v) { return v == 0; });
}

/// |x - y| with equal coordinates (equal infinities included) giving 0.
inline ld abs_diff(ld x, ld y)
{
  return x == y ? 0 : std::abs(x - y);
}

/// (sum |x - y|^p)^(1/p), scaled by the largest difference so that no power overflows.
inline ld minkowski(const row_t& x, const row_t& y, ld p)
{
  ld big = 0;
  for (std::size_t c = 0; c < x.size(); ++c) {
    big = std::max(big, abs_diff(x[c], y[c]));
  }
  if (big == 0 || std::isinf(big)) {
    return big;
  }
  ld s = 0;
  for (std::size_t c = 0; c < x.size(); ++c) {
    s += std::pow(abs_diff(x[c], y[c]) / big, p);
  }
  return big * std::pow(s, 1 / p);
}

/// x minus its mean, accurately: the mean of the residuals corrects the first mean.
inline row_t centred(const row_t& x)
{
  const ld k = ld(x.size());
  exact_sum s;
  for (ld v : x) {
    s.add(v);
  }
  const ld m1 = s.value() / k;
  exact_sum r;
  for (ld v : x) {
    r.add(v - m1);
  }
  const ld m2 = r.value() / k;
  row_t d(x.size());
  for (std::size_t c = 0; c < x.size(); ++c) {
    d[c] = (x[c] - m1) - m2;
  }
  return d;
}

/// 1 - <x, y> / (|x| |y|) clamped to [0, 2], for rows that are not all zero.
inline ld cosine_of(const row_t& x, const row_t& y)
{
  exact_sum xy;
  ld xx = 0, yy = 0;
  // Scaled by the largest magnitude so that the squares of subnormal doubles stay normal.
  ld sx = 0, sy = 0;
  for (std::size_t c = 0; c < x.size(); ++c) {
    sx = std::max(sx, std::abs(x[c]));
    sy = std::max(sy, std::abs(y[c]));
  }
  for (std::size_t c = 0; c < x.size(); ++c) {
    const ld a = x[c] / sx, b = y[c] / sy;
    xy.add_product(a, b);
    xx += a * a;
    yy += b * b;
  }
  return std::clamp<ld>(1 - xy.value() / (std::sqrt(xx) * std::sqrt(yy)), 0, 2);
}

/// The verdict of a sum whose terms include +inf (pos_inf) or -inf (neg_inf), but not both, and
/// whose finite terms total `total`.
inline expected sum_verdict(bool pos_inf, bool neg_inf, ld total)
{
  const ld inf = std::numeric_limits<ld>::infinity();
  const ld dmax = std::numeric_limits<double>::max();
  if ((pos_inf && total < -dmax) || (neg_inf && total > dmax)) {
    // Documented: an infinite term against a finite sum that overflows double may give NaN.
    return range_of(-inf, inf, true);
  }
  if (pos_inf || neg_inf) {
    return value_of(pos_inf ? inf : -inf);
  }
  return value_of(total);
}

inline expected oracle(spira::metric m, const row_t& x, const row_t& y, double p)
{
  using spira::metric;
  const std::size_t k = x.size();
  const ld inf = std::numeric_limits<ld>::infinity();
  const bool any_inf = has_inf(x) || has_inf(y);
  switch (m) {
    case metric::inner_product: {
      exact_sum s;
      bool pos_inf = false, neg_inf = false;
      bool inf_times_zero = false;
      for (std::size_t c = 0; c < k; ++c) {
        if (x[c] == 0 || y[c] == 0) {  // a missing entry is the value 0; inf * 0 is not defined
          inf_times_zero = inf_times_zero || std::isinf(x[c]) || std::isinf(y[c]);
          continue;
        }
        if (std::isinf(x[c]) || std::isinf(y[c])) {
          ((x[c] > 0) == (y[c] > 0) ? pos_inf : neg_inf) = true;
        } else {
          s.add_product(x[c], y[c]);
        }
      }
      if ((pos_inf && neg_inf) || inf_times_zero) {
        return range_of(-inf, inf, true);
      }
      return sum_verdict(pos_inf, neg_inf, s.value());
    }
    case metric::sqeuclidean:
    case metric::euclidean: {
      ld s = 0;
      for (std::size_t c = 0; c < k; ++c) {
        const ld d = abs_diff(x[c], y[c]);
        s += d * d;
      }
      return value_of(m == metric::euclidean ? std::sqrt(s) : s);
    }
    case metric::manhattan: {
      ld s = 0;
      for (std::size_t c = 0; c < k; ++c) {
        s += abs_diff(x[c], y[c]);
      }
      return value_of(s);
    }
    case metric::chebyshev: {
      ld s = 0;
      for (std::size_t c = 0; c < k; ++c) {
        s = std::max(s, abs_diff(x[c], y[c]));
      }
      return value_of(s);
    }
    case metric::minkowski:
      return value_of(minkowski(x, y, ld(p)));
    case metric::canberra: {
      if (any_inf) {
        return range_of(0, ld(k));
      }
      ld s = 0;
      for (std::size_t c = 0; c < k; ++c) {
        if (x[c] != y[c]) {
          s += std::abs(x[c] - y[c]) / (std::abs(x[c]) + std::abs(y[c]));
        }
      }
      return value_of(s);
    }
    case metric::braycurtis: {
      if (any_inf) {
        return range_of(0, inf);
      }
      ld num = 0, den = 0;
      for (std::size_t c = 0; c < k; ++c) {
        num += abs_diff(x[c], y[c]);
        den += std::abs(x[c] + y[c]);
      }
      if (den == 0) {
        return value_of(num == 0 ? 0 : inf);
      }
      return value_of(num / den);
    }
    case metric::cosine: {
      if (any_inf) {
        return range_of(0, 2);
      }
      if (all_zero(x) || all_zero(y)) {
        return value_of(all_zero(x) && all_zero(y) ? 0 : 1);
      }
      return value_of(cosine_of(x, y));
    }
    case metric::correlation: {
      if (any_inf) {
        return range_of(0, 2);
      }
      auto constant = [](const row_t& v) {
        return std::all_of(v.begin(), v.end(), [&](ld e) { return e == v[0]; });
      };
      if (constant(x) || constant(y)) {
        return value_of(constant(x) && constant(y) ? 0 : 1);
      }
      return value_of(cosine_of(centred(x), centred(y)));
    }
    case metric::hamming: {
      ld n = 0;
      for (std::size_t c = 0; c < k; ++c) {
        n += x[c] != y[c];
      }
      return value_of(n / ld(k));
    }
    case metric::jaccard:
    case metric::dice:
    case metric::russellrao: {
      ld tt = 0, tf = 0, ft = 0;
      for (std::size_t c = 0; c < k; ++c) {
        const bool a = x[c] != 0, b = y[c] != 0;
        tt += a && b;
        tf += a && !b;
        ft += !a && b;
      }
      if (m == metric::russellrao) {
        return value_of((ld(k) - tt) / ld(k));
      }
      if (m == metric::jaccard) {
        return value_of(tt + tf + ft == 0 ? 0 : (tf + ft) / (tt + tf + ft));
      }
      return value_of(2 * tt + tf + ft == 0 ? 0 : (tf + ft) / (2 * tt + tf + ft));
    }
    case metric::jensenshannon: {
      const ld js_max = std::sqrt(std::log(ld(2)));
      // Documented exception: a row whose sum overflows double is normalised only approximately.
      double dsx = 0, dsy = 0;
      for (std::size_t c = 0; c < k; ++c) {
        dsx += double(x[c]);
        dsy += double(y[c]);
      }
      if (any_inf || !std::isfinite(dsx) || !std::isfinite(dsy)) {
        return range_of(0, js_max);
      }
      ld sx = 0, sy = 0;
      for (std::size_t c = 0; c < k; ++c) {
        sx += x[c];
        sy += y[c];
      }
      if (sx == 0 || sy == 0) {
        return value_of(sx == sy ? 0 : js_max);
      }
      auto rel_entr = [](ld a, ld b) { return a > 0 ? a * std::log(a / b) : ld(0); };
      exact_sum js;
      for (std::size_t c = 0; c < k; ++c) {
        const ld pc = x[c] / sx, qc = y[c] / sy, mc = (pc + qc) / 2;
        js.add(rel_entr(pc, mc));
        js.add(rel_entr(qc, mc));
      }
      return value_of(std::sqrt(std::max<ld>(js.value(), 0) / 2));
    }
    case metric::hellinger: {
      ld s = 0;
      for (std::size_t c = 0; c < k; ++c) {
        if (x[c] == y[c]) {
          continue;
        }
        if (std::isinf(x[c]) || std::isinf(y[c])) {
          s = inf;
          continue;
        }
        const ld d = (x[c] - y[c]) / (std::sqrt(x[c]) + std::sqrt(y[c]));
        s += d * d;
      }
      return value_of(std::sqrt(s / 2));
    }
    case metric::kl_divergence: {
      const ld eps = ld(1e-10);
      exact_sum s;
      bool pos_inf = false, neg_inf = false;
      for (std::size_t c = 0; c < k; ++c) {
        if (x[c] == 0) {
          continue;
        }
        if (std::isinf(x[c]) || std::isinf(y[c])) {
          if (x[c] != y[c]) {
            (std::isinf(x[c]) ? pos_inf : neg_inf) = true;
          }
          continue;
        }
        const ld q = std::max(y[c], eps);
        const ld r = x[c] / q;  // log1p of the exact difference where the ratio is close to 1
        s.add(x[c] * (r > 0.5L && r < 2.0L ? std::log1p((x[c] - q) / q) : std::log(r)));
      }
      if (pos_inf && neg_inf) {
        return range_of(-inf, inf, true);
      }
      return sum_verdict(pos_inf, neg_inf, s.value());
    }
  }
  throw std::logic_error("fuzz_numerics: unknown metric");
}

inline double floor_scale(spira::metric m)
{
  using spira::metric;
  return m == metric::cosine || m == metric::correlation || m == metric::jensenshannon ? 1.0 : 0.0;
}

/// The values a result of type Out may take for the exact value e (S1, with overflow to +-inf).
template <class Out>
bool within_bound(ld e, ld got, double s)
{
  if (std::isnan(got)) {
    return false;
  }
  if (std::isinf(e)) {
    return got == e;
  }
  const ld max = std::numeric_limits<Out>::max();
  // Plus a few units of the smallest subnormal: each operation may round by one there.
  const ld b =
      ld(1e-5) * std::max<ld>(std::abs(e), s) + 16 * std::numeric_limits<Out>::denorm_min();
  const ld lo = e - b, hi = e + b;
  if (std::isinf(got)) {
    return got > 0 ? hi > max : lo < -max;
  }
  return lo <= got && got <= hi;
}

}  // namespace spira::fuzz
