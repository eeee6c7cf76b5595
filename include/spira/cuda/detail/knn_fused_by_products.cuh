// spira internals: the fused k-NN kernel's rows by their products (spira/cuda/knn.cuh). For a
// distance whose pairs without a shared column all take one value (accuracy_traits::disjoint), a
// short query row over a large index is ranked from the (index row, product) pairs of its columns,
// sorted in shared memory, instead of a walk over every index row.
#pragma once

#include <spira/cuda/detail/knn_fused_select.cuh>

#include <cub/block/block_scan.cuh>

#include <cstddef>
#include <cstdint>

namespace spira::detail {

/// The pairs (index row, product) a row by its products may hold in an accumulator tile of
/// `tile_bytes` bytes: the largest power of two of (32-bit key, A) pairs that fit (0 when none).
template <class A>
SPIRA_HD constexpr int knn_by_products_capacity(std::size_t tile_bytes)
{
  const std::size_t pairs = tile_bytes / (sizeof(std::uint32_t) + sizeof(A));
  int capacity = pairs > 0 ? 1 : 0;
  while (capacity > 0 && std::size_t(capacity) * 2 <= pairs) {
    capacity *= 2;
  }
  return capacity;
}

#if defined(__CUDACC__)

/// The products of query row i (Σ over its entries of the index's column lengths) and, for a row
/// of at most blockDim entries, offsets[t] = the products of its entries before entry t (exact
/// where the total fits an int). Whole block; ends synchronised.
template <class D, class ValueT, class IndexT>
__device__ std::int64_t knn_row_products(const intersection_args<D, ValueT, IndexT>& p,
                                         std::int64_t i, int* offsets)
{
  using scan = cub::BlockScan<long long, cuda_pairwise_policy::intersection_threads>;
  __shared__ typename scan::TempStorage storage;
  const offset_t a0 = p.a_ptr[i];
  const offset_t nnz = p.a_ptr[i + 1] - a0;
  long long mine = 0;  // this thread's entries: t, t + blockDim, ...
  for (offset_t t = threadIdx.x; t < nnz; t += blockDim.x) {
    const std::int64_t c = p.a_col[a0 + t];
    mine += p.bt_ptr[c + 1] - p.bt_ptr[c];
  }
  long long before = 0, total = 0;
  scan(storage).ExclusiveSum(mine, before, total);
  offsets[threadIdx.x] = int(before);
  __syncthreads();
  return total;
}

/// Query row i of a D with a disjoint value (accuracy_traits::disjoint, one accumulator term) by
/// its products rather than a walk over the index: the `products` pairs (index row, product) of
/// its columns are written to `scratch` (keys, then values; `n` >= products a power of two) at
/// the offsets `offsets` of its entries (nnz(i) <= blockDim; knn_row_products), sorted by index row
/// and summed per row, each such pair ranked; then the first index rows outside them (their
/// accumulator is the identity: D::disjoint_distance, or the direct form where the guard says so),
/// enough for k. The same values as the walk, except the order in which products are summed. Whole
/// block; leaves the scratch at ⊕'s identity.
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
  knn_bitonic_network(n, [&](int a, int b) {
    if (key[b] < key[a]) {
      const std::uint32_t k = key[a];
      key[a] = key[b];
      key[b] = k;
      const A v = val[a];
      val[a] = val[b];
      val[b] = v;
    }
  });
  // The index rows sharing a column with row i, in increasing order, each summed in sorted order.
  for (int base = 0; base < products; base += int(blockDim.x)) {
    const int e = base + int(threadIdx.x);
    bool candidate = false;
    if (e < products && (e == 0 || key[e - 1] != key[e])) {
      terms<A, 1> a;
      a[0] = val[e];
      for (int f = e + 1; f < products && key[f] == key[e]; ++f) {
        a[0] = add{}(a[0], val[f]);
      }
      candidate = knn_rank_pair(p, s, i, std::int64_t(key[e]), a, vals, idx, slots, have);
    }
    knn_end_round(vals, idx, s, have, count, slots, candidate);
  }
  // The first index rows outside them: [0, k + products + 1) holds at least k besides row i.
  const std::int64_t fill =
      std::int64_t(s.k) + products + 1 < p.rows_b ? std::int64_t(s.k) + products + 1 : p.rows_b;
  for (std::int64_t base = 0; base < fill; base += blockDim.x) {
    const std::int64_t j = base + threadIdx.x;
    bool candidate = false;
    if (j < fill) {
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
        candidate = knn_rank_pair(p, s, i, j, a, vals, idx, slots, have);
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

#endif  // __CUDACC__

}  // namespace spira::detail
