// Test support: matrices that declare far more columns than they use (hashed feature ids, a file
// header that declares 2^31 columns), their float64 oracle, and the process's peak memory.
//
// A wide matrix is a narrow one (u columns) whose column c is moved to used[c] of a declared
// dimension `dim` >= u. Every metric then has the value the oracle gives on the narrow dense rows
// padded with dim - u zero coordinates; the padding changes only the metrics that count all
// coordinates (hamming, russellrao, correlation), which wide_oracle writes out with the zeros
// counted in closed form (a dense oracle over 2^31 coordinates is out of reach).
#pragma once

#include "support/oracle.hpp"

#include <spira/spira.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace spira::test {

/// `narrow` with column c renamed used[c] (increasing) in a matrix of `dim` columns.
template <class V, class I>
csr_matrix<V, I> widen(const csr_matrix<V, I>& narrow, const std::vector<std::int64_t>& used,
                       std::int64_t dim)
{
  std::vector<offset_t> rp(narrow.row_ptr(), narrow.row_ptr() + narrow.rows() + 1);
  std::vector<I> ci;
  for (std::int64_t k = 0; k < narrow.nnz(); ++k) {
    ci.push_back(I(used[narrow.col_idx()[k]]));
  }
  std::vector<V> va(narrow.values(), narrow.values() + narrow.nnz());
  return make_csr<V, I>(host_resources{}, narrow.rows(), dim, rp, ci, va, csr_check::canonical);
}

namespace oracle {

/// d(x, y) over `dim` coordinates of which the ones beyond x.size() are zero in both rows.
inline double distance_padded(metric m, const vec& x, const vec& y, std::int64_t dim,
                              double p = 2.0)
{
  const double k = double(dim);
  switch (m) {
    case metric::hamming: {
      double unequal = 0;
      for (std::size_t c = 0; c < x.size(); ++c) {
        unequal += x[c] != y[c];
      }
      return dim == 0 ? 0.0 : unequal / k;
    }
    case metric::russellrao: {
      double tt = 0;
      for (std::size_t c = 0; c < x.size(); ++c) {
        tt += x[c] != 0 && y[c] != 0;
      }
      return dim == 0 ? 0.0 : (k - tt) / k;
    }
    case metric::correlation: {
      // With zero coordinates present a row is constant only when it is all zero.
      const bool padded = dim > std::int64_t(x.size());
      auto constant = [&](const vec& v) {
        const double first = padded ? 0.0 : v[0];
        return std::all_of(v.begin(), v.end(), [&](double e) { return e == first; });
      };
      if (dim == 0) {
        return 0.0;
      }
      if (constant(x) || constant(y)) {
        return constant(x) && constant(y) ? 0.0 : 1.0;
      }
      // Σ (x - mx)(y - my) = Σ xy - Σx Σy / dim over all dim coordinates, and so on.
      const double sx = sum(x), sy = sum(y);
      double xy = 0, xx = 0, yy = 0;
      for (std::size_t c = 0; c < x.size(); ++c) {
        xy += x[c] * y[c];
        xx += x[c] * x[c];
        yy += y[c] * y[c];
      }
      xy -= sx * sy / k;
      xx -= sx * sx / k;
      yy -= sy * sy / k;
      return std::clamp(1.0 - xy / (std::sqrt(xx) * std::sqrt(yy)), 0.0, 2.0);
    }
    default:
      return distance(m, x, y, p);  // zero coordinates add nothing
  }
}

/// All pairs of the wide matrices whose narrow dense copies are a and b, in `dim` columns.
inline std::vector<vec> pairwise_padded(metric m, const dense_copy& a, const dense_copy& b,
                                        std::int64_t dim, double p = 2.0)
{
  std::vector<vec> out(a.rows, vec(b.rows));
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (std::int64_t j = 0; j < b.rows; ++j) {
      out[i][j] = distance_padded(m, a.value[i], b.value[j], dim, p);
    }
  }
  return out;
}

}  // namespace oracle

/// Resets the peak resident memory of this process to its current resident memory (Linux:
/// /proc/self/clear_refs); false where that is not possible.
inline bool reset_peak_resident_memory()
{
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return bool(f);
}

/// Peak resident memory of this process in bytes: VmHWM (since the last reset), or the
/// getrusage peak where /proc is not available.
inline std::int64_t peak_resident_memory()
{
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return std::stoll(line.substr(6)) * 1024;
    }
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return std::int64_t(u.ru_maxrss) * 1024;
}

/// Current resident memory of this process in bytes (VmRSS; 0 where /proc is not available).
inline std::int64_t resident_memory()
{
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::stoll(line.substr(6)) * 1024;
    }
  }
  return 0;
}

/// Measures how far the peak resident memory of this process rises above its resident memory at
/// construction (the peak is reset first where the system allows it).
class peak_memory_probe {
 public:
  peak_memory_probe()
  {
    reset_peak_resident_memory();
    start_ = resident_memory();
    peak_before_ = peak_resident_memory();
  }
  /// Bytes the peak rose above the starting point (a lower bound where the peak was not reset).
  [[nodiscard]] std::int64_t growth() const
  {
    return peak_resident_memory() - std::max(start_, peak_before_);
  }

 private:
  std::int64_t start_ = 0;
  std::int64_t peak_before_ = 0;
};

}  // namespace spira::test
