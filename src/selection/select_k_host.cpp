// select_k, host backend: per row, rank (key, position) pairs with std::nth_element, then order the
// selected positions by index (unsorted output) or by (key, index) (sorted output). Rows run in
// parallel with OpenMP. The approximate max_iter mode runs the same bisection as the CUDA
// binary_search kernel, step for step, so both backends return the same bytes.
#include <spira/detail/type_lists.hpp>
#include "selection/dispatch.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace spira::selection {

namespace {

/// Positions of the selected elements of one row, exact: the k best (key, position) pairs.
template <class Key>
void select_exact(const std::vector<Key>& keys, std::int64_t m, std::vector<std::int64_t>& pos)
{
  pos.resize(keys.size());
  std::iota(pos.begin(), pos.end(), std::int64_t{0});
  const auto better = [&](std::int64_t a, std::int64_t b) {
    return keys[a] < keys[b] || (keys[a] == keys[b] && a < b);
  };
  if (m < static_cast<std::int64_t>(pos.size())) {
    std::nth_element(pos.begin(), pos.begin() + m, pos.end(), better);
    pos.resize(m);
  }
}

/// Positions selected by the bisection on the key range stopped after max_iter steps (the CUDA
/// binary_search kernel's procedure): every key below `lo`, then keys in [lo, hi] by position.
template <class Key>
void select_bisection(const std::vector<Key>& keys, std::int64_t k, int max_iter,
                      std::vector<std::int64_t>& pos)
{
  const auto n = static_cast<std::int64_t>(keys.size());
  pos.clear();
  Key lo = 0;
  Key hi = ~Key{0};
  std::int64_t below = 0;  // elements with key < lo
  std::int64_t need = n;   // how many to take from [lo, hi]
  if (n > k) {
    lo = *std::min_element(keys.begin(), keys.end());
    hi = *std::max_element(keys.begin(), keys.end());
    for (int it = 0; lo < hi && it < max_iter; ++it) {
      const Key mid = bisection_mid(lo, hi);
      const auto c = std::count_if(keys.begin(), keys.end(), [&](Key x) { return x <= mid; });
      if (bisection_step(lo, hi, below, mid, std::int64_t(c), k)) {
        break;
      }
    }
    need = k - below;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    if (keys[i] < lo) {
      pos.push_back(i);
    } else if (keys[i] <= hi && need > 0) {
      pos.push_back(i);
      --need;
    }
  }
}

}  // namespace

template <class T, class IndexT>
void select_rows(const host_resources& res, row_source<T, IndexT> src, row_sink<T, IndexT> dst,
                 const problem& p)
{
  using traits = key_traits<T>;
  using key_type = typename traits::key_type;
  const T pad = traits::padding(p.largest);
#pragma omp parallel num_threads(res.num_threads())
  {
    std::vector<key_type> keys;
    std::vector<std::int64_t> pos;
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t r = 0; r < src.rows; ++r) {
      const std::int64_t first = src.begin(r);
      const std::int64_t n = src.length(r);
      const T* row = src.values + first;
      keys.resize(n);
      for (std::int64_t i = 0; i < n; ++i) {
        keys[i] = traits::to_key(row[i], p.largest);
      }
      if (p.max_iter > 0) {
        select_bisection(keys, p.k, p.max_iter, pos);
      } else {
        select_exact(keys, std::min(p.k, n), pos);
      }
      if (p.sorted) {
        std::sort(pos.begin(), pos.end(), [&](std::int64_t a, std::int64_t b) {
          return keys[a] < keys[b] || (keys[a] == keys[b] && a < b);
        });
      } else {
        std::sort(pos.begin(), pos.end());
      }
      T* out_v = dst.values + r * dst.ld_values;
      IndexT* out_i = dst.indices + r * dst.ld_indices;
      const auto m = static_cast<std::int64_t>(pos.size());
      for (std::int64_t j = 0; j < m; ++j) {
        out_v[j] = row[pos[j]];
        out_i[j] = src.index_at(first, pos[j]);
      }
      for (std::int64_t j = m; j < p.k; ++j) {
        out_v[j] = pad;
        out_i[j] = IndexT{-1};
      }
    }
  }
}

std::int64_t max_row_length(const host_resources&, const offset_t* row_ptr, std::int64_t rows)
{
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t len = row_ptr[r + 1] - row_ptr[r];
    detail::expects(len >= 0, "select_k: rows.row_ptr decreases at row ", r, " (", row_ptr[r],
                    " > ", row_ptr[r + 1], ")");
    longest = std::max(longest, len);
  }
  return longest;
}

template <class V, class I>
csr_matrix<V, I> compact_rows(const host_resources& res, csr_view<V, I> rows,
                              const dense_matrix<V>& values, const dense_matrix<I>& indices,
                              std::int64_t k)
{
  std::int64_t nnz = 0;
  for (std::int64_t r = 0; r < rows.rows; ++r) {
    nnz += std::min(k, rows.degree(r));
  }
  csr_matrix<V, I> out(res, rows.rows, rows.cols, nnz);
  out.row_ptr()[0] = 0;
  for (std::int64_t r = 0; r < rows.rows; ++r) {
    const std::int64_t m = std::min(k, rows.degree(r));
    out.row_ptr()[r + 1] = out.row_ptr()[r] + m;
    std::copy_n(values.data() + r * k, m, out.values() + out.row_ptr()[r]);
    std::copy_n(indices.data() + r * k, m, out.col_idx() + out.row_ptr()[r]);
  }
  return out;
}

#define SPIRA_SELECT_HOST(T, I)                                                      \
  template void select_rows(const host_resources&, row_source<T, I>, row_sink<T, I>, \
                            const problem&);
SPIRA_FOR_EACH_SELECT_VALUE_INDEX(SPIRA_SELECT_HOST)
#undef SPIRA_SELECT_HOST
template csr_matrix<float, std::int32_t> compact_rows(const host_resources&,
                                                      csr_view<float, std::int32_t>,
                                                      const dense_matrix<float>&,
                                                      const dense_matrix<std::int32_t>&,
                                                      std::int64_t);
template csr_matrix<float, std::int64_t> compact_rows(const host_resources&,
                                                      csr_view<float, std::int64_t>,
                                                      const dense_matrix<float>&,
                                                      const dense_matrix<std::int64_t>&,
                                                      std::int64_t);
template csr_matrix<double, std::int32_t> compact_rows(const host_resources&,
                                                       csr_view<double, std::int32_t>,
                                                       const dense_matrix<double>&,
                                                       const dense_matrix<std::int32_t>&,
                                                       std::int64_t);
template csr_matrix<double, std::int64_t> compact_rows(const host_resources&,
                                                       csr_view<double, std::int64_t>,
                                                       const dense_matrix<double>&,
                                                       const dense_matrix<std::int64_t>&,
                                                       std::int64_t);

}  // namespace spira::selection
