// spira internals: the block-wide selection of the fused k-NN kernel (spira/cuda/knn.cuh): its
// arguments, the list and candidate buffer in shared memory, their bitonic sort, and the ranking of
// one pair. The kernel is in knn_fused_kernel.cuh, the rows that go by their products in
// knn_fused_by_products.cuh, the pairs the accuracy guard did not trust in knn_deferred.cuh.
#pragma once

#include <spira/cuda/detail/launch_progress.cuh>
#include <spira/cuda/pairwise.cuh>
#include <spira/detail/knn_driver.hpp>
#include <spira/detail/knn_policy.hpp>
#include <spira/knn.hpp>
#include <spira/selection/keys.hpp>

#include <bit>
#include <cstdint>

namespace spira {

/// Largest k the fused kernel serves (its sort buffer holds k + 2 x threads pairs, at most 2,048).
inline constexpr std::int64_t knn_fused_max_k = 1024;

namespace detail {

/// Pairs the fused kernel sorts at once for a given k: list + a buffer of at least two chunks.
constexpr int knn_fused_sort_size(std::int64_t k)
{
  return int(std::bit_ceil(std::uint64_t(k) + 2 * cuda_pairwise_policy::intersection_threads));
}

/// A pair (query row i, index row j) whose fast value the accuracy guard did not trust.
struct knn_deferred_pair {
  std::int64_t i, j;
};

/// The pairs of one launch of knn_fused_kernel that the accuracy guard did not trust (guarded
/// distances only; nullptr pointers otherwise). The kernel leaves them out of its lists and queues
/// them (the first `capacity` in arrival order; *count counts them all) with a count per query
/// row, and marks the rows that lost a pair to a full queue; knn_deferred_queue::resolve then
/// evaluates them directly and merges them into the rows' lists. The direct evaluation stays out
/// of the fused kernel, whose registers it would raise by half.
struct knn_deferred {
  unsigned long long* count = nullptr;
  std::int64_t capacity = 0;
  knn_deferred_pair* pairs = nullptr;
  offset_t* row_count = nullptr;  ///< per query row of the launch (i - row_begin), plus one slot
  unsigned char* lost = nullptr;  ///< per query row of the launch: 1 when a pair did not fit
};

/// Rows of a launch counted by the way knn_fused_kernel ranked them (device counters).
struct knn_fused_paths {
  unsigned long long by_products;    ///< by their products (knn_fused_by_products.cuh)
  unsigned long long walk_skipping;  ///< by a walk over the index that skips disjoint pairs
  unsigned long long walk;           ///< by a walk that ranks every pair
  unsigned long long zero_rows;      ///< all-zero query rows, from the index's flags alone
  unsigned long long deferred;       ///< pairs queued for the direct evaluation (knn_defer)
};

/// Which way knn_fused_kernel takes a row whose disjoint pairs may be skipped, and counters of the
/// ways taken. The defaults are the policy's; tests and profiles set others (a negative gate
/// closes it, 0 opens it wherever the row allows).
struct knn_fused_gates {
  /// By its products when the index has at least this many rows per product of the row (and the
  /// products fit the accumulator tile's memory).
  std::int64_t by_products = cuda_pairwise_policy::knn_walk_per_product;
  /// Else a walk that skips disjoint pairs when the index has at least this many rows per product.
  std::int64_t walk_skipping = cuda_pairwise_policy::knn_skip_per_product;
  knn_fused_paths* paths = nullptr;  ///< device; nullptr: not counted
  /// Pairs of equal rows take 0 where D declares zero_self_distance (knn_equal_rows.cuh); false:
  /// they are queued like every other pair the guard did not trust.
  bool equal_rows = true;
  /// An all-zero query row is ranked from the index's all-zero flags where D declares
  /// zero_rows_distance (knn_zero_query_row); false: it walks like any other row.
  bool zero_rows = true;

  /// Whether a row with `products` products over an index of `rows` rows passes gate `rows_per`.
  SPIRA_HD static bool passes(std::int64_t rows_per, std::int64_t products, std::int64_t rows)
  {
    return rows_per == 0 || (rows_per > 0 && products <= rows / rows_per);
  }
};

struct knn_fused_select {
  int k;
  int sort_size;      ///< pairs in the shared sort buffer (a power of two)
  bool largest;       ///< similarities keep the largest values
  bool exclude_self;  ///< skip index row i for query row i
  void* self_values;  ///< with exclude_self: ValueT[rows_a], receives d(i, i) (nullptr: not wanted)
  unsigned char* self_untrusted;  ///< with self_values: 1 where d(i, i) must be evaluated directly
  std::size_t acc_bytes;          ///< bytes of the accumulator tile (a multiple of 16)
  std::int64_t row_begin, row_end;  ///< the query rows of this launch
  const unsigned char* only;        ///< per row of the launch: 0 = skip it (nullptr: run all)
  void* out_values;                 ///< rows_a x k, ValueT
  std::int64_t* out_indices;
  knn_deferred deferred;
  launch_progress_state* watch;  ///< rows counted and a stop flag read (nullptr: neither)
  /// For a D with a disjoint value (accuracy_traits::disjoint): device flag, nonzero when some
  /// index row fails D::disjoint_index (then no pair is skipped); nullptr: none is skipped.
  const unsigned* disjoint_blocked;
  /// For a D that declares zero_rows_distance: 1 for each query row (zero_queries) and index row
  /// (zero_index) that stores no nonzero value; nullptr: not known (their pairs are evaluated).
  const unsigned char* zero_queries;
  const unsigned char* zero_index;
  /// For a D that declares zero_self_distance: the class of each query row and index row (the
  /// smallest index row equal to it, -1 none; knn_equal_rows.cuh); nullptr: not known.
  const std::int64_t* equal_queries;
  const std::int64_t* equal_index;
  knn_fused_gates gates;
};

#if defined(__CUDACC__)

/// The bitonic sorting network over n slots (a power of two), with the whole block: for each
/// comparator, exchange(first, second) swaps the two slots when `second` should come first. Ends
/// synchronised.
template <class Exchange>
__device__ void knn_bitonic_network(int n, Exchange exchange)
{
  for (int size = 2; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < n / 2; t += blockDim.x) {
        const int lo = 2 * t - (t & (stride - 1));
        const int hi = lo + stride;
        const bool ascending = (lo & size) == 0;
        exchange(ascending ? lo : hi, ascending ? hi : lo);
      }
      __syncthreads();
    }
  }
}

/// Sorts the pairs (vals[t], idx[t]), t < n (a power of two), by knn_better with the whole block;
/// ends synchronised.
template <class ValueT>
__device__ void knn_bitonic_sort(ValueT* vals, std::int64_t* idx, int n, bool largest)
{
  knn_bitonic_network(n, [&](int a, int b) {
    if (knn_better(vals[b], idx[b], vals[a], idx[a], largest)) {
      const ValueT v = vals[a];
      vals[a] = vals[b];
      vals[b] = v;
      const std::int64_t j = idx[a];
      idx[a] = idx[b];
      idx[b] = j;
    }
  });
}

/// A pair that sorts after every real one: a NaN value (the worst key) with the largest index.
template <class ValueT>
__device__ inline ValueT knn_sentinel_value()
{
  if constexpr (sizeof(ValueT) == 4) {
    return __int_as_float(0x7fc00000);
  } else {
    return __longlong_as_double(0x7ff8000000000000ll);
  }
}

/// Merges the `count` candidates [k, k + count) into the sorted list [0, have): afterwards the list
/// holds the best min(k, have + count) pairs, sorted (returned), and the buffer is empty
/// (*buffer_count = 0). Only the smallest power of two that holds list and candidates is sorted
/// (a row's last few candidates cost a sort of 32 pairs, not of the whole buffer). Whole block;
/// synchronised on entry (the caller) and on exit.
template <class ValueT>
__device__ int knn_flush(ValueT* vals, std::int64_t* idx, const knn_fused_select& s, int have,
                         int count, int* buffer_count)
{
  int n = 32;
  while (n < s.k + count) {
    n <<= 1;
  }
  n = n < s.sort_size ? n : s.sort_size;
  for (int t = threadIdx.x; t < n; t += blockDim.x) {
    if ((t >= have && t < s.k) || t >= s.k + count) {
      vals[t] = knn_sentinel_value<ValueT>();
      idx[t] = INT64_MAX;
    }
  }
  if (threadIdx.x == 0) {
    *buffer_count = 0;
  }
  __syncthreads();
  knn_bitonic_sort(vals, idx, n, s.largest);
  return have + count < s.k ? have + count : s.k;
}

/// Queues pair (i, j) for knn_resolve_deferred (see knn_deferred).
__device__ inline void knn_defer(const knn_fused_select& s, std::int64_t i, std::int64_t j)
{
  if (s.gates.paths != nullptr) {
    atomicAdd(&s.gates.paths->deferred, 1ull);
  }
  atomicAdd(reinterpret_cast<unsigned long long*>(&s.deferred.row_count[i - s.row_begin]), 1ull);
  const unsigned long long slot = atomicAdd(s.deferred.count, 1ull);
  if (slot < (unsigned long long)s.deferred.capacity) {
    s.deferred.pairs[slot] = {i, j};
  } else {
    s.deferred.lost[i - s.row_begin] = 1;
  }
}

/// Appends the candidate (v, j) to the buffer behind the list (slot counter `slots`).
template <class ValueT>
__device__ inline void knn_append(ValueT* vals, std::int64_t* idx, const knn_fused_select& s,
                                  int* slots, ValueT v, std::int64_t j)
{
  const int pos = atomicAdd(slots, 1);
  vals[s.k + pos] = v;
  idx[s.k + pos] = j;
}

/// Ends a round of at most one candidate per thread (`appended`: this thread's was): the barrier
/// counts them into `count` (identical in every thread), and the buffer is merged into the list
/// (knn_flush) when another round could overflow it, and when it could fill a list not yet full
/// (until then there is no bar). Whole block.
template <class ValueT>
__device__ inline void knn_end_round(ValueT* vals, std::int64_t* idx, const knn_fused_select& s,
                                     int& have, int& count, int* slots, bool appended)
{
  count += __syncthreads_count(appended);
  if (count > s.sort_size - s.k - int(blockDim.x) || (have < s.k && have + count >= s.k)) {
    have = knn_flush(vals, idx, s, have, count, slots);
    count = 0;
  }
}

/// Writes query row i's list, `have` real pairs padded to k (index -1 and the padding value), to
/// the output. Whole block.
template <class ValueT>
__device__ void knn_write_row(const ValueT* vals, const std::int64_t* idx,
                              const knn_fused_select& s, std::int64_t i, int have)
{
  using keys = selection::key_traits<ValueT>;
  ValueT* out_v = static_cast<ValueT*>(s.out_values);
  for (int r = threadIdx.x; r < s.k; r += blockDim.x) {
    const bool real = r < have;
    out_v[i * s.k + r] = real ? vals[r] : keys::padding(s.largest);
    s.out_indices[i * s.k + r] = real ? idx[r] : -1;
  }
}

/// Ends query row i: merges the candidates still buffered, writes the list to the output. Whole
/// block; ends synchronised.
template <class ValueT>
__device__ inline void knn_finish_row(ValueT* vals, std::int64_t* idx, const knn_fused_select& s,
                                      std::int64_t i, int have, int count, int* slots)
{
  if (count > 0) {
    have = knn_flush(vals, idx, s, have, count, slots);
  }
  knn_write_row(vals, idx, s, i, have);
  __syncthreads();
}

/// Merges `count` candidates at (vals, idx)[k, k + count) into the sorted list (vals, idx)[0, have)
/// and returns the new length: the best k of both in the order of knn_bitonic_sort, as knn_flush
/// gives them, without the sort. Each thread places one pair by its rank (how many pairs precede
/// it). Needs have + count <= blockDim.x; whole block, ends synchronised.
template <class ValueT>
__device__ int knn_merge_by_rank(ValueT* vals, std::int64_t* idx, const knn_fused_select& s,
                                 int have, int count)
{
  const int t = int(threadIdx.x);
  int rank = s.k;
  ValueT v{};
  std::int64_t j = -1;
  if (t < have + count) {
    const int at = t < have ? t : s.k + (t - have);
    v = vals[at];
    j = idx[at];
    const auto precedes = [&](int u) { return knn_better(vals[u], idx[u], v, j, s.largest); };
    rank = 0;
    if (t < have) {
      rank = t;  // the list is sorted
    } else {
      for (int u = 0; u < have; ++u) {
        rank += precedes(u) ? 1 : 0;
      }
    }
    for (int c = 0; c < count && rank < s.k; ++c) {  // past k the pair is not kept
      rank += precedes(s.k + c) ? 1 : 0;
    }
  }
  __syncthreads();
  if (rank < s.k) {
    vals[rank] = v;
    idx[rank] = j;
  }
  __syncthreads();
  return have + count < s.k ? have + count : s.k;
}

/// Whether a candidate (v, j) beats the list's k-th pair (knn_better), or the list is not full.
template <class ValueT>
__device__ inline bool knn_beats_list(const ValueT* vals, const std::int64_t* idx,
                                      const knn_fused_select& s, int have, ValueT v, std::int64_t j)
{
  return have < s.k || knn_better(v, j, vals[s.k - 1], idx[s.k - 1], s.largest);
}

/// The value D's declarations (spira/accuracy.hpp) give pair (i, j), whose fast value the guard
/// did not trust: 0 for rows of one class (s.equal_queries, zero_self_distance); where the
/// accumulator `a` is ⊕'s identity and every index row passes D::disjoint_index, for an all-zero
/// query row (s.zero_queries) the one zero_rows_distance gives, else D::disjoint_distance where the
/// query row passes D::disjoint_query. Returns whether they give one (then in v).
template <class D, class ValueT, class IndexT, int N>
__device__ inline bool knn_declared_value(const intersection_args<D, ValueT, IndexT>& p,
                                          const knn_fused_select& s, std::int64_t i, std::int64_t j,
                                          const terms<intersection_accumulator_t<D, ValueT>, N>& a,
                                          ValueT& v)
{
  using traits = accuracy_traits<D, double>;
  if constexpr (traits::zero_self) {
    if (s.equal_queries != nullptr) {
      const std::int64_t c = s.equal_queries[i];
      if (c >= 0 && c == s.equal_index[j]) {
        v = ValueT(0);
        return true;
      }
    }
  }
  if constexpr (traits::disjoint) {
    using A = intersection_accumulator_t<D, ValueT>;
    bool identity = s.disjoint_blocked != nullptr && *s.disjoint_blocked == 0u;
#pragma unroll
    for (int t = 0; t < N; ++t) {
      identity = identity && a[t] == D::add_monoid::template identity<A>();
    }
    if (!identity) {
      return false;
    }
    if constexpr (traits::zero_rows) {
      if (s.zero_queries != nullptr && s.zero_queries[i] != 0) {
        v = ValueT(float(s.zero_index[j] != 0 ? D::zero_rows_distance : D::disjoint_distance));
        return true;
      }
    }
    if (p.d.template disjoint_query<double>(p.norms_a[i], accumulator_bounds_of<A>())) {
      v = ValueT(float(D::disjoint_distance));
      return true;
    }
  }
  return false;
}

/// Ranks pair (i, j) whose accumulator is `a`: its value (rounded to the float the graph returns,
/// so the tie rule holds on what the user sees) is appended to the candidate buffer when it beats
/// the list (knn_beats_list). Where the guard does not trust the fast value, D's declarations may
/// give the value (knn_declared_value); otherwise the pair is queued (knn_defer) and evaluated
/// directly after the kernel. The pair (i, i) of a self query is not a candidate, but its value is
/// stored where it is wanted (s.self_values; untrusted ones are evaluated directly after the
/// kernel, knn_self_direct_kernel). Returns whether it was appended. One thread.
template <class D, class ValueT, class IndexT, int N>
__device__ inline bool knn_rank_pair(const intersection_args<D, ValueT, IndexT>& p,
                                     const knn_fused_select& s, std::int64_t i, std::int64_t j,
                                     const terms<intersection_accumulator_t<D, ValueT>, N>& a,
                                     ValueT* vals, std::int64_t* idx, int* slots, int have)
{
  const bool self = s.exclude_self && j == i;
  if (self && s.self_values == nullptr) {
    return false;
  }
  bool trusted;
  ValueT v = ValueT(float(intersection_fast_value(p, i, j, a, trusted)));
  if (self) {
    static_cast<ValueT*>(s.self_values)[i] = v;
    if (!trusted) {
      s.self_untrusted[i] = 1;
    }
    return false;
  }
  if (!trusted && !knn_declared_value(p, s, i, j, a, v)) {
    knn_defer(s, i, j);
    return false;
  }
  if (!knn_beats_list(vals, idx, s, have, v, j)) {
    return false;
  }
  knn_append(vals, idx, s, slots, v, j);
  return true;
}

/// Counts a row of the launch in s.gates.paths (the member `which`); thread 0.
__device__ inline void knn_count_path(const knn_fused_select& s,
                                      unsigned long long knn_fused_paths::*which)
{
  if (s.gates.paths != nullptr && threadIdx.x == 0) {
    atomicAdd(&(s.gates.paths->*which), 1ull);
  }
}

#endif  // __CUDACC__

}  // namespace detail

}  // namespace spira
