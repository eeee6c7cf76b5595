// spira internals: the fused k-NN kernel of spira/cuda/knn.cuh - the block-wide selection (list,
// candidate buffer, bitonic sort) and the kernel itself. The pairs the accuracy guard did not
// trust are resolved in knn_deferred.cuh. See knn.cuh for the design.
#pragma once

#include <spira/cuda/detail/launch_progress.cuh>
#include <spira/cuda/pairwise.cuh>
#include <spira/detail/knn_policy.hpp>
#include <spira/knn.hpp>
#include <spira/selection/keys.hpp>

#include <cub/block/block_scan.cuh>

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
};

#if defined(__CUDACC__)

/// Sorts the pairs (vals[t], idx[t]), t < n (a power of two), by (key(value), index) with the
/// whole block; ends synchronised.
template <class ValueT>
__device__ void knn_bitonic_sort(ValueT* vals, std::int64_t* idx, int n, bool largest)
{
  using keys = selection::key_traits<ValueT>;
  for (int size = 2; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < n / 2; t += blockDim.x) {
        const int lo = 2 * t - (t & (stride - 1));
        const int hi = lo + stride;
        const auto klo = keys::to_key(vals[lo], largest);
        const auto khi = keys::to_key(vals[hi], largest);
        const bool hi_first = khi < klo || (khi == klo && idx[hi] < idx[lo]);
        if (hi_first == ((lo & size) == 0)) {
          const ValueT v = vals[lo];
          vals[lo] = vals[hi];
          vals[hi] = v;
          const std::int64_t j = idx[lo];
          idx[lo] = idx[hi];
          idx[hi] = j;
        }
      }
      __syncthreads();
    }
  }
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
  using keys = selection::key_traits<ValueT>;
  const int t = int(threadIdx.x);
  int rank = s.k;
  ValueT v{};
  std::int64_t j = -1;
  if (t < have + count) {
    const int at = t < have ? t : s.k + (t - have);
    v = vals[at];
    j = idx[at];
    const auto key = keys::to_key(v, s.largest);
    const auto precedes = [&](int u) {
      const auto ku = keys::to_key(vals[u], s.largest);
      return ku < key || (ku == key && idx[u] < j);
    };
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

/// Index rows for which D's pairs without a shared column take D::disjoint_distance: sets *blocked
/// when some row fails D::disjoint_index (spira/accuracy.hpp).
template <class D, class ValueT, class IndexT>
__global__ void knn_disjoint_index_kernel(intersection_args<D, ValueT, IndexT> p, unsigned* blocked)
{
  using A = intersection_accumulator_t<D, ValueT>;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < p.rows_b;
       j += stride) {
    const offset_t b0 = p.b_ptr[j];
    const sparse_row<ValueT, IndexT> y{p.b_col + b0, p.b_val + b0, p.b_ptr[j + 1] - b0};
    if (!p.d.template disjoint_index<double>(y, p.norms_b[j], accumulator_bounds_of<A>())) {
      atomicOr(blocked, 1u);
    }
  }
}

/// Whether a candidate (v, j) beats the list's k-th pair (value, then index), or the list is not
/// full. For candidates that do not come in increasing index order.
template <class ValueT>
__device__ inline bool knn_beats_list(const ValueT* vals, const std::int64_t* idx,
                                      const knn_fused_select& s, int have, ValueT v, std::int64_t j)
{
  using keys = selection::key_traits<ValueT>;
  if (have < s.k) {
    return true;
  }
  const auto key = keys::to_key(v, s.largest);
  const auto bar = keys::to_key(vals[s.k - 1], s.largest);
  return key < bar || (key == bar && j < idx[s.k - 1]);
}

/// Query row i of a D with a disjoint value (accuracy_traits::disjoint, one accumulator term) by
/// its products rather than a walk over the index: the `products` pairs (index row, product) of
/// its columns are written to `scratch` (keys, then values; `n` >= products a power of two) at
/// the offsets `offsets` of its entries (nnz(i) <= blockDim), sorted by index row and summed per
/// row, each such pair ranked; then the first index rows outside them (their accumulator is the
/// identity: D::disjoint_distance, or the direct form where the guard says so), enough for k. The
/// same values as the walk, except the order in which products are summed. Whole block; leaves the
/// scratch at ⊕'s identity.
template <class D, class ValueT, class IndexT>
__device__ void knn_row_by_products(const intersection_args<D, ValueT, IndexT>& p,
                                    const knn_fused_select& s, std::int64_t i, int products, int n,
                                    const int* offsets, unsigned char* scratch, ValueT* vals,
                                    std::int64_t* idx, int* slots, int& have, int& count)
{
  using add = typename D::add_monoid;
  using A = intersection_accumulator_t<D, ValueT>;
  constexpr std::uint32_t none = 0xffffffffu;
  std::uint32_t* key = reinterpret_cast<std::uint32_t*>(scratch);
  A* val = reinterpret_cast<A*>(scratch + std::size_t(n) * sizeof(std::uint32_t));
  const int lane = int(threadIdx.x) & 31;
  const int warps = int(blockDim.x) / 32;
  const offset_t a0 = p.a_ptr[i];
  const int nnz = int(p.a_ptr[i + 1] - a0);
  for (int t = int(threadIdx.x) / 32; t < nnz; t += warps) {
    const std::int64_t c = p.a_col[a0 + t];
    const ValueT x = p.a_val[a0 + t];
    const offset_t lo = p.bt_ptr[c], hi = p.bt_ptr[c + 1];
    for (offset_t q = lo + lane; q < hi; q += 32) {
      const int e = offsets[t] + int(q - lo);
      key[e] = std::uint32_t(p.bt_row[q]);
      val[e] = intersection_multiply_d<D, ValueT, A>(p.d, x, p.bt_val[q])[0];
    }
  }
  for (int e = products + int(threadIdx.x); e < n; e += int(blockDim.x)) {
    key[e] = none;
  }
  __syncthreads();
  for (int size = 2; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = int(threadIdx.x); t < n / 2; t += int(blockDim.x)) {
        const int lo = 2 * t - (t & (stride - 1));
        const int hi = lo + stride;
        if ((key[lo] > key[hi]) == ((lo & size) == 0)) {
          const std::uint32_t k = key[lo];
          key[lo] = key[hi];
          key[hi] = k;
          const A v = val[lo];
          val[lo] = val[hi];
          val[hi] = v;
        }
      }
      __syncthreads();
    }
  }
  // The index rows sharing a column with row i, in increasing order, each summed in sorted order.
  for (int base = 0; base < products; base += int(blockDim.x)) {
    const int e = base + int(threadIdx.x);
    bool candidate = false;
    if (e < products && (e == 0 || key[e - 1] != key[e])) {
      const std::int64_t j = key[e];
      terms<A, 1> a;
      a[0] = val[e];
      for (int f = e + 1; f < products && key[f] == key[e]; ++f) {
        a[0] = add{}(a[0], val[f]);
      }
      const bool self = s.exclude_self && j == i;
      if (!self || s.self_values != nullptr) {
        bool trusted;
        const ValueT v = ValueT(float(intersection_fast_value(p, i, j, a, trusted)));
        if (self) {
          static_cast<ValueT*>(s.self_values)[i] = v;
          if (!trusted) {
            s.self_untrusted[i] = 1;
          }
        } else if (!trusted) {
          knn_defer(s, i, j);
        }
        candidate = !self && trusted && knn_beats_list(vals, idx, s, have, v, j);
        if (candidate) {
          knn_append(vals, idx, s, slots, v, j);
        }
      }
    }
    knn_end_round(vals, idx, s, have, count, slots, candidate);
  }
  // The first index rows outside them: [0, k + products + 1) holds at least k besides row i.
  const std::int64_t fill =
      std::int64_t(s.k) + products + 1 < p.rows_b ? std::int64_t(s.k) + products + 1 : p.rows_b;
  for (std::int64_t base = 0; base < fill; base += blockDim.x) {
    const std::int64_t j = base + threadIdx.x;
    bool candidate = false;
    if (j < fill && !(s.exclude_self && j == i)) {
      int lo = 0, hi = products;
      while (lo < hi) {
        const int m = (lo + hi) / 2;
        if (std::int64_t(key[m]) < j) {
          lo = m + 1;
        } else {
          hi = m;
        }
      }
      if (lo == products || std::int64_t(key[lo]) != j) {
        terms<A, 1> a;
        a[0] = add::template identity<A>();
        bool trusted;
        const ValueT v = ValueT(float(intersection_fast_value(p, i, j, a, trusted)));
        if (!trusted) {
          knn_defer(s, i, j);
        }
        candidate = trusted && knn_beats_list(vals, idx, s, have, v, j);
        if (candidate) {
          knn_append(vals, idx, s, slots, v, j);
        }
      }
    }
    knn_end_round(vals, idx, s, have, count, slots, candidate);
  }
  // Back to the identity for the walk of later rows (the keys' bytes too).
  A* all = reinterpret_cast<A*>(scratch);
  const std::size_t used =
      (std::size_t(n) * (sizeof(std::uint32_t) + sizeof(A)) + sizeof(A) - 1) / sizeof(A);
  for (std::size_t e = threadIdx.x; e < used; e += blockDim.x) {
    all[e] = add::template identity<A>();
  }
}

/// One block per query row (grid-stride): for each tile of tile_cols index rows, the accumulation
/// of the intersection strategy (spira/cuda/detail/pairwise_intersection.cuh), then every
/// finalized distance that beats the current k-th best is appended to the candidate buffer; full
/// buffers and the end of the row are merged by knn_flush.
///
/// The tile is read in rounds of knn_round_entries entries a thread, each entry put back to ⊕'s
/// identity as it is read where it is not (the tile is cleared once per block, not once per tile;
/// a NaN sum is put back too: it is not the identity). For a D with a
/// disjoint value (accuracy_traits::disjoint) and a query row and index rows its predicates accept,
/// once k pairs at the identity (no shared column) were ranked, the others are skipped: they tie
/// with those k at D::disjoint_distance and come later in the index order, so they cannot enter
/// the list; a round without another entry costs one barrier.
template <class D, class ValueT, class IndexT>
__global__ void __launch_bounds__(cuda_pairwise_policy::intersection_threads)
    knn_fused_kernel(intersection_args<D, ValueT, IndexT> p, knn_fused_select s)
{
  using add = typename D::add_monoid;
  using A = intersection_accumulator_t<D, ValueT>;
  using keys = selection::key_traits<ValueT>;
  constexpr int N = intersection_args<D, ValueT, IndexT>::N;
  constexpr bool disjoint = accuracy_traits<D, double>::disjoint;
  // Rounds of several entries a thread where pairs may be skipped, of one otherwise.
  constexpr int E = disjoint ? cuda_pairwise_policy::knn_round_entries : 1;
  extern __shared__ unsigned char smem_raw[];
  A* acc = reinterpret_cast<A*>(smem_raw);
  ValueT* vals = reinterpret_cast<ValueT*>(smem_raw + s.acc_bytes);
  std::int64_t* idx = reinterpret_cast<std::int64_t*>(
      smem_raw + s.acc_bytes + ((std::size_t(s.sort_size) * sizeof(ValueT) + 15) / 16) * 16);
  // The slot counter of the candidate buffer. The list length (have) and the number of buffered
  // candidates (count) are kept in registers, identical in every thread: each chunk's candidates
  // are counted by the barrier that ends it (__syncthreads_count), so every flush decision is
  // uniform across the block.
  __shared__ int slots;
  if (threadIdx.x == 0) {
    slots = 0;
  }
  for (std::int64_t e = threadIdx.x; e < p.tile_cols * N; e += blockDim.x) {
    acc[e] = add::template identity<A>();
  }
  [[maybe_unused]] bool index_disjoint = false;
  // Rows by their products (knn_row_by_products): the pairs the tile's memory holds.
  [[maybe_unused]] int by_products_capacity = 0;
  if constexpr (disjoint) {
    index_disjoint = s.disjoint_blocked != nullptr && *s.disjoint_blocked == 0u;
    if (N == 1 && p.rows_b < std::int64_t(0xffffffffu)) {
      // The largest power of two of pairs (key, value) the tile's bytes hold.
      const std::size_t pairs = s.acc_bytes / (sizeof(std::uint32_t) + sizeof(A));
      by_products_capacity = pairs > 0 ? 1 : 0;
      while (std::size_t(by_products_capacity) * 2 <= pairs) {
        by_products_capacity *= 2;
      }
    }
  }
  __syncthreads();

  for (std::int64_t i = s.row_begin + blockIdx.x; i < s.row_end; i += gridDim.x) {
    if (s.only != nullptr && !s.only[i - s.row_begin]) {
      continue;  // uniform across the block
    }
    if (!launch_progress_row_begins(s.watch)) {
      return;
    }
    int have = 0;
    int count = 0;
    // Whether this row may skip pairs at the identity, and how many it ranked (at least; uniform).
    bool may_skip = false;
    if constexpr (disjoint) {
      may_skip = index_disjoint &&
                 p.d.template disjoint_query<double>(p.norms_a[i], accumulator_bounds_of<A>());
    }
    int disjoint_ranked = 0;
    if constexpr (disjoint && N == 1) {
      if (may_skip && by_products_capacity > 0 &&
          p.a_ptr[i + 1] - p.a_ptr[i] <= offset_t(blockDim.x)) {
        // The products of each entry's column, and their offsets (uniform total).
        using scan = cub::BlockScan<int, cuda_pairwise_policy::intersection_threads>;
        __shared__ typename scan::TempStorage scan_storage;
        __shared__ int offsets[cuda_pairwise_policy::intersection_threads];
        const offset_t a0 = p.a_ptr[i];
        const int nnz = int(p.a_ptr[i + 1] - a0);
        int column = 0;
        if (int(threadIdx.x) < nnz) {
          const std::int64_t c = p.a_col[a0 + threadIdx.x];
          const offset_t len = p.bt_ptr[c + 1] - p.bt_ptr[c];
          // (capacity + 1: one column past the capacity is enough to say no)
          column = len <= offset_t(by_products_capacity) ? int(len) : by_products_capacity + 1;
        }
        int products = 0;
        scan(scan_storage).ExclusiveSum(column, offsets[threadIdx.x], products);
        __syncthreads();
        // Worth it where the walk would read many more entries than there are products.
        if (products <= by_products_capacity &&
            std::int64_t(products) * cuda_pairwise_policy::knn_walk_per_product <= p.rows_b) {
          int n = 2;  // a power of two for the sort
          while (n < products) {
            n *= 2;
          }
          knn_row_by_products(p, s, i, products, n, offsets, smem_raw, vals, idx, &slots, have,
                              count);
          knn_finish_row(vals, idx, s, i, have, count, &slots);
          if (threadIdx.x == 0) {
            launch_progress_row_done(s.watch);
          }
          continue;
        }
      }
    }
    for (std::int64_t j0 = 0; j0 < p.rows_b; j0 += p.tile_cols) {
      const std::int64_t width = p.tile_cols < p.rows_b - j0 ? p.tile_cols : p.rows_b - j0;
      intersection_accumulate(p, i, j0, width, acc);
      __syncthreads();
      for (std::int64_t base = 0; base < width; base += E * std::int64_t(blockDim.x)) {
        // This thread's entries of the round (base + q blockDim + thread), read and cleared.
        const bool skip = may_skip && disjoint_ranked >= s.k;
        terms<A, N> a[E];
        bool live[E];
        bool any = false;
        int at_identity = 0;
#pragma unroll
        for (int q = 0; q < E; ++q) {
          const std::int64_t jj = base + q * std::int64_t(blockDim.x) + threadIdx.x;
          live[q] = false;
          if (jj < width) {
            bool identity = true;
#pragma unroll
            for (int t = 0; t < N; ++t) {
              a[q][t] = acc[jj * N + t];
              identity = identity && a[q][t] == add::template identity<A>();
            }
            if (!identity) {
#pragma unroll
              for (int t = 0; t < N; ++t) {
                acc[jj * N + t] = add::template identity<A>();
              }
            }
            const bool self = s.exclude_self && j0 + jj == i;
            live[q] = !skip || !identity || self;
            at_identity += identity && !self ? 1 : 0;
            any = any || live[q];
          }
        }
        if (skip) {
          if (__syncthreads_or(any) == 0) {
            continue;  // uniform: nothing in this round but pairs at the identity
          }
        } else if (may_skip) {
          // A lower bound of the pairs at the identity ranked in this round (threads with one).
          disjoint_ranked += __syncthreads_count(at_identity > 0);
        }
#pragma unroll
        for (int q = 0; q < E; ++q) {
          if (base + q * std::int64_t(blockDim.x) >= width) {
            break;  // uniform
          }
          // The bar to beat: the k-th best so far (every candidate of this round has a larger
          // index).
          const bool full = have == s.k;
          const auto bar = full ? keys::to_key(vals[s.k - 1], s.largest) : keys::worst;
          const std::int64_t jj = base + q * std::int64_t(blockDim.x) + threadIdx.x;
          const std::int64_t j = j0 + jj;
          bool candidate = false;
          // The pair (i, i) of a self query is not a candidate; its value may be wanted.
          const bool self = s.exclude_self && j == i;
          if (jj < width && live[q] && (!self || s.self_values != nullptr)) {
            // Ranked as the float the graph returns (the tie rule holds on what the user sees).
            bool trusted;
            const ValueT v = ValueT(float(intersection_fast_value(p, i, j, a[q], trusted)));
            if (self) {
              // Untrusted: marked, and evaluated directly after the kernel
              // (knn_self_direct_kernel).
              static_cast<ValueT*>(s.self_values)[i] = v;
              if (!trusted) {
                s.self_untrusted[i] = 1;
              }
            } else if (!trusted) {
              knn_defer(s, i, j);
            }
            candidate = !self && trusted && (!full || keys::to_key(v, s.largest) < bar);
            if (candidate) {
              knn_append(vals, idx, s, &slots, v, j);
            }
          }
          knn_end_round(vals, idx, s, have, count, &slots, candidate);
        }
      }
    }
    knn_finish_row(vals, idx, s, i, have, count, &slots);
    if (threadIdx.x == 0) {
      launch_progress_row_done(s.watch);
    }
  }
}

#endif  // __CUDACC__

}  // namespace detail

}  // namespace spira
