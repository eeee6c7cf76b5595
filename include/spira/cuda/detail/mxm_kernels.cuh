// spira internals: the CUDA mxm (spira/cuda/graphblas.cuh), Gustavson's row-by-row product
// T = A ⊕.⊗ B in two passes (count each row's entries, then compute them at their offsets).
//
// Rows go to one of three paths by their number of products u_i = Σ_{k in A[i,:]} nnz(B[k,:]):
//   sorted     u_i <= cuda_mxm_policy::sort_capacity: one block per row expands the row's
//              products into shared memory in increasing k, sorts them by (column, position) with
//              a block radix sort and folds each column's run in order;
//   dense      longer rows, while B's columns are at most dense_columns_per_product times u_i:
//              one block per row accumulates into a dense array of cols(B) values and flags, one
//              k at a time, then reads the array in column order; the array is in shared memory
//              when it fits (a few such arrays in global memory, reused from row to row, when it
//              does not);
//   expanded   the rest (long rows of a very wide B): the row's products expanded into global
//              memory and sorted by a device radix sort, in batches of rows of bounded size.
// Every path folds the products of a column with ⊕ in increasing k, in double, as the host does
// (spira/detail/mxm_host.hpp), so T is the host's T bit for bit; the product ⊗ is kept apart from
// the fold (no contraction into a fused multiply-add). Columns the mask does not allow are left
// out of T (it is never read there).
#pragma once

#include <spira/cuda/detail/graphblas_rows.cuh>
#include <spira/semiring.hpp>

#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <cstdint>

namespace spira::detail {

/// The CUDA mxm's tuning, in one place.
struct cuda_mxm_policy {
  static constexpr int threads = 256;       ///< threads of the row kernels
  static constexpr int sort_items = 8;      ///< products per thread in the sorted path
  static constexpr int position_bits = 12;  ///< bits of a product's position in the sort key
  static constexpr std::int64_t sort_capacity = std::int64_t(threads) * sort_items;  // 2048
  /// A long row takes the dense path while cols(B) <= this many times its products: the read of
  /// the dense array in column order then costs no more than the products.
  static constexpr std::int64_t dense_columns_per_product = 16;
  /// Threads of a dense-path block whose array is in shared memory (while cols(B) fits it: a
  /// block per multiprocessor at the widest).
  static constexpr int dense_shared_threads = 512;
  /// Dense arrays in global memory (B wider than shared memory holds): at most this many per
  /// SM, in at most this share of free memory.
  static constexpr int dense_blocks_per_sm = 2;
  static constexpr double dense_memory_fraction = 0.25;
  /// Products expanded at once in the expanded path (rows longer than this go alone).
  static constexpr std::int64_t expand_batch_products = std::int64_t(1) << 25;
};
static_assert(cuda_mxm_policy::sort_capacity <= (1 << cuda_mxm_policy::position_bits));

/// How the CUDA mxm computes a row (tests force one path with `forced`); masked_dot: T only at the
/// entries a mask that is not complemented allows, each a dot product of a row of op(A) and a
/// column of op(B) (chosen by its cost, as on the host: spira/detail/mxm_host.hpp); dense_global:
/// the dense path with its arrays in global memory however narrow B is.
enum class mxm_path : int {
  automatic = 0,
  sorted = 1,
  dense = 2,
  expanded = 3,
  masked_dot = 4,
  dense_global = 5
};

#if defined(__CUDACC__)

/// x itself (x + -0 is x for every x, NaN and signed zeros included), through an addition with an
/// explicit rounding mode, which neither the compiler nor ptxas contracts: the product that x is
/// stays a rounded product instead of being fused into the ⊕ that folds it (the host rounds the
/// product first).
__device__ inline double rounded(double x)
{
  double r;
  asm("add.rn.f64 %0, %1, 0d8000000000000000;" : "=d"(r) : "d"(x));
  return r;
}

/// Whether the mask allows column j of row i (binary search in the mask's row).
template <class ValueT, class IndexT>
__device__ inline bool mask_allows_at(const maybe_csr<ValueT, IndexT>& m, bool structural,
                                      bool complement, std::int64_t i, std::int64_t j)
{
  bool in = !m.present;
  if (m.present) {
    offset_t lo = m.v.row_ptr[i];
    offset_t hi = m.v.row_ptr[i + 1];
    while (lo < hi) {
      const offset_t mid = lo + (hi - lo) / 2;
      if (std::int64_t(m.v.col_idx[mid]) < j) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    in = lo < m.v.row_ptr[i + 1] && std::int64_t(m.v.col_idx[lo]) == j &&
         (structural || m.v.values[lo] != ValueT(0));
  }
  return in != complement;
}

/// What the row kernels share: the operands, the semiring, the mask and where the row goes.
template <class S, class ValueT, class IndexT>
struct mxm_rows {
  using semiring_type = S;
  using value_type = ValueT;
  using index_type = IndexT;
  csr_view<ValueT, IndexT> a;
  csr_view<ValueT, IndexT> b;
  S s;
  maybe_csr<ValueT, IndexT> mask;
  bool structural = false;
  bool complement = false;
  offset_t* counts = nullptr;     ///< count pass: entries of each row
  const offset_t* ptr = nullptr;  ///< fill pass: each row's offset
  IndexT* out_cols = nullptr;
  ValueT* out_vals = nullptr;

  __device__ double product(offset_t p, offset_t q) const
  {
    return rounded(double(s.template multiply<double>(double(a.values[p]), double(b.values[q]))));
  }
  __device__ bool allows(std::int64_t i, std::int64_t j) const
  {
    return mask_allows_at(mask, structural, complement, i, j);
  }
};

/// u_i for every row of A; rows with no product get count 0 now (no path visits them).
template <class ValueT, class IndexT>
__global__ void mxm_products_kernel(csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b,
                                    offset_t* products, offset_t* counts)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.rows;
       i += stride) {
    offset_t u = 0;
    for (offset_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const auto k = std::int64_t(a.col_idx[p]);
      u += b.row_ptr[k + 1] - b.row_ptr[k];
    }
    products[i] = u;
    counts[i] = 0;
  }
}

/// Sorts the rows with products into the three paths' lists (in no particular order: each row is
/// computed on its own). `lists` holds rows entries per path, `sizes` the three list lengths.
static __global__ void mxm_classify_kernel(const offset_t* products, std::int64_t rows,
                                           std::int64_t cols, bool dense_possible, int forced,
                                           std::int64_t* lists, unsigned long long* sizes)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += stride) {
    const offset_t u = products[i];
    if (u == 0) {
      continue;
    }
    int path = forced;
    if (path == int(mxm_path::automatic)) {
      path = u <= cuda_mxm_policy::sort_capacity ? int(mxm_path::sorted)
             : dense_possible && cols <= cuda_mxm_policy::dense_columns_per_product * u
                 ? int(mxm_path::dense)
                 : int(mxm_path::expanded);
    }
    if (path == int(mxm_path::sorted) && u > cuda_mxm_policy::sort_capacity) {
      path = int(mxm_path::expanded);
    }
    if (path == int(mxm_path::dense) && !dense_possible) {
      path = int(mxm_path::expanded);
    }
    const unsigned long long at = atomicAdd(&sizes[path - 1], 1ull);
    lists[std::int64_t(path - 1) * rows + std::int64_t(at)] = i;
  }
}

/// Entries [0, n) of a block-sorted run of keys (column << position_bits | position) in shared or
/// global memory: counts the columns the mask allows (Values false) or writes them with the ⊕ of
/// their run (Values true), in column order. Returns the count (on every thread).
template <bool Values, class Rows, class Keys, class Vals>
__device__ offset_t mxm_emit_sorted(const Rows& r, std::int64_t i, const Keys& keys,
                                    const Vals& vals, std::int64_t n)
{
  using add = typename Rows::semiring_type::add_monoid;
  using scan_t = cub::BlockScan<int, cuda_mxm_policy::threads>;
  __shared__ typename scan_t::TempStorage scan;
  offset_t total = 0;
  const offset_t base = Values ? r.ptr[i] : 0;
  for (std::int64_t x0 = 0; x0 < n; x0 += cuda_mxm_policy::threads) {
    const std::int64_t x = x0 + threadIdx.x;
    std::int64_t j = -1;
    bool head = false;
    if (x < n) {
      j = std::int64_t(keys[x] >> cuda_mxm_policy::position_bits);
      head = (x == 0 || std::int64_t(keys[x - 1] >> cuda_mxm_policy::position_bits) != j) &&
             r.allows(i, j);
    }
    int at = 0;
    int chunk = 0;
    scan_t(scan).ExclusiveSum(head ? 1 : 0, at, chunk);
    if constexpr (Values) {
      if (head) {
        double v = vals[x];
        for (std::int64_t y = x + 1;
             y < n && std::int64_t(keys[y] >> cuda_mxm_policy::position_bits) == j; ++y) {
          v = add{}(v, double(vals[y]));
        }
        r.out_cols[base + total + at] = typename Rows::index_type(j);
        r.out_vals[base + total + at] = typename Rows::value_type(v);
      }
    }
    total += chunk;
    __syncthreads();  // the scan's storage is used again
  }
  return total;
}

/// The products of row i of A ⊕.⊗ B in increasing k, a chunk of A's entries at a time with each
/// thread of the block expanding one: emit(x, p, q) for the product of A's entry p and B's entry
/// q at position x (counted from `first`). Every thread of the block calls it; returns the count.
template <class Rows, class Emit>
__device__ offset_t expand_row_products(const Rows& r, std::int64_t i, offset_t first, Emit&& emit)
{
  using scan_t = cub::BlockScan<offset_t, cuda_mxm_policy::threads>;
  __shared__ typename scan_t::TempStorage scan;
  offset_t n = first;
  for (offset_t p0 = r.a.row_ptr[i]; p0 < r.a.row_ptr[i + 1]; p0 += cuda_mxm_policy::threads) {
    const offset_t p = p0 + threadIdx.x;
    offset_t q0 = 0;
    offset_t len = 0;
    if (p < r.a.row_ptr[i + 1]) {
      const auto k = std::int64_t(r.a.col_idx[p]);
      q0 = r.b.row_ptr[k];
      len = r.b.row_ptr[k + 1] - q0;
    }
    offset_t at = 0;
    offset_t chunk = 0;
    scan_t(scan).ExclusiveSum(len, at, chunk);
    for (offset_t e = 0; e < len; ++e) {
      emit(n + at + e, p, q0 + e);
    }
    n += chunk;
    __syncthreads();  // the scan's storage is used again
  }
  return n - first;
}

/// The sorted path: one block per listed row, its u <= sort_capacity products in shared memory.
template <bool Values, class S, class ValueT, class IndexT>
__global__ void __launch_bounds__(cuda_mxm_policy::threads)
    mxm_sorted_rows_kernel(mxm_rows<S, ValueT, IndexT> r, const std::int64_t* list,
                           std::int64_t n_rows, int key_bits)
{
  constexpr int threads = cuda_mxm_policy::threads;
  constexpr int items = cuda_mxm_policy::sort_items;
  constexpr int capacity = int(cuda_mxm_policy::sort_capacity);
  using key_t = std::uint64_t;
  using sort_t =
      cub::BlockRadixSort<key_t, threads, items, std::conditional_t<Values, double, cub::NullType>>;
  struct staged {
    key_t keys[capacity];
    double vals[Values ? capacity : 1];
  };
  __shared__ union {
    staged stage;
    typename sort_t::TempStorage sort;
  } sm;
  const key_t invalid = (key_t(1) << key_bits) - 1;
  for (std::int64_t row = blockIdx.x; row < n_rows; row += gridDim.x) {
    const std::int64_t i = list[row];
    // The products in increasing k, each keyed by its column and its position.
    const int n = int(expand_row_products(r, i, 0, [&](offset_t x, offset_t p, offset_t q) {
      sm.stage.keys[x] = (key_t(r.b.col_idx[q]) << cuda_mxm_policy::position_bits) | key_t(x);
      if constexpr (Values) {
        sm.stage.vals[x] = r.product(p, q);
      }
    }));
    key_t keys[items];
    std::conditional_t<Values, double, cub::NullType> vals[items];
    for (int e = 0; e < items; ++e) {
      const int x = threadIdx.x * items + e;
      keys[e] = x < n ? sm.stage.keys[x] : invalid;
      if constexpr (Values) {
        vals[e] = x < n ? sm.stage.vals[x] : 0.0;
      }
    }
    __syncthreads();
    if constexpr (Values) {
      sort_t(sm.sort).Sort(keys, vals, 0, key_bits);
    } else {
      sort_t(sm.sort).Sort(keys, 0, key_bits);
    }
    __syncthreads();
    for (int e = 0; e < items; ++e) {
      const int x = threadIdx.x * items + e;
      sm.stage.keys[x] = keys[e];
      if constexpr (Values) {
        sm.stage.vals[x] = vals[e];
      }
    }
    __syncthreads();
    const offset_t count = mxm_emit_sorted<Values>(r, i, sm.stage.keys, sm.stage.vals, n);
    if (!Values && threadIdx.x == 0) {
      r.counts[i] = count;
    }
    __syncthreads();
  }
}

/// The dense path: block b accumulates its rows in a dense array of cols(B) values and a flag per
/// column, in shared memory (Shared: dynamic shared memory, the values - fill pass only - then the
/// flags, which start at 0) or at values + b * cols and flags + b * cols in global memory (flags
/// zeroed beforehand). Reading a row's columns out clears its flags for the next row.
template <bool Values, bool Shared, int Threads, class S, class ValueT, class IndexT>
__global__ void __launch_bounds__(Threads)
    mxm_dense_rows_kernel(mxm_rows<S, ValueT, IndexT> r, const std::int64_t* list,
                          std::int64_t n_rows, double* values, unsigned char* flags)
{
  using add = typename S::add_monoid;
  using scan_t = cub::BlockScan<int, Threads>;
  __shared__ typename scan_t::TempStorage scan;
  extern __shared__ double dense_shared[];
  const std::int64_t cols = r.b.cols;
  double* value = Shared ? dense_shared : values + std::int64_t(blockIdx.x) * cols;
  unsigned char* seen = Shared
                            ? reinterpret_cast<unsigned char*>(dense_shared + (Values ? cols : 0))
                            : flags + std::int64_t(blockIdx.x) * cols;
  if constexpr (Shared) {
    for (std::int64_t j = threadIdx.x; j < cols; j += Threads) {
      seen[j] = 0;
    }
    __syncthreads();
  }
  for (std::int64_t row = blockIdx.x; row < n_rows; row += gridDim.x) {
    const std::int64_t i = list[row];
    for (offset_t p = r.a.row_ptr[i]; p < r.a.row_ptr[i + 1]; ++p) {
      const auto k = std::int64_t(r.a.col_idx[p]);
      for (offset_t q = r.b.row_ptr[k] + threadIdx.x; q < r.b.row_ptr[k + 1]; q += Threads) {
        const auto j = std::int64_t(r.b.col_idx[q]);
        if constexpr (Values) {
          value[j] = seen[j] == 0 ? r.product(p, q) : add{}(value[j], r.product(p, q));
        }
        seen[j] = 1;
      }
      // Within B[k,:] every column is another thread's, and the barrier orders the k's, so each
      // column folds its products in increasing k (the count pass only sets flags: no order).
      if constexpr (Values) {
        __syncthreads();
      }
    }
    __syncthreads();
    offset_t total = 0;
    const offset_t base = Values ? r.ptr[i] : 0;
    for (std::int64_t j0 = 0; j0 < cols; j0 += Threads) {
      const std::int64_t j = j0 + threadIdx.x;
      bool here = false;
      if (j < cols && seen[j] != 0) {
        seen[j] = 0;
        here = r.allows(i, j);
      }
      int at = 0;
      int chunk = 0;
      scan_t(scan).ExclusiveSum(here ? 1 : 0, at, chunk);
      if constexpr (Values) {
        if (here) {
          r.out_cols[base + total + at] = IndexT(j);
          r.out_vals[base + total + at] = ValueT(value[j]);
        }
      }
      total += chunk;
      __syncthreads();
    }
    if (!Values && threadIdx.x == 0) {
      r.counts[i] = total;
    }
  }
}

/// The expanded path, step 1: the products of the batch's rows list[0, n_rows), row `row` from
/// offsets[row] on, in increasing k: key (row << column_bits | column), the product's position
/// (the value a stable device sort carries) and, with Values, the product.
template <bool Values, class S, class ValueT, class IndexT>
__global__ void __launch_bounds__(cuda_mxm_policy::threads)
    mxm_expand_kernel(mxm_rows<S, ValueT, IndexT> r, const std::int64_t* list,
                      const offset_t* offsets, std::int64_t n_rows, int column_bits,
                      std::uint64_t* keys, offset_t* positions, double* products)
{
  for (std::int64_t row = blockIdx.x; row < n_rows; row += gridDim.x) {
    expand_row_products(r, list[row], offsets[row], [&](offset_t x, offset_t p, offset_t q) {
      keys[x] = (std::uint64_t(row) << column_bits) | std::uint64_t(r.b.col_idx[q]);
      positions[x] = x;
      if constexpr (Values) {
        products[x] = r.product(p, q);
      }
    });
  }
}

/// Sorted keys of one batch seen as (column << position_bits) runs: the column of entry x.
struct expanded_keys {
  const std::uint64_t* keys;
  std::uint64_t column_mask;
  __device__ std::uint64_t operator[](std::int64_t x) const
  {
    return (keys[x] & column_mask) << cuda_mxm_policy::position_bits;
  }
};
/// The products of one batch in sorted order.
struct expanded_values {
  const offset_t* positions;
  const double* products;
  __device__ double operator[](std::int64_t x) const { return products[positions[x]]; }
};

/// The expanded path, step 2: one block per row of the batch folds its sorted run.
template <bool Values, class S, class ValueT, class IndexT>
__global__ void __launch_bounds__(cuda_mxm_policy::threads)
    mxm_expanded_rows_kernel(mxm_rows<S, ValueT, IndexT> r, const std::int64_t* list,
                             const offset_t* offsets, std::int64_t n_rows, int column_bits,
                             const std::uint64_t* keys, const offset_t* positions,
                             const double* products)
{
  const std::uint64_t column_mask = (std::uint64_t(1) << column_bits) - 1;
  for (std::int64_t row = blockIdx.x; row < n_rows; row += gridDim.x) {
    const std::int64_t i = list[row];
    const offset_t b = offsets[row];
    const expanded_keys k{keys + b, column_mask};
    const expanded_values v{positions + b, products};
    const offset_t count = mxm_emit_sorted<Values>(r, i, k, v, offsets[row + 1] - b);
    if (!Values && threadIdx.x == 0) {
      r.counts[i] = count;
    }
  }
}

/// The costs of the two ways to a masked product (mxm_costs_of on the host): costs[0]
/// Gustavson's Σ over A's entries (i, k) of |op(B)[k,:]|, costs[1] the dot products' Σ over the
/// mask's entries (i, j) of |A[i,:]| + |op(B)[:,j]|; `col_len` B's column lengths.
template <class ValueT, class IndexT>
__global__ void mxm_costs_kernel(csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b,
                                 bool transpose_b, const offset_t* col_len,
                                 csr_view<ValueT, IndexT> mask, unsigned long long* costs)
{
  const auto row_len = [&](std::int64_t k) { return b.row_ptr[k + 1] - b.row_ptr[k]; };
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  unsigned long long gustavson = 0, dot = 0;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.rows;
       i += stride) {
    for (offset_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const auto k = std::int64_t(a.col_idx[p]);
      gustavson += transpose_b ? col_len[k] : row_len(k);
    }
    const offset_t a_len = a.row_ptr[i + 1] - a.row_ptr[i];
    for (offset_t p = mask.row_ptr[i]; p < mask.row_ptr[i + 1]; ++p) {
      const auto j = std::int64_t(mask.col_idx[p]);
      dot += a_len + (transpose_b ? row_len(j) : col_len[j]);
    }
  }
  atomicAdd(&costs[0], gustavson);
  atomicAdd(&costs[1], dot);
}

/// The masked dot product: one warp per row of A, a lane per allowed entry (i, j) of the mask,
/// merging row i of A with row j of bt = op(B)ᵀ and folding the shared k in increasing order.
template <bool Values, class S, class ValueT, class IndexT>
__global__ void mxm_dot_rows_kernel(mxm_rows<S, ValueT, IndexT> r, csr_view<ValueT, IndexT> bt)
{
  using add = typename S::add_monoid;
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < r.a.rows;
       i += warps) {
    const offset_t a0 = r.a.row_ptr[i];
    const offset_t a1 = r.a.row_ptr[i + 1];
    offset_t total = 0;
    const offset_t base = Values ? r.ptr[i] : 0;
    for (offset_t m0 = r.mask.v.row_ptr[i]; m0 < r.mask.v.row_ptr[i + 1]; m0 += 32) {
      const offset_t pm = m0 + lane;
      bool found = false;
      double acc = 0.0;
      std::int64_t j = 0;
      if (pm < r.mask.v.row_ptr[i + 1] && a0 < a1 &&
          (r.structural || r.mask.v.values[pm] != ValueT(0))) {
        j = std::int64_t(r.mask.v.col_idx[pm]);
        offset_t p = a0;
        offset_t q = bt.row_ptr[j];
        const offset_t q1 = bt.row_ptr[j + 1];
        while (p < a1 && q < q1) {
          const auto ka = std::int64_t(r.a.col_idx[p]);
          const auto kb = std::int64_t(bt.col_idx[q]);
          if (ka != kb) {
            p += ka < kb ? 1 : 0;
            q += kb < ka ? 1 : 0;
            continue;
          }
          if (!Values) {  // the pattern needs one shared k
            found = true;
            break;
          }
          const double prod = rounded(
              double(r.s.template multiply<double>(double(r.a.values[p]), double(bt.values[q]))));
          acc = found ? double(add{}(acc, prod)) : prod;
          found = true;
          ++p;
          ++q;
        }
      }
      const unsigned ballot = __ballot_sync(0xffffffffu, found);
      if (Values && found) {
        const offset_t at = base + total + __popc(ballot & ((1u << lane) - 1u));
        r.out_cols[at] = IndexT(j);
        r.out_vals[at] = ValueT(acc);
      }
      total += __popc(ballot);
    }
    if (!Values && lane == 0) {
      r.counts[i] = total;
    }
  }
}

#endif  // __CUDACC__

}  // namespace spira::detail
