// What the GraphBLAS benchmarks share: the graph of a matrix's pattern, and timing two tools
// alternately (each call timed on the wall clock, after one warm-up call of each).
#pragma once

#include <spira/matrix.hpp>
#include <spira/resources.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace spira::bench {

/// The pattern of A + Aᵀ without the diagonal (square A), values 1, as a canonical CSR: with
/// `lower`, only its strictly lower triangle, else the whole undirected graph.
template <class V, class I>
spira::csr_matrix<V, I> graph_pattern(const spira::csr_matrix<V, I>& a, bool lower)
{
  std::vector<std::pair<I, I>> e;
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    for (spira::offset_t p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p) {
      const I j = a.col_idx()[p];
      if (j != I(i)) {
        e.emplace_back(std::max(I(i), j), std::min(I(i), j));
        if (!lower) {
          e.emplace_back(std::min(I(i), j), std::max(I(i), j));
        }
      }
    }
  }
  std::sort(e.begin(), e.end());
  e.erase(std::unique(e.begin(), e.end()), e.end());
  spira::csr_matrix<V, I> l(spira::host_resources{}, a.rows(), a.cols(), std::int64_t(e.size()));
  std::fill_n(l.row_ptr(), a.rows() + 1, spira::offset_t{0});
  for (std::size_t p = 0; p < e.size(); ++p) {
    ++l.row_ptr()[e[p].first + 1];
    l.col_idx()[p] = e[p].second;
    l.values()[p] = V(1);
  }
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    l.row_ptr()[i + 1] += l.row_ptr()[i];
  }
  return l;
}

/// The strictly lower triangle of the pattern of A + Aᵀ (square A), values 1.
template <class V, class I>
spira::csr_matrix<V, I> lower_pattern(const spira::csr_matrix<V, I>& a)
{
  return graph_pattern(a, true);
}

struct timing {
  std::vector<double> mine_ms, theirs_ms;
};

inline double median(std::vector<double> t)
{
  std::sort(t.begin(), t.end());
  return t.empty() ? 0 : t[t.size() / 2];
}

/// Times mine() and theirs() alternately, after one warm-up call of each: `repeats` times each,
/// a time being the mean of `batch` consecutive calls (for calls of tens of microseconds, where
/// one call's time is mostly the machine's jitter).
inline timing alternate(int repeats, const std::function<void()>& mine,
                        const std::function<void()>& theirs, int batch = 1)
{
  timing t;
  mine();
  theirs();
  const auto ms = [batch](const std::function<void()>& fn) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int b = 0; b < batch; ++b) {
      fn();
    }
    return 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
           batch;
  };
  for (int r = 0; r < repeats; ++r) {
    t.mine_ms.push_back(ms(mine));
    t.theirs_ms.push_back(ms(theirs));
  }
  return t;
}

}  // namespace spira::bench
