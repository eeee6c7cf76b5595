// Synthetic sparse matrices shaped like the seed paper's Table 2 datasets (Nolet et al.): the same
// shape, density and degree range, power-law (Pareto) row degrees and Zipf-like column popularity.
// Deterministic for a given seed; values are positive counts-like floats in [1, 10].
//
//   dataset             rows x cols       density   row degree min / max
//   movielens-large     283K x 194K       0.05%     0 / 24K
//   sec-edgar           663K x 858K       0.0007%   0 / 51
//   scrna               66K x 26K         7%        501 / 9.6K
//   nytimes-bow         300K x 102K       0.2%      0 / 2K
//
// `rows` may be lowered (a query subset: the first rows of the same distribution); the columns and
// the degree distribution stay those of the full dataset. More rows than the full dataset are
// generated only when asked (past_full::extend): further rows of the same distribution, the first
// rows unchanged (each row is drawn from its own generator).
#pragma once

#include <spira/convert.hpp>
#include <spira/matrix.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

namespace spira::bench {

struct synthetic_shape {
  const char* name;
  std::int64_t rows, cols;
  double density;  ///< nnz / (rows * cols) of the full dataset
  std::int64_t min_degree, max_degree;
  double zipf_s;  ///< column popularity ~ 1 / rank^zipf_s
};

inline const std::vector<synthetic_shape>& table2_shapes()
{
  static const std::vector<synthetic_shape> shapes{
      {"movielens-large", 283228, 193886, 0.0005, 0, 24000, 0.9},
      {"sec-edgar", 663000, 858000, 0.000007, 0, 51, 0.6},
      {"scrna", 66000, 26000, 0.07, 501, 9600, 0.5},
      {"nytimes-bow", 300000, 102660, 0.002, 0, 2000, 1.0},
  };
  return shapes;
}

/// What make_synthetic does with more rows than the shape's full count.
enum class past_full {
  clamp,   ///< keep the full count (the default: a larger request is the full dataset)
  extend,  ///< generate them: more rows of the same distribution (e.g. a 2M-row sec-edgar)
};

inline const synthetic_shape& table2_shape(const std::string& name)
{
  for (const auto& s : table2_shapes()) {
    if (name == s.name) {
      return s;
    }
  }
  throw std::invalid_argument("unknown synthetic dataset '" + name +
                              "' (movielens-large, sec-edgar, scrna, nytimes-bow)");
}

/// Row degrees: Pareto (alpha 1.5) clamped to [min, max], scaled so that the mean degree is
/// density * cols (the minimum degree is then the Pareto scale, not the table's minimum, for the
/// sets whose table minimum is 0).
/// Columns: drawn from a Zipf(s) law over a random permutation of the columns, without repeats in
/// a row. Returns the first `rows` rows (all when rows <= 0; at most the full count unless
/// `more` is past_full::extend).
/// Row i draws from its own generator (seeded from `seed` and i), so the rows are generated in
/// parallel on `threads` host threads (0: all hardware threads) and the result does not depend on
/// the thread count: the full-size shapes (up to 120 million entries for scrna) take seconds. For
/// the same reason the first rows do not depend on `rows`, past the full count included.
template <class V, class I>
csr_matrix<V, I> make_synthetic(const synthetic_shape& s, std::int64_t rows, std::uint64_t seed,
                                unsigned threads = 0, past_full more = past_full::clamp)
{
  if (rows <= 0 || (rows > s.rows && more == past_full::clamp)) {
    rows = s.rows;
  }
  std::mt19937_64 rng(seed);
  const double mean = s.density * double(s.cols);
  // Pareto(x_m, alpha = 1.5) degrees clamped to [min, max]: x_m is chosen by bisection so that the
  // clamped mean (over a fixed grid of quantiles) is the dataset's mean degree.
  const double alpha = 1.5;
  const auto clamped_mean = [&](double xm) {
    constexpr int grid = 4096;
    double sum = 0;
    for (int k = 0; k < grid; ++k) {
      const double x = xm / std::pow(1.0 - (k + 0.5) / grid, 1.0 / alpha);
      sum += std::clamp(std::floor(x), double(s.min_degree), double(s.max_degree));
    }
    return sum / grid;
  };
  double lo = 1e-3, hi = std::max(mean, 1.0);
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    (clamped_mean(mid) < mean ? lo : hi) = mid;
  }
  const double x_m = 0.5 * (lo + hi);
  // Zipf over ranks: inverse-CDF table of the cumulative weight.
  std::vector<double> cdf(static_cast<std::size_t>(s.cols));
  double total = 0;
  for (std::int64_t r = 0; r < s.cols; ++r) {
    total += 1.0 / std::pow(double(r + 1), s.zipf_s);
    cdf[std::size_t(r)] = total;
  }
  std::vector<I> perm(static_cast<std::size_t>(s.cols));
  for (std::int64_t c = 0; c < s.cols; ++c) {
    perm[std::size_t(c)] = I(c);
  }
  std::shuffle(perm.begin(), perm.end(), rng);

  // Rows [r0, r1) into one chunk; chunks are concatenated in row order.
  struct chunk {
    std::vector<offset_t> degree;
    std::vector<I> col_idx;
    std::vector<V> values;
  };
  const auto generate = [&](std::int64_t r0, std::int64_t r1, chunk& out) {
    std::unordered_set<std::int64_t> seen;
    std::vector<I> row;
    for (std::int64_t i = r0; i < r1; ++i) {
      std::mt19937_64 g(seed ^ (0x9e3779b97f4a7c15ull * std::uint64_t(i + 1)));
      std::uniform_real_distribution<double> unit(0.0, 1.0);
      auto deg = std::int64_t(x_m / std::pow(1.0 - unit(g), 1.0 / alpha));
      deg = std::clamp(deg, s.min_degree, std::min(s.max_degree, s.cols));
      seen.clear();
      row.clear();
      while (std::int64_t(row.size()) < deg) {
        const double u = unit(g) * total;
        const auto r = std::int64_t(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
        const std::int64_t c = perm[std::size_t(std::min(r, s.cols - 1))];
        if (seen.insert(c).second) {
          row.push_back(I(c));
        }
      }
      std::sort(row.begin(), row.end());
      for (const I c : row) {
        out.col_idx.push_back(c);
        out.values.push_back(V(1.0 + std::floor(unit(g) * 10.0)));
      }
      out.degree.push_back(offset_t(row.size()));
    }
  };
  if (threads == 0) {
    threads = std::max(1u, std::thread::hardware_concurrency());
  }
  const std::int64_t per_chunk = 4096;
  const std::int64_t chunks = (rows + per_chunk - 1) / per_chunk;
  std::vector<chunk> parts(static_cast<std::size_t>(chunks));
  std::atomic<std::int64_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::min<std::int64_t>(threads, std::max<std::int64_t>(chunks, 1));
       ++t) {
    pool.emplace_back([&] {
      for (std::int64_t k = next++; k < chunks; k = next++) {
        generate(k * per_chunk, std::min(rows, (k + 1) * per_chunk), parts[std::size_t(k)]);
      }
    });
  }
  for (auto& t : pool) {
    t.join();
  }
  std::vector<offset_t> row_ptr{0};
  row_ptr.reserve(static_cast<std::size_t>(rows) + 1);
  std::size_t nnz = 0;
  for (const auto& p : parts) {
    nnz += p.col_idx.size();
  }
  std::vector<I> col_idx;
  std::vector<V> values;
  col_idx.reserve(nnz);
  values.reserve(nnz);
  for (auto& p : parts) {
    for (const offset_t d : p.degree) {
      row_ptr.push_back(row_ptr.back() + d);
    }
    col_idx.insert(col_idx.end(), p.col_idx.begin(), p.col_idx.end());
    values.insert(values.end(), p.values.begin(), p.values.end());
    p = chunk{};
  }
  return make_csr<V, I>(host_resources{}, rows, s.cols, row_ptr, col_idx, values,
                        csr_check::canonical);
}

}  // namespace spira::bench
