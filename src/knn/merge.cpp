// merge_knn on the host: the k-NN lists of disjoint index blocks merged into one exact k-NN list
// per query row, with the running merge of the tiled k-NN graph (detail::knn_merge_sorted).
#include "merge.hpp"

#include <spira/detail/knn_driver.hpp>
#include <spira/knn.hpp>

#include <selection/keys.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace spira {

namespace detail {

memory_space check_merge_knn_parts(std::span<const knn_result_view> parts, std::int64_t k)
{
  expects(k >= 1, "merge_knn: k = ", k, " must be >= 1");
  expects(!parts.empty(), "merge_knn: no parts to merge (parts is empty)");
  const std::int64_t n_q = parts[0].indices.rows;
  const memory_space space = parts[0].indices.space;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const dense_view<const std::int64_t>& ix = parts[p].indices;
    const dense_view<const float>& d = parts[p].distances;
    expects<dimension_mismatch>(ix.rows == d.rows && ix.cols == d.cols, "merge_knn: part ", p,
                                " has indices of ", ix.rows, " x ", ix.cols, " but distances of ",
                                d.rows, " x ", d.cols);
    expects<dimension_mismatch>(ix.rows == n_q, "merge_knn: part ", p, " has ", ix.rows,
                                " rows but part 0 has ", n_q,
                                " (every part lists the same queries)");
    expects(ix.rows >= 0 && ix.cols >= 0, "merge_knn: part ", p, " has a negative extent ", ix.rows,
            " x ", ix.cols);
    expects(ix.ld >= ix.cols && d.ld >= d.cols, "merge_knn: part ", p,
            " has a leading dimension below its width ", ix.cols, " (indices ld = ", ix.ld,
            ", distances ld = ", d.ld, ")");
    const bool empty = ix.rows == 0 || ix.cols == 0;
    expects(empty || (ix.data != nullptr && d.data != nullptr), "merge_knn: part ", p,
            " has null indices or distances for ", ix.rows, " x ", ix.cols, " entries");
    expects(ix.space == space && d.space == space, "merge_knn: part ", p, " has indices in ",
            to_string(ix.space), " memory and distances in ", to_string(d.space),
            " memory, part 0 in ", to_string(space), " memory (all parts must be in one space)");
  }
  return space;
}

namespace {

/// The first failure found while merging (the smallest row, so that the message does not depend
/// on the number of threads).
struct merge_failure {
  std::int64_t row = std::numeric_limits<std::int64_t>::max();
  std::string message;
};

/// Per-thread scratch: two running lists (merged back and forth) and the row's (index, part) pairs.
struct merge_scratch {
  std::vector<float> values[2];
  std::vector<std::int64_t> indices[2];
  std::vector<std::pair<std::int64_t, std::size_t>> seen;
  std::vector<std::int64_t> real;  ///< real (non-padding) entries of each part in this row
};

/// Checks row r of every part; returns an empty string when it is well formed, else the message,
/// which names the row `named` (r, or the caller's row number when the parts hold a copy of it).
std::string check_row(std::span<const knn_result_view> parts, std::int64_t r, std::int64_t named,
                      bool largest, merge_scratch& s)
{
  s.seen.clear();
  s.real.assign(parts.size(), 0);
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const std::int64_t* ix = parts[p].indices.row(r);
    const std::int64_t width = parts[p].indices.cols;
    std::int64_t& n = s.real[p];
    for (std::int64_t j = 0; j < width; ++j) {
      if (ix[j] < -1) {
        return concat("merge_knn: part ", p, ", row ", named, ", column ", j, ": index ", ix[j],
                      " is invalid (indices are >= 0, or -1 for padding)");
      }
      if (ix[j] == -1) {
        continue;
      }
      if (n != j) {
        return concat("merge_knn: part ", p, ", row ", named, ": index ", ix[j], " at column ", j,
                      " follows padding (index -1) at column ", n,
                      "; padding must come after the real entries");
      }
      ++n;
      s.seen.emplace_back(ix[j], p);
    }
  }
  std::sort(s.seen.begin(), s.seen.end());
  for (std::size_t e = 1; e < s.seen.size(); ++e) {
    if (s.seen[e].first == s.seen[e - 1].first) {
      const std::size_t p0 = s.seen[e - 1].second;
      const std::size_t p1 = s.seen[e].second;
      return p0 == p1
                 ? concat("merge_knn: row ", named, " lists index ", s.seen[e].first,
                          " twice in part ", p0, "; the index blocks must be disjoint")
                 : concat("merge_knn: row ", named, " lists index ", s.seen[e].first, " in parts ",
                          p0, " and ", p1, "; the index blocks must be disjoint");
    }
  }
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const std::int64_t* ix = parts[p].indices.row(r);
    const float* d = parts[p].distances.row(r);
    for (std::int64_t j = 1; j < s.real[p]; ++j) {
      if (!knn_better(d[j - 1], ix[j - 1], d[j], ix[j], largest)) {
        return concat("merge_knn: part ", p, ", row ", named, " is not sorted best first (",
                      largest ? "largest" : "smallest", " distance, then smaller index): column ",
                      j - 1, " holds index ", ix[j - 1], " at distance ", d[j - 1], ", column ", j,
                      " index ", ix[j], " at distance ", d[j]);
      }
    }
  }
  return {};
}

/// s.real[p] = the real entries of row r of every part (those before its first padding), for
/// parts whose rows are trusted; returns no message.
std::string count_real(std::span<const knn_result_view> parts, std::int64_t r, merge_scratch& s)
{
  s.real.assign(parts.size(), 0);
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const std::int64_t* ix = parts[p].indices.row(r);
    const std::int64_t width = parts[p].indices.cols;
    std::int64_t n = 0;
    while (n < width && ix[n] != -1) {
      ++n;
    }
    s.real[p] = n;
  }
  return {};
}

}  // namespace

std::string merge_knn_row_error(std::span<const knn_result_view> parts, std::int64_t r,
                                std::int64_t named, bool largest)
{
  merge_scratch s;
  return check_row(parts, r, named, largest, s);
}

knn_result merge_knn_host(std::span<const knn_result_view> parts, std::int64_t k, bool largest,
                          int threads, bool check_rows)
{
  const host_resources res{.threads = threads};
  const std::int64_t n_q = parts[0].indices.rows;
  knn_result out{dense_matrix<std::int64_t>(res, n_q, k), dense_matrix<float>(res, n_q, k)};
  const dense_view<std::int64_t> oi = out.indices.view();
  const dense_view<float> od = out.distances.view();
  const float padding = selection::key_traits<float>::padding(largest);
  merge_failure failure;
#if defined(_OPENMP)
#pragma omp parallel num_threads(res.num_threads())
#endif
  {
    merge_scratch s;
    for (int b = 0; b < 2; ++b) {
      s.values[b].resize(static_cast<std::size_t>(k));
      s.indices[b].resize(static_cast<std::size_t>(k));
    }
#if defined(_OPENMP)
#pragma omp for schedule(static)
#endif
    for (std::int64_t r = 0; r < n_q; ++r) {
      std::string bad = check_rows ? check_row(parts, r, r, largest, s) : count_real(parts, r, s);
      if (!bad.empty()) {
#if defined(_OPENMP)
#pragma omp critical(spira_merge_knn_failure)
#endif
        if (r < failure.row) {
          failure = {r, std::move(bad)};
        }
        continue;
      }
      // Fold the parts into the running list: cur holds `have` entries, the merge writes the other.
      int cur = 0;
      std::int64_t have = 0;
      for (std::size_t p = 0; p < parts.size(); ++p) {
        if (s.real[p] == 0) {
          continue;
        }
        const knn_list<float> running{s.values[cur].data(), s.indices[cur].data(), have};
        const knn_list<float> part{parts[p].distances.row(r), parts[p].indices.row(r), s.real[p]};
        have = knn_merge_sorted(running, part, k, largest, std::int64_t{-1},
                                s.values[1 - cur].data(), s.indices[1 - cur].data());
        cur = 1 - cur;
      }
      std::copy_n(s.indices[cur].begin(), have, oi.row(r));
      std::copy_n(s.values[cur].begin(), have, od.row(r));
      std::fill(oi.row(r) + have, oi.row(r) + k, std::int64_t{-1});
      std::fill(od.row(r) + have, od.row(r) + k, padding);
    }
  }
  if (failure.row < n_q) {
    throw invalid_argument(failure.message);
  }
  return out;
}

}  // namespace detail

knn_result merge_knn(const host_resources& res, std::span<const knn_result_view> parts,
                     std::int64_t k, select_order order, merge_check check)
{
  const memory_space space = detail::check_merge_knn_parts(parts, k);
  detail::expects(space == memory_space::host,
                  "merge_knn: the parts are in device memory; the host backend merges parts in "
                  "host memory (use cuda_resources for device parts)");
  return detail::merge_knn_host(parts, k, order == select_order::largest, res.num_threads(),
                                check == merge_check::rows);
}

}  // namespace spira
