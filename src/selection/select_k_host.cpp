// select_k, host backend: per row, find the selected positions (a one-pass heap filter when few are
// selected; else short rows: std::nth_element on (key, position), long rows: a radix select of
// the k-th key, then one pass that keeps the keys below it and the first ties by position), then
// order them by index (unsorted output) or by (key, index) (sorted output). Rows run in parallel
// with OpenMP. The approximate max_iter mode runs the same bisection as the CUDA binary_search
// kernel, step for step, so both backends return the same bytes.
#include <spira/detail/type_lists.hpp>
#include "selection/dispatch.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <vector>

namespace spira::selection {

namespace {

/// Rows at least this long select by radix select on keys computed as they are read: a few
/// streaming passes over the values, where nth_element reads keys at random through positions.
constexpr std::int64_t radix_select_min_length = 1 << 15;

/// The m-th smallest of the keys key_at(0 .. n - 1) (1 <= m <= n) and how many keys are smaller:
/// a radix select from the most significant digit. Each pass counts the next digit of the keys
/// that share the digits chosen so far and keeps those in the bucket of the m-th (in `buf`; the
/// first pass reads key_at, the later ones `buf`, in place).
template <class Key, class KeyAt>
Key kth_smallest_key(KeyAt key_at, std::int64_t n, std::int64_t m, std::int64_t& smaller,
                     std::vector<Key>& buf)
{
  constexpr int bits = int(sizeof(Key) * 8);
  constexpr int digit = 11;  // 2048 counters: they stay in L1
  std::array<std::int64_t, std::size_t{1} << digit> count;
  Key prefix = 0;
  smaller = 0;
  bool first = true;
  for (int top = bits; top > 0; top -= digit) {
    const int width = std::min(digit, top);
    const int shift = top - width;
    const auto digit_of = [&](Key x) {
      return static_cast<std::size_t>((x >> shift) & ((std::uint64_t{1} << width) - 1));
    };
    // Runs f(key) for every candidate key of this pass.
    const auto each = [&](auto f) {
      if (first) {
        for (std::int64_t i = 0; i < n; ++i) {
          f(key_at(i));
        }
      } else {
        std::for_each(buf.begin(), buf.begin() + n, f);
      }
    };
    std::fill_n(count.begin(), std::size_t{1} << width, std::int64_t{0});
    each([&](Key x) { ++count[digit_of(x)]; });
    std::int64_t need = m - smaller;
    std::size_t b = 0;
    while (count[b] < need) {
      need -= count[b];
      smaller += count[b];
      ++b;
    }
    prefix = static_cast<Key>(prefix | (static_cast<Key>(b) << shift));
    if (shift == 0) {
      return prefix;
    }
    if (first) {
      buf.resize(count[b]);
    }
    std::int64_t kept = 0;  // in buf: writes never pass reads
    each([&](Key x) {
      if (digit_of(x) == b) {
        buf[kept++] = x;
      }
    });
    if (kept == 1) {  // the bucket holds one key: it is the m-th
      return buf[0];
    }
    first = false;
    n = kept;
  }
  return prefix;
}

/// Positions (increasing) of the m best (key, position) pairs of a long row (m < n).
template <class Key, class KeyAt>
void select_long(KeyAt key_at, std::int64_t n, std::int64_t m, std::vector<std::int64_t>& pos,
                 std::vector<Key>& buf)
{
  std::int64_t smaller = 0;
  const Key kth = kth_smallest_key(key_at, n, m, smaller, buf);
  pos.clear();
  pos.reserve(m);
  std::int64_t ties = m - smaller;  // keys equal to the m-th: the first ones by position
  for (std::int64_t i = 0; i < n && static_cast<std::int64_t>(pos.size()) < m; ++i) {
    const Key key = key_at(i);
    if (key < kth || (key == kth && ties-- > 0)) {
      pos.push_back(i);
    }
  }
}

/// At most this many selected per row take the one-pass filter of select_few (a heap of m pairs).
constexpr std::int64_t few_max_k = 128;

/// Whether select_few serves m of n: few selected, and rows at least 8 times longer.
constexpr bool few_selected(std::int64_t m, std::int64_t n)
{
  return m > 0 && m <= few_max_k && 8 * m <= n;
}

/// Positions of the m best (key, position) pairs of a row of n with m much smaller than n: one pass
/// over the keys key_at(0 .. n - 1), as they are computed, with the m best so far in a heap whose
/// top is the worst of them; a key enters only when it is smaller than the top's (a later
/// position loses a tie), so most keys cost one comparison (k-NN rows: 15 of thousands of
/// distances), where nth_element moves every position around and a radix select reads the keys
/// several times.
template <class Key, class KeyAt>
void select_few(KeyAt key_at, std::int64_t n, std::int64_t m, std::vector<std::int64_t>& pos)
{
  // (key, position) order; as the heap's order it puts the worst of the m on top.
  const auto precedes = [&](std::int64_t a, std::int64_t b) {
    const Key ka = key_at(a);
    const Key kb = key_at(b);
    return ka < kb || (ka == kb && a < b);
  };
  pos.resize(static_cast<std::size_t>(m));
  std::iota(pos.begin(), pos.end(), std::int64_t{0});
  std::make_heap(pos.begin(), pos.end(), precedes);
  Key top = key_at(pos.front());
  for (std::int64_t i = m; i < n; ++i) {
    const Key key = key_at(i);
    if (key < top) {
      std::pop_heap(pos.begin(), pos.end(), precedes);
      pos.back() = i;
      std::push_heap(pos.begin(), pos.end(), precedes);
      top = key_at(pos.front());
    }
  }
}

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
    std::vector<key_type> buf;
    std::vector<std::int64_t> pos;
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t r = 0; r < src.rows; ++r) {
      const std::int64_t first = src.begin(r);
      const std::int64_t n = src.length(r);
      const T* row = src.values + first;
      const auto key_at = [&](std::int64_t i) { return traits::to_key(row[i], p.largest); };
      if (p.max_iter == 0 && few_selected(p.k, n)) {
        select_few<key_type>(key_at, n, p.k, pos);
      } else if (p.max_iter == 0 && n >= radix_select_min_length && p.k < n) {
        select_long(key_at, n, p.k, pos, buf);
      } else {
        keys.resize(n);
        for (std::int64_t i = 0; i < n; ++i) {
          keys[i] = key_at(i);
        }
        if (p.max_iter > 0) {
          select_bisection(keys, p.k, p.max_iter, pos);
        } else {
          select_exact(keys, std::min(p.k, n), pos);
        }
      }
      if (p.sorted) {
        std::sort(pos.begin(), pos.end(), [&](std::int64_t a, std::int64_t b) {
          const key_type ka = key_at(a);
          const key_type kb = key_at(b);
          return ka < kb || (ka == kb && a < b);
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

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> compact_rows(const host_resources& res, csr_view<ValueT, IndexT> rows,
                                        const dense_matrix<ValueT>& values,
                                        const dense_matrix<IndexT>& indices, std::int64_t k)
{
  std::int64_t nnz = 0;
  for (std::int64_t r = 0; r < rows.rows; ++r) {
    nnz += std::min(k, rows.degree(r));
  }
  csr_matrix<ValueT, IndexT> out(res, rows.rows, rows.cols, nnz);
  out.row_ptr()[0] = 0;
  for (std::int64_t r = 0; r < rows.rows; ++r) {
    const std::int64_t m = std::min(k, rows.degree(r));
    out.row_ptr()[r + 1] = out.row_ptr()[r] + m;
    std::copy_n(values.data() + r * k, m, out.values() + out.row_ptr()[r]);
    std::copy_n(indices.data() + r * k, m, out.col_idx() + out.row_ptr()[r]);
  }
  return out;
}

#define SPIRA_SELECT_HOST(T, IndexT)                                                           \
  template void select_rows(const host_resources&, row_source<T, IndexT>, row_sink<T, IndexT>, \
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
