// spira internals: the rows of the fused k-NN (spira/cuda/knn.cuh) that equal an index row. For a
// distance that declares zero_self_distance (spira/accuracy.hpp), the direct value of two equal
// rows
// - the same columns, equal finite values as the kernels see them, and equal finite norms, so that
// the direct form reads for (x, y) what it reads for (x, x) - is exactly 0, and the accuracy guard
// trusts no fast value of such a pair (their fast forms cancel). Without the classes below each
// such pair is queued and evaluated after the kernel; sets with large groups of equal rows (a
// graph's vertices with the same neighbours, duplicate documents) have millions of them, which
// overflow the queue and make the kernel run again for most rows.
//
// Each row gets a class: the smallest index row equal to it, or -1. Every index row with finite
// values and norms is hashed into an open-addressing table that keeps the smallest index row of
// each hash; a row then compares itself with the row its hash leads to. The hash treats as equal
// at least what the comparison does (+0 and -0 alike); where it separates rows the comparison would
// join, or joins rows that differ (a collision), a row only goes without a class and its pairs are
// queued as before: the classes never join rows that differ. A pair of rows of one class takes 0.
#pragma once

#include <spira/accuracy.hpp>
#include <spira/cuda/detail/pairwise_context.cuh>
#include <spira/cuda/detail/pairwise_intersection_device.cuh>
#include <spira/detail/knn_policy.hpp>
#include <spira/memory.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace spira::detail {

#if defined(__CUDACC__)

/// Whether rows x and y store the same columns with equal (==), finite values. The whole warp
/// calls it and gets the answer.
template <class ValueT, class IndexT>
__device__ inline bool warp_rows_equal_finite(const IndexT* x_col, const ValueT* x_val, offset_t nx,
                                              const IndexT* y_col, const ValueT* y_val, offset_t ny)
{
  const int lane = int(threadIdx.x) & 31;
  bool equal = nx == ny;
  // Four entries a lane a round, their loads independent of each other's comparisons.
  for (offset_t e0 = lane; equal && e0 < nx; e0 += 32 * 4) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const offset_t e = e0 + 32 * u;
      if (e < nx) {
        const ValueT x = x_val[e];
        equal &= (x_col[e] == y_col[e]) & (x == y_val[e]) & isfinite(x);
      }
    }
  }
  return __all_sync(0xffffffffu, equal);
}

/// Whether the norms of row i (`a`) and row j (`b`) - D's per-row terms, which the direct form
/// reads beside the values - are equal and finite.
template <class Norms>
__device__ inline bool knn_norms_equal_finite(const Norms* a, std::int64_t i, const Norms* b,
                                              std::int64_t j)
{
  bool ok = true;
  if constexpr (Norms::size > 0) {
#pragma unroll
    for (int t = 0; t < Norms::size; ++t) {
      ok = ok && a[i][t] == b[j][t] && isfinite(a[i][t]);
    }
  }
  return ok;
}

/// The open-addressing table of knn_equal_rows: hash -> the smallest index row with it. A key of 0
/// is an empty slot (no hash is 0); rows start at all ones.
struct knn_row_table {
  unsigned long long* keys;
  unsigned long long* rows;
  unsigned long long mask;  ///< slots - 1 (a power of two)
};

/// A hash of a row's columns and values that equal rows share (+0 and -0 alike), never 0; with
/// `finite`, whether all its values are finite. The whole warp calls it and gets both.
template <class ValueT, class IndexT>
__device__ inline unsigned long long warp_row_hash(const IndexT* col, const ValueT* val, offset_t n,
                                                   bool& finite)
{
  const auto mix = [](unsigned long long z) {  // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  const int lane = int(threadIdx.x) & 31;
  unsigned long long h = 0;
  bool ok = true;
  for (offset_t e = lane; e < n; e += 32) {
    const ValueT x = val[e];
    ok &= bool(isfinite(x));
    const double v = x == ValueT(0) ? 0.0 : double(x);
    h += mix((static_cast<unsigned long long>(std::int64_t(col[e])) * 0x9e3779b97f4a7c15ull) ^
             static_cast<unsigned long long>(__double_as_longlong(v)));
  }
#pragma unroll
  for (int d = 16; d > 0; d /= 2) {
    h += __shfl_xor_sync(0xffffffffu, h, d);
  }
  finite = __all_sync(0xffffffffu, ok);
  h = mix(h ^ static_cast<unsigned long long>(n));
  return h == 0 ? 1 : h;
}

/// Hashes every index row with finite values and norms into `t` (hashes[j]: its hash, 0 where a
/// value or a norm is not finite). A warp a row.
template <class D, class ValueT, class IndexT>
__global__ void knn_equal_rows_insert_kernel(intersection_args<D, ValueT, IndexT> p,
                                             knn_row_table t, unsigned long long* hashes)
{
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t j = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; j < p.rows_b;
       j += warps) {
    const offset_t b0 = p.b_ptr[j];
    bool finite = false;
    const unsigned long long h =
        warp_row_hash(p.b_col + b0, p.b_val + b0, p.b_ptr[j + 1] - b0, finite);
    finite = finite && knn_norms_equal_finite(p.norms_b, j, p.norms_b, j);
    if ((threadIdx.x & 31) == 0) {
      hashes[j] = finite ? h : 0ull;
      for (unsigned long long s = h & t.mask; finite; s = (s + 1) & t.mask) {
        const unsigned long long old = atomicCAS(&t.keys[s], 0ull, h);
        if (old == 0ull || old == h) {
          atomicMin(&t.rows[s], static_cast<unsigned long long>(j));
          break;
        }
      }
    }
  }
}

/// The class of each query row (Queries) or index row: the smallest index row equal to it, or -1.
/// The index rows' hashes come from knn_equal_rows_insert_kernel; a query row's are computed here.
/// A warp a row.
template <bool Queries, class D, class ValueT, class IndexT>
__global__ void knn_equal_rows_class_kernel(intersection_args<D, ValueT, IndexT> p, knn_row_table t,
                                            const unsigned long long* hashes, std::int64_t* classes)
{
  const int lane = int(threadIdx.x) & 31;
  const std::int64_t rows = Queries ? p.rows_a : p.rows_b;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows;
       i += warps) {
    const offset_t x0 = Queries ? p.a_ptr[i] : p.b_ptr[i];
    const offset_t nx = (Queries ? p.a_ptr[i + 1] : p.b_ptr[i + 1]) - x0;
    const IndexT* x_col = (Queries ? p.a_col : p.b_col) + x0;
    const ValueT* x_val = (Queries ? p.a_val : p.b_val) + x0;
    unsigned long long h = 0;
    if constexpr (Queries) {
      bool finite = false;
      h = warp_row_hash(x_col, x_val, nx, finite);
      h = finite ? h : 0ull;
    } else {
      h = hashes[i];
    }
    long long r = -1;
    if (h != 0 && lane == 0) {
      for (unsigned long long s = h & t.mask;; s = (s + 1) & t.mask) {
        const unsigned long long key = t.keys[s];
        if (key == h) {
          r = static_cast<long long>(t.rows[s]);
        }
        if (key == h || key == 0ull) {
          break;
        }
      }
    }
    r = __shfl_sync(0xffffffffu, r, 0);
    if (r >= 0 && !(!Queries && r == i)) {
      const offset_t y0 = p.b_ptr[r];
      const bool equal = warp_rows_equal_finite(x_col, x_val, nx, p.b_col + y0, p.b_val + y0,
                                                p.b_ptr[r + 1] - y0) &&
                         knn_norms_equal_finite(Queries ? p.norms_a : p.norms_b, i, p.norms_b, r);
      r = equal ? r : -1;
    }
    if (lane == 0) {
      classes[i] = r;
    }
  }
}

/// The classes of the query and index rows of one fused k-NN call (see the top of this file),
/// computed on res.stream when D declares zero_self_distance; nullptr pointers otherwise. The table
/// is released (stream-ordered) once the classes are written.
template <class D, class ValueT, class IndexT>
class knn_equal_rows {
 public:
  static constexpr bool used = accuracy_traits<D, double>::zero_self;

  /// `self`: the queries are the index (same matrix), and share its classes.
  knn_equal_rows(const cuda_resources& res, const intersection_args<D, ValueT, IndexT>& p,
                 bool self, int sms)
  {
    if constexpr (used) {
      const std::uint64_t slots = knn_equal_rows_slots(p.rows_b);
      keys_ = buffer<unsigned long long>(res, slots, "equal rows: hash table");
      table_rows_ = buffer<unsigned long long>(res, slots, "equal rows: hash table");
      hashes_ = buffer<unsigned long long>(res, std::size_t(p.rows_b), "equal rows: hashes");
      index_ = buffer<std::int64_t>(res, std::size_t(p.rows_b), "equal rows: index classes");
      SPIRA_CUDA_TRY(cudaMemsetAsync(keys_.data(), 0, slots * 8, res.stream));
      SPIRA_CUDA_TRY(cudaMemsetAsync(table_rows_.data(), 0xff, slots * 8, res.stream));
      const knn_row_table t{keys_.data(), table_rows_.data(), slots - 1};
      const unsigned block = cuda_pairwise_policy::row_threads;
      knn_equal_rows_insert_kernel<D, ValueT, IndexT>
          <<<elementwise_grid(p.rows_b * 32, sms), block, 0, res.stream>>>(p, t, hashes_.data());
      SPIRA_CHECK_LAUNCH();
      knn_equal_rows_class_kernel<false, D, ValueT, IndexT>
          <<<elementwise_grid(p.rows_b * 32, sms), block, 0, res.stream>>>(p, t, hashes_.data(),
                                                                           index_.data());
      SPIRA_CHECK_LAUNCH();
      if (!self) {
        queries_ = buffer<std::int64_t>(res, std::size_t(p.rows_a), "equal rows: query classes");
        knn_equal_rows_class_kernel<true, D, ValueT, IndexT>
            <<<elementwise_grid(p.rows_a * 32, sms), block, 0, res.stream>>>(p, t, nullptr,
                                                                             queries_.data());
        SPIRA_CHECK_LAUNCH();
      }
      keys_ = {};
      table_rows_ = {};
      hashes_ = {};
    }
  }

  [[nodiscard]] const std::int64_t* queries() const
  {
    return queries_.empty() ? index_.data() : queries_.data();
  }
  [[nodiscard]] const std::int64_t* index() const { return index_.data(); }

 private:
  buffer<unsigned long long> keys_, table_rows_, hashes_;
  buffer<std::int64_t> index_, queries_;
};

#endif  // __CUDACC__

}  // namespace spira::detail
