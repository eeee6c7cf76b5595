// spira: what every strategy of the CUDA pairwise engine shares: the compiled support
// (src/pairwise/pairwise_support.cu), device helpers (atomics, warp reductions, the finalize and
// the accuracy guard), the per-row kernels (norms, prepare, NAMM corrections) and the finalize of
// an accumulator tile. The context of one call (pairwise_context) and a B prepared once
// (pairwise_prepared) are in pairwise_context.cuh.
#pragma once

#include <spira/accuracy.hpp>
#include <spira/convert.hpp>
#include <spira/cuda/device.cuh>
#include <spira/cuda/error.cuh>
#include <spira/cuda/pairwise_strategy.hpp>
#include <spira/matrix.hpp>
#include <spira/memory.hpp>
#include <spira/resources.hpp>
#include <spira/semiring.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

namespace spira::detail {

// ---- compiled support (src/pairwise/pairwise_support.cu)
// ----------------------------------------------

/// One block's share of the hybrid kernel: entries [begin, end) of row `row` of the held matrix,
/// which are exactly its stored columns in [col_lo, col_hi). The parts of one row cover [0, cols).
struct hybrid_part {
  std::int64_t row;
  std::int64_t begin, end;
  std::int64_t col_lo, col_hi;
};

/// The parts of every row of a device CSR (row_ptr, col_idx): one per row when `max_part` <= 0,
/// else ceil(degree / max_part) parts of at most max_part entries (one for an empty row).
/// `row_part_offset` (host, rows + 1 entries) gives the parts of row i as [off[i], off[i+1]).
struct hybrid_partition {
  buffer<hybrid_part> parts;
  std::vector<std::int64_t> row_part_offset;
};
template <class IndexT>
hybrid_partition partition_rows(const cuda_resources& res, const offset_t* row_ptr,
                                const IndexT* col_idx, std::int64_t rows, std::int64_t cols,
                                std::int64_t max_part);

/// Row-major C (m x n, leading dimension ldc) = A (m x k, row-major, ld k) * Bᵀ (B n x k,
/// row-major, ld k) with cuBLAS in the precision of ValueT (no TF32: pedantic math mode).
template <class ValueT>
void gemm_abt(const cuda_resources& res, const ValueT* a, const ValueT* b, ValueT* c,
              std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t ldc);

/// Throws spira::invalid_argument naming the first negative value of a device CSR (by row and
/// column) when it has one.
template <class ValueT, class IndexT>
void check_nonnegative(const cuda_resources& res, csr_view<ValueT, IndexT> m, const char* op,
                       const char* name, const char* what);

/// Reads the number of SMs and the current device; small helpers shared with the library.
int multiprocessor_count(int device);

/// spira::transpose of a device CSR that the caller has already validated (no second validation
/// and its device round trip). src/convert/convert_cuda.cu.
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> transpose_validated(const cuda_resources& res,
                                               csr_view<ValueT, IndexT> a);

/// The column indices of a device CSR pair renumbered to the columns either stores, in
/// increasing order (column c becomes its rank among the used columns), and the number of used
/// columns. col_idx holds A's nnz_a renumbered indices, then B's nnz_b (pass nnz_b = 0 when B is
/// A). O(nnz_a + nnz_b) device memory (a radix sort of the indices); one read of the count
/// synchronises the stream. src/pairwise/pairwise_support.cu.
template <class IndexT>
struct renumbered_columns {
  buffer<IndexT> col_idx;
  std::int64_t used = 0;
};
template <class IndexT>
renumbered_columns<IndexT> renumber_columns(const cuda_resources& res, const IndexT* a_col,
                                            std::int64_t nnz_a, const IndexT* b_col,
                                            std::int64_t nnz_b, std::int64_t cols);

// ---- device helpers
// --------------------------------------------------------------------------------

#if defined(__CUDACC__)

constexpr unsigned full_warp = 0xffffffffu;

template <class T>
using cas_word_t = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>;

template <class T>
__device__ inline cas_word_t<T> to_word(T x)
{
  cas_word_t<T> w;
  std::memcpy(&w, &x, sizeof(T));
  return w;
}
template <class T>
__device__ inline T from_word(cas_word_t<T> w)
{
  T x;
  std::memcpy(&x, &w, sizeof(T));
  return x;
}

/// *addr = M(*addr, x), atomically, with the cheapest instruction the monoid's kind allows:
/// sum -> atomicAdd; max / min -> an integer atomicMax / atomicMin on the IEEE bit pattern (the
/// sign decides between the signed and the reversed unsigned order); anything else -> a
/// compare-and-swap loop over M that stops as soon as M leaves the value unchanged.
/// Works on shared and global memory.
template <class M, class T>
__device__ inline void atomic_combine(T* addr, T x)
{
  if constexpr (M::kind == monoid_kind::sum) {
    atomicAdd(addr, x);
  } else if constexpr (M::kind == monoid_kind::max || M::kind == monoid_kind::min) {
    constexpr bool is_max = M::kind == monoid_kind::max;
    // Non-negative x: the IEEE order is the signed-integer order of the bits. Negative x: the
    // order is reversed on the unsigned bits. Either way the stored value ends as M(old, x).
    if constexpr (sizeof(T) == 4) {
      const int bits = __float_as_int(float(x));
      if (bits >= 0) {
        if constexpr (is_max) {
          atomicMax(reinterpret_cast<int*>(addr), bits);
        } else {
          atomicMin(reinterpret_cast<int*>(addr), bits);
        }
      } else {
        if constexpr (is_max) {
          atomicMin(reinterpret_cast<unsigned int*>(addr), unsigned(bits));
        } else {
          atomicMax(reinterpret_cast<unsigned int*>(addr), unsigned(bits));
        }
      }
    } else {
      const long long bits = __double_as_longlong(double(x));
      using ull = unsigned long long;
      if (bits >= 0) {
        if constexpr (is_max) {
          atomicMax(reinterpret_cast<long long*>(addr), bits);
        } else {
          atomicMin(reinterpret_cast<long long*>(addr), bits);
        }
      } else {
        if constexpr (is_max) {
          atomicMin(reinterpret_cast<ull*>(addr), ull(bits));
        } else {
          atomicMax(reinterpret_cast<ull*>(addr), ull(bits));
        }
      }
    }
  } else {
    using W = cas_word_t<T>;
    W* word = reinterpret_cast<W*>(addr);
    W old = atomicAdd(word, W(0));  // an atomic read: no plain load races with the updates
    while (true) {
      const W next = to_word(M{}(from_word<T>(old), x));
      if (next == old) {
        return;
      }
      const W seen = atomicCAS(word, old, next);
      if (seen == old) {
        return;
      }
      old = seen;
    }
  }
}

/// Warp reduction of N terms with monoid M; lane 0 holds the result. The whole warp must call it.
template <class M, class T, int N>
__device__ inline terms<T, N> warp_reduce(terms<T, N> v)
{
  for (int off = 16; off > 0; off >>= 1) {
#pragma unroll
    for (int t = 0; t < N; ++t) {
      v[t] = M{}(v[t], __shfl_down_sync(full_warp, v[t], off));
    }
  }
  return v;
}

/// Norm-list warp reduction (each norm with its own monoid); lane 0 holds the result.
template <class Norms, class T>
__device__ inline typename Norms::template values<T> warp_reduce_norms(
    typename Norms::template values<T> v)
{
  if constexpr (Norms::size > 0) {
    for (int off = 16; off > 0; off >>= 1) {
      typename Norms::template values<T> other;
#pragma unroll
      for (int t = 0; t < Norms::size; ++t) {
        other[t] = __shfl_down_sync(full_warp, v[t], off);
      }
      Norms::combine(v, other);
    }
  }
  return v;
}

template <class M, class T, int N>
__device__ inline terms<T, N> identity_terms_d()
{
  terms<T, N> r;
#pragma unroll
  for (int t = 0; t < N; ++t) {
    r[t] = M::template identity<T>();
  }
  return r;
}

/// Murmur3's 64-bit finaliser: spreads consecutive column indices over the table.
__device__ inline std::uint64_t murmur_mix(std::uint64_t k)
{
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

/// The finalize of a distance in double, from an accumulator in T, norms in double.
template <class D, class T, int N, class NormValues>
__device__ inline double finalize_device(const D& d, const terms<T, N>& acc, const NormValues& na,
                                         const NormValues& nb, std::int64_t dim,
                                         const terms<double, N>* correction_sum)
{
  terms<double, N> total;
#pragma unroll
  for (int t = 0; t < N; ++t) {
    total[t] = double(acc[t]);
    if (correction_sum != nullptr) {
      total[t] = (*correction_sum)[t] + total[t];
    }
  }
  if constexpr (distance_traits<D, double>::has_finalize) {
    return double(d.template finalize<double>(from_terms(total), na, nb, dim));
  } else {
    return total[0];
  }
}

/// The guard's view of a pair from its accumulator in T: the total in double (a sum NAMM's
/// corrections added) and, per term, the magnitude |Σ ⊗(a,0)| + |Σ ⊗(0,b)| of the corrections.
template <class T, int N>
__device__ inline void guard_totals(const terms<T, N>& acc, const terms<double, N>* corr_a,
                                    const terms<double, N>* corr_b, terms<double, N>& total,
                                    terms<double, N>& magnitude)
{
#pragma unroll
  for (int t = 0; t < N; ++t) {
    total[t] = double(acc[t]);
    magnitude[t] = 0.0;
    if (corr_a != nullptr) {
      total[t] = ((*corr_a)[t] + (*corr_b)[t]) + total[t];
      magnitude[t] = fabs((*corr_a)[t]) + fabs((*corr_b)[t]);
    }
  }
}

/// The fast value of a pair of a guarded D and whether the guard trusts it (guard_trusts, with the
/// bounds of T, the type the products were summed in); an untrusted pair's value is left to its
/// caller, which evaluates it directly later (detail::direct_value), out of the hot kernel.
template <class D, class T, int N, class NormValues>
__device__ inline double trusted_pair_device(const D& d, const terms<T, N>& acc,
                                             const NormValues& na, const NormValues& nb,
                                             std::int64_t dim, const terms<double, N>* corr_a,
                                             const terms<double, N>* corr_b, bool& trusted)
{
  terms<double, N> total, magnitude;
  guard_totals(acc, corr_a, corr_b, total, magnitude);
  trusted = guard_trusts<D, double>(d, total, magnitude, na, nb, dim, accumulator_bounds_of<T>());
  return trusted ? finalize_total<D, double>(d, total, na, nb, dim) : 0.0;
}

/// The value of pair (x, y) from its accumulator in T (and, for a sum NAMM, its rows'
/// corrections): finalize_device, through the accuracy guard where D has one (spira/accuracy.hpp;
/// the bounds are those of T, the type the products were summed in). x and y are the pair's rows,
/// as ⊗ sees them.
template <class D, class T, int N, class NormValues, class ValueT, class IndexT>
__device__ inline double finalize_pair_device(const D& d, const terms<T, N>& acc,
                                              const NormValues& na, const NormValues& nb,
                                              std::int64_t dim, const terms<double, N>* corr_a,
                                              const terms<double, N>* corr_b,
                                              csr_rows<ValueT, IndexT> a, std::int64_t i,
                                              csr_rows<ValueT, IndexT> b, std::int64_t j)
{
  if constexpr (accuracy_traits<D, double>::guarded) {
    terms<double, N> total, magnitude;
    guard_totals(acc, corr_a, corr_b, total, magnitude);
    return guarded_finalize<D, double>(d, total, magnitude, na, nb, dim, a, i, b, j,
                                       accumulator_bounds_of<T>());
  } else {
    if (corr_a != nullptr) {
      terms<double, N> corr;
#pragma unroll
      for (int t = 0; t < N; ++t) {
        corr[t] = (*corr_a)[t] + (*corr_b)[t];
      }
      return finalize_device(d, acc, na, nb, dim, &corr);
    }
    return finalize_device(d, acc, na, nb, dim, static_cast<const terms<double, N>*>(nullptr));
  }
}

/// The one-sided terms ⊗(x, 0) (Left) or ⊗(0, x), in double. The NAMM corrections are sums of
/// exactly these values and the intersection kernel subtracts exactly these values, so the two
/// cancel to the rounding of double sums.
template <class D, bool Left, class ValueT>
__device__ inline auto one_sided_d(const D& d, ValueT x)
{
  return as_terms(Left ? d.template multiply<double>(double(x), 0.0)
                       : d.template multiply<double>(0.0, double(x)));
}

// ---- per-row kernels (one warp per row)
// ------------------------------------------------------------

/// norms[i] = the norm list of D over the raw stored values of row i (in double).
template <class Norms, class ValueT>
__global__ void row_norms_kernel(const offset_t* row_ptr, const ValueT* values, std::int64_t rows,
                                 typename Norms::template values<double>* norms)
{
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows;
       i += warps) {
    auto acc = Norms::template identity<double>();
    for (offset_t k = row_ptr[i] + lane; k < row_ptr[i + 1]; k += 32) {
      Norms::accumulate(acc, double(values[k]));
    }
    acc = warp_reduce_norms<Norms, double>(acc);
    if (lane == 0) {
      norms[i] = acc;
    }
  }
}

/// out[k] = d.prepare(values[k], prepare_norm(row)) for every stored entry (the jensenshannon
/// row normalisation); the pattern is unchanged.
template <class D, class ValueT>
__global__ void prepare_kernel(D d, const offset_t* row_ptr, const ValueT* values,
                               std::int64_t rows, ValueT* out)
{
  using pnorm = norm_list<typename D::prepare_norm>;
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows;
       i += warps) {
    auto s = pnorm::template identity<double>();
    for (offset_t k = row_ptr[i] + lane; k < row_ptr[i + 1]; k += 32) {
      pnorm::accumulate(s, double(values[k]));
    }
    s = warp_reduce_norms<pnorm, double>(s);
    const double scale = __shfl_sync(full_warp, s[0], 0);
    for (offset_t k = row_ptr[i] + lane; k < row_ptr[i + 1]; k += 32) {
      out[k] = ValueT(d.template prepare<double>(double(values[k]), scale));
    }
  }
}

/// NAMM corrections: corr[i] = Σ over row i of ⊗(x, 0) (left operand) or ⊗(0, x) (right).
template <class D, class ValueT, int N, bool Left>
__global__ void corrections_kernel(D d, const offset_t* row_ptr, const ValueT* values,
                                   std::int64_t rows, terms<double, N>* corr)
{
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows;
       i += warps) {
    terms<double, N> s;
#pragma unroll
    for (int t = 0; t < N; ++t) {
      s[t] = 0.0;
    }
    for (offset_t k = row_ptr[i] + lane; k < row_ptr[i + 1]; k += 32) {
      const auto p = one_sided_d<D, Left>(d, values[k]);
#pragma unroll
      for (int t = 0; t < N; ++t) {
        s[t] += double(p[t]);
      }
    }
    s = warp_reduce<plus_monoid, double, N>(s);
    if (lane == 0) {
      corr[i] = s;
    }
  }
}

/// row_idx[k] = the row of entry k (COO row indices of a CSR, in CSR order).
template <class IndexT>
__global__ void expand_row_indices(const offset_t* row_ptr, std::int64_t rows, IndexT* row_idx)
{
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows;
       i += warps) {
    for (offset_t k = row_ptr[i] + lane; k < row_ptr[i + 1]; k += 32) {
      row_idx[k] = IndexT(i);
    }
  }
}

/// Fills count elements of an accumulator (row-major, rows x cols, leading dimension ld, N terms
/// interleaved) with the identity of M.
template <class M, class T>
__global__ void fill_identity_kernel(T* acc, std::int64_t rows, std::int64_t cols, std::int64_t ld)
{
  const std::int64_t total = rows * cols;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += stride) {
    acc[(e / cols) * ld + e % cols] = M::template identity<T>();
  }
}

/// out(i, j) = finalize(acc(i, j), norms) for an accumulator tile of rows [row0, row0 + rows),
/// through the accuracy guard (a and b: the operands, for pairs it evaluates directly).
template <class D, class ValueT, class IndexT>
__global__ void finalize_tile_kernel(
    D d, const ValueT* acc, std::int64_t acc_ld, ValueT* out, std::int64_t out_ld,
    std::int64_t row0, std::int64_t rows, std::int64_t cols_b, std::int64_t dim,
    const typename distance_traits<D, double>::norm_values* norms_a,
    const typename distance_traits<D, double>::norm_values* norms_b,
    const terms<double, distance_traits<D, ValueT>::num_terms>* corr_a,
    const terms<double, distance_traits<D, ValueT>::num_terms>* corr_b, csr_view<ValueT, IndexT> a,
    csr_view<ValueT, IndexT> b)
{
  constexpr int N = distance_traits<D, ValueT>::num_terms;
  const std::int64_t total = rows * cols_b;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += stride) {
    const std::int64_t r = e / cols_b, j = e % cols_b, i = row0 + r;
    terms<ValueT, N> acc_ij;
#pragma unroll
    for (int t = 0; t < N; ++t) {
      acc_ij[t] = acc[r * acc_ld + j * N + t];
    }
    out[i * out_ld + j] = ValueT(finalize_pair_device(
        d, acc_ij, norms_a[i], norms_b[j], dim, corr_a != nullptr ? &corr_a[i] : nullptr,
        corr_b != nullptr ? &corr_b[j] : nullptr, rows_of(a), i, rows_of(b), j));
  }
}

#endif  // __CUDACC__

}  // namespace spira::detail
