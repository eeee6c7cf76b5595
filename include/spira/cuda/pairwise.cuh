// spira: the CUDA pairwise engine, out = finalize(A ⊕.⊗ Bᵀ), for any semiring or distance struct.
//
// Include this header from a .cu file to run a user-defined semiring on the GPU; the kernels are
// templates and are instantiated for the user's struct in the user's translation unit:
//
//   #include <spira/cuda/pairwise.cuh>
//   struct my_namm { ... };                                // as for the host engine (spira/ops.hpp)
//   spira::pairwise(cuda_res, a_dev, b_dev, out_dev, my_namm{});
//   spira::pairwise(cuda_res, a_dev, b_dev, out_dev, my_namm{}, spira::pairwise_strategy::hybrid);
//   spira::pairwise(cuda_res, a_dev, b_dev, out_dev, my_namm{}, spira::pairwise_strategy::dense,
//                   std::size_t(64) << 20);  // densified tiles of at most 64 MiB
//
// The built-in metrics are compiled into the library (spira::pairwise_distance with
// cuda_resources, spira/distance.hpp) and need no CUDA compiler in the user's build.
//
// ---- Semantics ---------------------------------------------------------------------------------
// Exactly those of the host engine (spira/ops.hpp, docs/semirings.md): the intersection of the
// stored columns for annihilating semirings, the union for NAMMs; norms from the raw rows, the
// product on the prepared rows (D::prepare); finalize(acc, norms(A_i), norms(B_j), cols).
// Arithmetic: the intersection strategy accumulates sum-kind ⊕ in double where the finalize
// cancels (intersection_sums_in_double, intersection_accumulator_t), forms dot products in double
// and other ⊗ in V with their one-sided NAMM terms in double (intersection_multiply_d); hybrid and
// dense run in the value type V; row norms, NAMM corrections and finalize run in double everywhere. Sum-kind ⊕ is accumulated with atomics, whose
// order varies: float results may differ from the host engine (which accumulates in double) in the
// last bits, and the hybrid and dense strategies also between runs; the double accumulators of the
// intersection strategy make such differences rare after rounding but do not exclude them.
// min / max / or / any results are exact.
//
// ---- Strategies (spira::pairwise_strategy; docs/cuda-engine.md) --------------------------------
//   intersection  the CSC of B (spira::transpose, built once) is walked from the nonzeros of each
//                 row of A; products accumulate with the add monoid's atomic in a shared-memory
//                 tile of output columns, and finalize is fused into the tile's write-out. Work
//                 follows the products that exist: Σ_c nnz(A[:,c]) nnz(B[:,c]). NAMMs with a
//                 sum-kind ⊕ use ⊗(a,b) - ⊗(a,0) - ⊗(0,b) plus per-row corrections (one pass).
//                 One-term NAMMs with a min / max ⊕ (chebyshev) combine the intersection with,
//                 per pair, each row's best one-sided term outside the other row (from 4
//                 precomputed candidates per row and a binary search in the other row; pairs
//                 whose candidates are all shared are finished by one warp per pair).
//                 Not available for NAMMs with another ⊕ (those take `hybrid`).
//   hybrid        the seed paper's load-balanced hybrid CSR+COO kernel (Nolet et al., section 3.3):
//                 a block holds one row (or a column range of a long row) of A in shared memory,
//                 dense when the dimension fits, else in a Murmur-hashed linear-probing table at
//                 <= 50% load; its threads stride over B's nonzeros in COO order with a warp
//                 segmented reduction keyed on B's row and one atomic ⊕ per segment. NAMMs add
//                 the second pass with A and B swapped that skips the columns the first counted.
//                 Works for every semiring; work rows(A) x nnz(B) (+ rows(B) x nnz(A)).
//   dense         for distances whose ⊗ is a product of per-element maps (dot_product_form):
//                 densified row tiles of A and B, one cuBLAS GEMM per tile pair (float32 or
//                 float64, never TF32), finalize over the output tile.
//   automatic     choose_strategy() below, from the shapes, the densities and D's traits, and
//                 for min / max NAMMs from two statistics measured on the device.
//
// Memory: the output, plus O(nnz(A) + nnz(B) + rows) workspace whatever number of columns A and B
// declare (when it exceeds nnz(A) + nnz(B), the columns are first renumbered to the ones either
// operand stores, by a radix sort of the column indices, and finalize still receives the declared
// count: pairwise_context::compress_columns), plus for `hybrid` an accumulator tile of at most
// cuda_pairwise_policy::workspace_bytes when a distance has several accumulator terms, plus for
// `dense` densified tiles (of the used columns) of at most cuda_pairwise_policy::dense_tile_bytes.
// The last argument of spira::pairwise (distance_params::workspace_bytes for the built-in metrics)
// caps both tiles: 0 keeps the defaults, a cap takes min(default, cap), and a cap below one
// minimal tile (workspace_minimum) throws spira::invalid_argument. Every output index is 64-bit:
// outputs beyond 2^31 elements are fine.
#pragma once

#include <semirings/distances.hpp>
#include <semirings/graphblas.hpp>
#include <spira/accuracy.hpp>
#include <spira/convert.hpp>
#include <spira/cuda/error.cuh>
#include <spira/distance.hpp>
#include <spira/matrix.hpp>
#include <spira/memory.hpp>
#include <spira/resources.hpp>
#include <spira/semiring.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace spira {

// ---- tuning ---------------------------------------------------------------------------------------

/// Launch shapes and size limits of the CUDA pairwise engine, tuned for sm_90 (H100 / H200: 132
/// SMs, 228 KB shared memory per SM, 64 warps per SM). Every constant used by a kernel launch or a
/// strategy decision is here.
struct cuda_pairwise_policy_sm90 {
  // intersection
  /// Threads per block of the CSC intersection kernel.
  static constexpr int intersection_threads = 256;
  /// Shared-memory accumulator tile per block (the output columns one block owns at a time:
  /// 6,912 float or 3,456 double accumulators). 27 KB is the most that keeps 8 blocks (64 warps)
  /// resident per SM (8 x (27 + 1 reserved) KB = 224 KB of the 228 KB), and 3,456 double columns
  /// hold uci-bow-kos (3,430 rows) in one tile.
  static constexpr std::size_t intersection_shared_bytes = 27 * 1024;
  /// Entries of a column of B each lane loads before combining them (memory-level parallelism of
  /// the column walk: the loads of one round are independent).
  static constexpr int intersection_unroll = 4;
  /// Selection NAMMs (chebyshev): pairs whose K best one-sided entries are all shared with the
  /// other row are finished by a second kernel, one warp per pair; the list holds at most
  /// max(nnz(A) + nnz(B), this) pairs (beyond it, the pair's thread scans the row itself).
  static constexpr std::int64_t selection_fallback_min_capacity = std::int64_t(1) << 16;
  /// Pairs sampled (deterministically) by `automatic` to estimate the selection fix-up's work.
  static constexpr std::int64_t selection_samples = 8192;
  /// `automatic` takes `intersection` for a selection NAMM when its work (products plus fix-up
  /// search steps) is at most this multiple of the hybrid kernel's work (rows(A) nnz(B) +
  /// rows(B) nnz(A)). Measured on the H200 (bench/results/pairwise_gpu-2026-11-21.jsonl): the
  /// hybrid kernel visits about 1.2e11 (row, entry) pairs per second, the intersection kernel
  /// forms about 2.4e11 products per second and the fix-up does about 2.7e11 search steps per
  /// second, so intersection wins when products + steps < about 2 x the hybrid work.
  static constexpr double selection_intersection_factor = 2.0;
  // hybrid
  /// Threads per block of the hybrid kernel (the paper uses 32 warps; 8 leave room for more
  /// resident blocks, which hides the hash-table setup of each block).
  static constexpr int hybrid_threads = 256;
  /// Shared memory per block for the held row: a dense array (dimension <= about 5.8K float
  /// columns) or a hash table of 2^k slots.
  static constexpr std::size_t hybrid_shared_bytes = 24 * 1024;
  /// Enough blocks for several waves: blocks per SM the hybrid grid aims for.
  static constexpr int hybrid_blocks_per_sm = 16;
  // shared by several strategies
  /// Threads per block of the per-row (warp-per-row) and element-wise helper kernels.
  static constexpr int row_threads = 256;
  /// Largest accumulator tile (bytes) of the hybrid strategy when the output cannot be its own
  /// accumulator (distances with several terms). A caller's cap (the workspace_bytes argument of
  /// spira::pairwise) lowers it. Exceeded only by one row of a B so wide that a single row of the
  /// tile is larger, when no cap is given.
  static constexpr std::size_t workspace_bytes = std::size_t(512) << 20;
  // dense
  /// Largest pair of densified tiles of A and B (bytes) for the dense strategy; a caller's cap
  /// lowers it.
  static constexpr std::size_t dense_tile_bytes = std::size_t(1) << 30;
  /// `automatic` picks `dense` for dot-product-form distances when both operands have at least
  /// this fraction of nonzeros and the dimension is at most dense_max_dim.
  static constexpr double dense_min_density = 0.03;
  static constexpr std::int64_t dense_max_dim = 65536;
};
using cuda_pairwise_policy = cuda_pairwise_policy_sm90;

// ---- traits ---------------------------------------------------------------------------------------

/// A distance whose multiply is ⊗(a, b) = map(a) * map(b) with a sum-kind ⊕, one accumulator term
/// and an annihilating flag: the dense strategy evaluates it as a GEMM of the mapped, densified
/// operands. Specialise for a user distance with `value = true` and a static `map<T>(x)` (map(0)
/// must be 0).
template <class D>
struct dot_product_form : std::false_type {};

namespace detail {
struct identity_form {
  template <class T>
  SPIRA_HD static T map(T x)
  {
    return x;
  }
};
struct indicator_form {
  template <class T>
  SPIRA_HD static T map(T x)
  {
    return x != T(0) ? T(1) : T(0);
  }
};
struct sqrt_form {
  template <class T>
  SPIRA_HD static T map(T x)
  {
    return sqrt(x);
  }
};
}  // namespace detail

template <> struct dot_product_form<distances::inner_product> : std::true_type, detail::identity_form {};
template <> struct dot_product_form<distances::sqeuclidean> : std::true_type, detail::identity_form {};
template <> struct dot_product_form<distances::euclidean> : std::true_type, detail::identity_form {};
template <> struct dot_product_form<distances::cosine> : std::true_type, detail::identity_form {};
template <> struct dot_product_form<distances::correlation> : std::true_type, detail::identity_form {};
template <> struct dot_product_form<distances::dice> : std::true_type, detail::indicator_form {};
template <> struct dot_product_form<distances::russellrao> : std::true_type, detail::indicator_form {};
template <> struct dot_product_form<distances::hellinger> : std::true_type, detail::sqrt_form {};
template <> struct dot_product_form<semirings::plus_times> : std::true_type, detail::identity_form {};

/// Whether the intersection strategy accumulates D's ⊕ in double (else in the value type V).
/// Default: every sum-kind ⊕, because sums feed cancelling finalizes (NAMM corrections, norm
/// expansions). Distances whose finalize does not cancel (a dot product used as it is, or divided
/// by the norms) accumulate in V: half the shared memory per output column and cheaper atomics,
/// with a relative error of the float sum (about 1e-7 of Σ|a b|). Specialise for a user distance.
template <class D>
struct intersection_sums_in_double
  : std::bool_constant<D::add_monoid::kind == monoid_kind::sum> {};
template <> struct intersection_sums_in_double<distances::cosine> : std::false_type {};
template <> struct intersection_sums_in_double<distances::inner_product> : std::false_type {};
template <> struct intersection_sums_in_double<semirings::plus_times> : std::false_type {};

/// Whether `automatic` may run D with the dense strategy on values of type V: its GEMM sums in V,
/// and a float sum cannot feed an expansion that the accuracy guard checks (spira/accuracy.hpp:
/// every pair would be recomputed directly), so float data with euclidean, sqeuclidean,
/// correlation or hellinger runs sparse. Forcing dense stays correct (the guard), only slower.
template <class D, class V>
inline constexpr bool dense_keeps_accuracy_v = sizeof(V) >= sizeof(double) ||
                                               !accuracy_traits<D, double>::has_trusted ||
                                               !intersection_sums_in_double<D>::value;

/// Cheap statistics of a pairwise problem, for choose_strategy.
struct pairwise_problem {
  std::int64_t rows_a = 0, rows_b = 0, cols = 0, nnz_a = 0, nnz_b = 0;
  bool annihilating = true;    ///< D::annihilating
  bool invertible_add = true;  ///< ⊕ is a sum (a NAMM's union becomes intersection + corrections)
  bool dot_product = false;    ///< dot_product_form<D>::value
  /// A one-term NAMM whose ⊕ is min or max (chebyshev): the intersection strategy adds a per-pair
  /// fix-up whose cost depends on the values (see selection_scan).
  bool selection = false;
  /// Σ_c nnz(A[:,c]) nnz(B[:,c]): the products of the intersection strategy (negative: unknown).
  double products = -1;
  /// Estimated binary-search steps of the selection fix-up over all pairs (negative: unknown):
  /// from a deterministic sample of pairs, the rows that must be scanned because all their
  /// candidates are shared, times log2 of the other row's degree.
  double selection_scan = -1;
};

/// The strategy `automatic` runs:
///   dense         dot-product form, both densities >= dense_min_density and cols <= dense_max_dim
///                 (a GEMM beats any sparse kernel on dense-ish data such as single-cell counts);
///   intersection  otherwise, when the semiring is annihilating or its ⊕ is a sum (work follows
///                 the products that exist);
///   intersection  for a selection NAMM (min / max ⊕, e.g. chebyshev) whose measured work,
///                 products + selection_scan, is at most selection_intersection_factor times the
///                 hybrid work rows(A) nnz(B) + rows(B) nnz(A): sparse data whose rows rarely share
///                 their largest entries (tf-idf, bag of words, ratings);
///   hybrid        otherwise: selection NAMMs on data whose rows share their largest entries (the
///                 fix-up would scan most pairs: single-cell counts), selection NAMMs whose
///                 statistics were not measured, and NAMMs with a custom ⊕.
/// spira::pairwise measures `products` and `selection_scan` on the device for selection NAMMs
/// (one small sampling kernel and one 16-byte read) before it calls this function again.
inline pairwise_strategy choose_strategy(const pairwise_problem& p)
{
  using policy = cuda_pairwise_policy;
  const auto density = [&](std::int64_t nnz, std::int64_t rows) {
    return rows == 0 || p.cols == 0 ? 0.0 : double(nnz) / (double(rows) * double(p.cols));
  };
  if (p.dot_product && p.cols <= policy::dense_max_dim &&
      density(p.nnz_a, p.rows_a) >= policy::dense_min_density &&
      density(p.nnz_b, p.rows_b) >= policy::dense_min_density) {
    return pairwise_strategy::dense;
  }
  if (p.annihilating || p.invertible_add) { return pairwise_strategy::intersection; }
  if (p.selection && p.products >= 0 && p.selection_scan >= 0) {
    const double hybrid_work =
      double(p.rows_a) * double(p.nnz_b) + double(p.rows_b) * double(p.nnz_a);
    if (p.products + p.selection_scan <= policy::selection_intersection_factor * hybrid_work) {
      return pairwise_strategy::intersection;
    }
  }
  return pairwise_strategy::hybrid;
}

namespace detail {

/// A NAMM whose ⊕ is a sum: the intersection strategy adds per-row corrections.
template <class D, class V>
inline constexpr bool sum_namm_v = !D::annihilating && D::add_monoid::kind == monoid_kind::sum;

/// A one-term NAMM whose ⊕ is a selection (min or max). Its union is
///   ⊕( ⊕_{A_i ∩ B_j} ⊗(a, b),  best_{c ∈ A_i \ B_j} ⊗(a_c, 0),  best_{c ∈ B_j \ A_i} ⊗(0, b_c) )
/// and each "best outside the other row" is the first entry, in ⊕-order, whose column the other
/// row does not store: usually the row's best entry itself. The intersection strategy evaluates
/// the first term with its kernel and the other two per pair from a few precomputed candidates.
template <class D, class V>
inline constexpr bool selection_namm_v =
  !D::annihilating && distance_traits<D, V>::num_terms == 1 &&
  (D::add_monoid::kind == monoid_kind::min || D::add_monoid::kind == monoid_kind::max);

// ---- compiled support (src/cuda/pairwise_support.cu) ----------------------------------------------

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
template <class I>
hybrid_partition partition_rows(const cuda_resources& res, const offset_t* row_ptr,
                                const I* col_idx, std::int64_t rows, std::int64_t cols,
                                std::int64_t max_part);

/// Row-major C (m x n, leading dimension ldc) = A (m x k, row-major, ld k) * Bᵀ (B n x k, row-major,
/// ld k) with cuBLAS in the precision of V (no TF32: pedantic math mode).
template <class V>
void gemm_abt(const cuda_resources& res, const V* a, const V* b, V* c, std::int64_t m,
              std::int64_t n, std::int64_t k, std::int64_t ldc);

/// Throws spira::invalid_argument naming the first negative value of a device CSR (by row and
/// column) when it has one.
template <class V, class I>
void check_nonnegative(const cuda_resources& res, csr_view<V, I> m, const char* op,
                       const char* name, const char* what);

/// Reads the number of SMs and the current device; small helpers shared with the library.
int multiprocessor_count(int device);

/// spira::transpose of a device CSR that the caller has already validated (no second validation
/// and its device round trip). src/cuda/convert.cu.
template <class V, class I>
csr_matrix<V, I> transpose_validated(const cuda_resources& res, csr_view<V, I> a);

/// The column indices of a device CSR pair renumbered to the columns either stores, in
/// increasing order (column c becomes its rank among the used columns), and the number of used
/// columns. col_idx holds A's nnz_a renumbered indices, then B's nnz_b (pass nnz_b = 0 when B is
/// A). O(nnz_a + nnz_b) device memory (a radix sort of the indices); one read of the count
/// synchronises the stream. src/cuda/pairwise_support.cu.
template <class I>
struct renumbered_columns {
  buffer<I> col_idx;
  std::int64_t used = 0;
};
template <class I>
renumbered_columns<I> renumber_columns(const cuda_resources& res, const I* a_col,
                                       std::int64_t nnz_a, const I* b_col, std::int64_t nnz_b,
                                       std::int64_t cols);

/// Makes res.device current for a scope (as every CUDA entry point of spira does).
class pairwise_device_scope {
 public:
  explicit pairwise_device_scope(int device)
  {
    SPIRA_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) {
      SPIRA_CUDA_TRY(cudaSetDevice(device));
      changed_ = true;
    }
  }
  ~pairwise_device_scope()
  {
    if (changed_) { SPIRA_CUDA_TRY_NO_THROW(cudaSetDevice(previous_)); }
  }
  pairwise_device_scope(const pairwise_device_scope&) = delete;
  pairwise_device_scope& operator=(const pairwise_device_scope&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

// ---- device helpers --------------------------------------------------------------------------------

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
        if constexpr (is_max) { atomicMax(reinterpret_cast<int*>(addr), bits); }
        else { atomicMin(reinterpret_cast<int*>(addr), bits); }
      } else {
        if constexpr (is_max) { atomicMin(reinterpret_cast<unsigned int*>(addr), unsigned(bits)); }
        else { atomicMax(reinterpret_cast<unsigned int*>(addr), unsigned(bits)); }
      }
    } else {
      const long long bits = __double_as_longlong(double(x));
      using ull = unsigned long long;
      if (bits >= 0) {
        if constexpr (is_max) { atomicMax(reinterpret_cast<long long*>(addr), bits); }
        else { atomicMin(reinterpret_cast<long long*>(addr), bits); }
      } else {
        if constexpr (is_max) { atomicMin(reinterpret_cast<ull*>(addr), ull(bits)); }
        else { atomicMax(reinterpret_cast<ull*>(addr), ull(bits)); }
      }
    }
  } else {
    using W = cas_word_t<T>;
    W* word = reinterpret_cast<W*>(addr);
    W old = atomicAdd(word, W(0));  // an atomic read: no plain load races with the updates
    while (true) {
      const W next = to_word(M{}(from_word<T>(old), x));
      if (next == old) { return; }
      const W seen = atomicCAS(word, old, next);
      if (seen == old) { return; }
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
    for (int t = 0; t < N; ++t) { v[t] = M{}(v[t], __shfl_down_sync(full_warp, v[t], off)); }
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
      for (int t = 0; t < Norms::size; ++t) { other[t] = __shfl_down_sync(full_warp, v[t], off); }
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
  for (int t = 0; t < N; ++t) { r[t] = M::template identity<T>(); }
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
    if (correction_sum != nullptr) { total[t] = (*correction_sum)[t] + total[t]; }
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
template <class D, class T, int N, class NormValues, class V, class I>
__device__ inline double finalize_pair_device(const D& d, const terms<T, N>& acc,
                                              const NormValues& na, const NormValues& nb,
                                              std::int64_t dim, const terms<double, N>* corr_a,
                                              const terms<double, N>* corr_b, csr_rows<V, I> a,
                                              std::int64_t i, csr_rows<V, I> b, std::int64_t j)
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
      for (int t = 0; t < N; ++t) { corr[t] = (*corr_a)[t] + (*corr_b)[t]; }
      return finalize_device(d, acc, na, nb, dim, &corr);
    }
    return finalize_device(d, acc, na, nb, dim, static_cast<const terms<double, N>*>(nullptr));
  }
}


/// The one-sided terms ⊗(x, 0) (Left) or ⊗(0, x), in double. The NAMM corrections are sums of
/// exactly these values and the intersection kernel subtracts exactly these values, so the two
/// cancel to the rounding of double sums.
template <class D, bool Left, class V>
__device__ inline auto one_sided_d(const D& d, V x)
{
  return as_terms(Left ? d.template multiply<double>(double(x), 0.0)
                       : d.template multiply<double>(0.0, double(x)));
}

// ---- per-row kernels (one warp per row) ------------------------------------------------------------

/// norms[i] = the norm list of D over the raw stored values of row i (in double).
template <class Norms, class V>
__global__ void row_norms_kernel(const offset_t* row_ptr, const V* values, std::int64_t rows,
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
    if (lane == 0) { norms[i] = acc; }
  }
}

/// out[k] = d.prepare(values[k], prepare_norm(row)) for every stored entry (the jensenshannon
/// row normalisation); the pattern is unchanged.
template <class D, class V>
__global__ void prepare_kernel(D d, const offset_t* row_ptr, const V* values, std::int64_t rows,
                               V* out)
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
      out[k] = V(d.template prepare<double>(double(values[k]), scale));
    }
  }
}

/// NAMM corrections: corr[i] = Σ over row i of ⊗(x, 0) (left operand) or ⊗(0, x) (right).
template <class D, class V, int N, bool Left>
__global__ void corrections_kernel(D d, const offset_t* row_ptr, const V* values,
                                   std::int64_t rows, terms<double, N>* corr)
{
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows;
       i += warps) {
    terms<double, N> s;
#pragma unroll
    for (int t = 0; t < N; ++t) { s[t] = 0.0; }
    for (offset_t k = row_ptr[i] + lane; k < row_ptr[i + 1]; k += 32) {
      const auto p = one_sided_d<D, Left>(d, values[k]);
#pragma unroll
      for (int t = 0; t < N; ++t) { s[t] += double(p[t]); }
    }
    s = warp_reduce<plus_monoid, double, N>(s);
    if (lane == 0) { corr[i] = s; }
  }
}

/// row_idx[k] = the row of entry k (COO row indices of a CSR, in CSR order).
template <class I>
__global__ void expand_row_indices(const offset_t* row_ptr, std::int64_t rows, I* row_idx)
{
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows;
       i += warps) {
    for (offset_t k = row_ptr[i] + lane; k < row_ptr[i + 1]; k += 32) { row_idx[k] = I(i); }
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

// ---- selection NAMMs (min / max ⊕): the union from the intersection and per-row best entries ----

/// Candidates kept per row for the selection fix-up (the best entries by ⊗(x, 0) / ⊗(0, x)).
inline constexpr int selection_candidates = 4;

/// top[i * K + r] = the r-th best entry of row i by the one-sided product (column, product);
/// column -1 past the end of a short row. One warp per row, K rounds of a warp arg-best
/// (ties: the smaller position).
template <class D, class V, class I, bool Left>
__global__ void row_candidates_kernel(D d, const offset_t* row_ptr, const I* col_idx,
                                      const V* values, std::int64_t rows, I* top_col, V* top_val)
{
  using add = typename D::add_monoid;
  constexpr int K = selection_candidates;
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t i = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < rows;
       i += warps) {
    const offset_t rb = row_ptr[i], re = row_ptr[i + 1];
    offset_t picked[K];
#pragma unroll
    for (int r = 0; r < K; ++r) {
      offset_t best_k = -1;
      V best = add::template identity<V>();
      for (offset_t k = rb + lane; k < re; k += 32) {
        bool taken = false;
#pragma unroll
        for (int q = 0; q < K; ++q) { taken = taken || (q < r && picked[q] == k); }
        if (taken) { continue; }
        const V x = values[k];
        const V p = Left ? V(as_terms(d.template multiply<V>(x, V(0)))[0])
                         : V(as_terms(d.template multiply<V>(V(0), x))[0]);
        if (best_k < 0 || (add{}(p, best) == p && p != best)) {
          best = p;
          best_k = k;
        }
      }
      for (int off = 16; off > 0; off >>= 1) {
        const V ob = __shfl_down_sync(full_warp, best, off);
        const offset_t ok = __shfl_down_sync(full_warp, best_k, off);
        const bool better = ok >= 0 && (best_k < 0 || (add{}(ob, best) == ob && ob != best) ||
                                        (ob == best && ok < best_k));
        if (better) {
          best = ob;
          best_k = ok;
        }
      }
      best_k = __shfl_sync(full_warp, best_k, 0);
      best = __shfl_sync(full_warp, best, 0);
      picked[r] = best_k;
      if (lane == 0) {
        top_col[i * K + r] = best_k < 0 ? I(-1) : col_idx[best_k];
        top_val[i * K + r] = best;
      }
    }
  }
}

/// True when the sorted columns [cols, cols + n) hold c.
template <class I>
__device__ inline bool sorted_contains(const I* cols, offset_t n, I c)
{
  offset_t lo = 0, hi = n;
  while (lo < hi) {
    const offset_t mid = lo + (hi - lo) / 2;
    const I x = cols[mid];
    if (x == c) { return true; }
    if (x < c) { lo = mid + 1; } else { hi = mid; }
  }
  return false;
}

/// The candidates' part of best_outside: true and in `best` the first of the row's K candidates
/// whose column the other row does not store (e⊕ when the row has no such entry among fewer than
/// K); false when all K candidates are stored by the other row and the row has more entries, so
/// that the rest of the row must be scanned (scan_outside).
template <class D, class V, class I>
__device__ inline bool candidates_outside(const I* top_col, const V* top_val, offset_t row_n,
                                          const I* other_cols, offset_t other_n, V& best)
{
  using add = typename D::add_monoid;
  constexpr int K = selection_candidates;
  best = add::template identity<V>();
  for (int r = 0; r < K; ++r) {
    const I c = top_col[r];
    if (c == I(-1)) { return true; }
    if (!sorted_contains(other_cols, other_n, c)) {
      best = top_val[r];
      return true;
    }
  }
  return row_n <= K;
}

/// ⊕ of the one-sided products of the entries first, first + stride, ... below row_n of a row
/// whose columns the other row does not store (one thread: stride 1; a warp: lane, 32).
template <class D, class V, class I, bool Left>
__device__ inline V scan_outside(const D& d, const I* row_cols, const V* row_vals,
                                 offset_t first, offset_t row_n, offset_t stride,
                                 const I* other_cols, offset_t other_n)
{
  using add = typename D::add_monoid;
  V best = add::template identity<V>();
  for (offset_t k = first; k < row_n; k += stride) {
    if (sorted_contains(other_cols, other_n, row_cols[k])) { continue; }
    const V x = row_vals[k];
    best = add{}(best, Left ? V(as_terms(d.template multiply<V>(x, V(0)))[0])
                            : V(as_terms(d.template multiply<V>(V(0), x))[0]));
  }
  return best;
}

/// ⊕ over the entries of a row whose columns the other row does not store, of the one-sided
/// product: the first of the row's K candidates missing from the other row, or a full scan when
/// all K are present and the row has more.
template <class D, class V, class I, bool Left>
__device__ inline V best_outside(const D& d, const I* top_col, const V* top_val,
                                 const I* row_cols, const V* row_vals, offset_t row_n,
                                 const I* other_cols, offset_t other_n)
{
  V best;
  if (candidates_outside<D, V, I>(top_col, top_val, row_n, other_cols, other_n, best)) {
    return best;
  }
  return scan_outside<D, V, I, Left>(d, row_cols, row_vals, 0, row_n, 1, other_cols, other_n);
}

// ---- intersection through the CSC of B -------------------------------------------------------------

/// A pair of a selection NAMM whose fix-up needs a full row scan (all K candidates of a row are
/// stored by the other row): sides bit 0 = row i of A against row j of B, bit 1 = row j of B
/// against row i of A. Meanwhile the output holds the pair's raw ⊕ without the scanned sides.
struct selection_fallback {
  std::int64_t i, j;
  int sides;
};

/// Arguments of the intersection kernel (device pointers).
template <class D, class V, class I>
struct intersection_args {
  using traits = distance_traits<D, double>;
  using norm_values = typename traits::norm_values;
  static constexpr int N = distance_traits<D, V>::num_terms;
  D d;
  std::int64_t rows_a, rows_b;
  std::int64_t cols;  ///< columns of the operands as the kernels see them (renumbered)
  std::int64_t dim;   ///< the declared column count, for finalize
  const offset_t* a_ptr;
  const I* a_col;
  const V* a_val;
  const offset_t* bt_ptr;  ///< CSC of B: column c holds the rows j of B (sorted) with their values
  const I* bt_row;
  const V* bt_val;
  const norm_values* norms_a;
  const norm_values* norms_b;
  const terms<double, N>* corr_a;  ///< NAMM corrections (nullptr for annihilating semirings)
  const terms<double, N>* corr_b;
  /// Sum NAMMs: ⊗(0, b) in double for every entry of the CSC of B (nullptr otherwise).
  const terms<double, N>* bt_side;
  const offset_t* b_ptr;  ///< B's rows (CSR)
  const I* b_col;
  const V* b_val;
  // Selection NAMMs only (nullptr otherwise): K candidates per row of A and of B.
  const I* top_a_col;
  const V* top_a_val;
  const I* top_b_col;
  const V* top_b_val;
  V* out;
  std::int64_t ld;
  std::int64_t tile_cols;  ///< output columns per shared-memory tile
  // Selection NAMMs in spira::pairwise (nullptr otherwise): pairs left to the fallback kernel.
  selection_fallback* fallback;
  unsigned long long* fallback_count;
  std::int64_t fallback_capacity;
};

/// The accumulator of the intersection kernel: double for sum ⊕ (intersection_sums_in_double),
/// V for selections (min, max, custom) and for dot products whose finalize does not cancel.
/// Sums feed cancelling finalizes: a NAMM's union is intersection + per-row corrections, and the
/// expansions (euclidean, hellinger, correlation...) subtract the dot from the norms, which are
/// computed in double. For dot-product-form distances the products are formed in the accumulator
/// type (double: exact for float inputs), so for two equal rows the expansion cancels to rounding
/// of the double sums and, e.g., euclidean(x, x) is 0 to about 1e-8 instead of the square root of
/// float rounding (about 1e-3).
template <class D, class V>
using intersection_accumulator_t =
  std::conditional_t<intersection_sums_in_double<D>::value, double, V>;

/// One product of the intersection kernel, before a NAMM's subtraction of the one-sided terms:
/// for a dot-product form, ⊗ in the accumulator type A (double: exact for float inputs);
/// otherwise ⊗ in V, widened to A (a transcendental ⊗ such as jensenshannon's costs several
/// times more in double, and its rounding in V is relative to the term, not to the cancelling
/// one-sided terms, which stay in double).
template <class D, class V, class A>
__device__ inline terms<A, distance_traits<D, V>::num_terms> intersection_multiply_d(const D& d,
                                                                                    V a, V b)
{
  constexpr int N = distance_traits<D, V>::num_terms;
  terms<A, N> r;
  if constexpr (dot_product_form<D>::value) {
    const auto p = as_terms(d.template multiply<A>(A(a), A(b)));
#pragma unroll
    for (int t = 0; t < N; ++t) { r[t] = A(p[t]); }
  } else {
    const auto p = as_terms(d.template multiply<V>(a, b));
#pragma unroll
    for (int t = 0; t < N; ++t) { r[t] = A(p[t]); }
  }
  return r;
}

/// Accumulates ⊕ over the shared columns of row i of A and rows [j0, j0 + width) of B into the
/// block's shared accumulator acc (width x N terms), which the caller has set to e⊕: each warp takes
/// nonzeros (c, a) of row i and its lanes walk the part of column c of B that falls in the tile
/// (its start found by binary search when j0 > 0; the walk stops at the tile's end), loading
/// intersection_unroll entries per lane before combining ⊗ into acc with the monoid's
/// shared-memory atomic. For a NAMM with a sum ⊕ the combined term is ⊗(a, b) - ⊗(a, 0) - ⊗(0, b)
/// (the one-sided terms in double: ⊗(a, 0) once per nonzero of A, ⊗(0, b) from bt_side). The
/// whole block calls it; the caller synchronises before reading acc.
template <class D, class V, class I>
__device__ void intersection_accumulate(const intersection_args<D, V, I>& p, std::int64_t i,
                                        std::int64_t j0, std::int64_t width,
                                        intersection_accumulator_t<D, V>* acc)
{
  using add = typename D::add_monoid;
  using A = intersection_accumulator_t<D, V>;
  constexpr int N = intersection_args<D, V, I>::N;
  constexpr int U = cuda_pairwise_policy::intersection_unroll;
  constexpr bool sum_namm = sum_namm_v<D, V>;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  const offset_t a_begin = p.a_ptr[i], a_end = p.a_ptr[i + 1];
  for (offset_t k = a_begin + warp; k < a_end; k += warps) {
    const std::int64_t c = p.a_col[k];
    const V x = p.a_val[k];
    offset_t lo = p.bt_ptr[c];
    const offset_t hi = p.bt_ptr[c + 1];
    if (lo == hi) { continue; }
    if (j0 > 0) {
      // The first entry of column c with a row >= j0 (rows are sorted within a column).
      offset_t h = hi;
      while (lo < h) {
        const offset_t m = lo + (h - lo) / 2;
        if (std::int64_t(p.bt_row[m]) < j0) { lo = m + 1; } else { h = m; }
      }
    }
    [[maybe_unused]] terms<double, N> side_a;
    if constexpr (sum_namm) { side_a = one_sided_d<D, true>(p.d, x); }
    for (offset_t q0 = lo; q0 < hi; q0 += offset_t(32) * U) {
      I row[U];
      V val[U];
      [[maybe_unused]] terms<double, N> side_b[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const offset_t q = q0 + u * 32 + lane;
        const bool in = q < hi;
        row[u] = in ? p.bt_row[q] : I(0);
        val[u] = in ? p.bt_val[q] : V(0);
        if constexpr (sum_namm) {
          if (in) { side_b[u] = p.bt_side[q]; }
        }
      }
      bool past = false;  // this lane reached the end of the column or of the tile
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const offset_t q = q0 + u * 32 + lane;
        const std::int64_t j = std::int64_t(row[u]) - j0;
        if (q >= hi || j >= width) {
          past = true;
          continue;
        }
        auto prod = intersection_multiply_d<D, V, A>(p.d, x, val[u]);
        if constexpr (sum_namm) {
#pragma unroll
          for (int t = 0; t < N; ++t) { prod[t] = A((double(prod[t]) - side_a[t]) - side_b[u][t]); }
        }
#pragma unroll
        for (int t = 0; t < N; ++t) { atomic_combine<add>(&acc[j * N + t], prod[t]); }
      }
      // Entries are sorted by row: once a lane is past the tile, every later round is too.
      if (__any_sync(full_warp, past)) { break; }
    }
  }
}

/// The value of pair (i, j) from its accumulated terms `a`: the finalize of D, with the NAMM
/// corrections of a sum ⊕ or, for a selection ⊕, each row's best entry outside the other row.
template <class D, class V, class I>
__device__ V intersection_finalize(const intersection_args<D, V, I>& p, std::int64_t i,
                                   std::int64_t j,
                                   terms<intersection_accumulator_t<D, V>,
                                         intersection_args<D, V, I>::N> a)
{
  using add = typename D::add_monoid;
  constexpr int N = intersection_args<D, V, I>::N;
  if constexpr (sum_namm_v<D, V> || accuracy_traits<D, double>::guarded) {
    const bool corrected = sum_namm_v<D, V>;
    return V(finalize_pair_device(p.d, a, p.norms_a[i], p.norms_b[j], p.dim,
                                  corrected ? &p.corr_a[i] : nullptr,
                                  corrected ? &p.corr_b[j] : nullptr,
                                  csr_rows<V, I>{p.a_ptr, p.a_col, p.a_val}, i,
                                  csr_rows<V, I>{p.b_ptr, p.b_col, p.b_val}, j));
  } else {
    if constexpr (selection_namm_v<D, V>) {
      // The union: the intersection's ⊕ and each row's best entry outside the other row.
      constexpr int K = selection_candidates;
      const offset_t a_begin = p.a_ptr[i], a_n = p.a_ptr[i + 1] - a_begin;
      const offset_t b_begin = p.b_ptr[j], b_n = p.b_ptr[j + 1] - b_begin;
      const V from_a = best_outside<D, V, I, true>(p.d, p.top_a_col + i * K, p.top_a_val + i * K,
                                                   p.a_col + a_begin, p.a_val + a_begin, a_n,
                                                   p.b_col + b_begin, b_n);
      const V from_b = best_outside<D, V, I, false>(p.d, p.top_b_col + j * K,
                                                    p.top_b_val + j * K, p.b_col + b_begin,
                                                    p.b_val + b_begin, b_n, p.a_col + a_begin,
                                                    a_n);
      a[0] = add{}(add{}(a[0], from_a), from_b);
    }
    return V(finalize_device(p.d, a, p.norms_a[i], p.norms_b[j], p.dim,
                             static_cast<const terms<double, N>*>(nullptr)));
  }
}

/// intersection_finalize for a caller that evaluates untrusted pairs itself (the fused k-NN):
/// for a guarded D the fast value and whether the guard trusts it (trusted_pair_device), so the
/// kernel holds no direct evaluation; for other distances intersection_finalize, always trusted.
template <class D, class V, class I>
__device__ double intersection_fast_value(const intersection_args<D, V, I>& p, std::int64_t i,
                                          std::int64_t j,
                                          terms<intersection_accumulator_t<D, V>,
                                                intersection_args<D, V, I>::N> a,
                                          bool& trusted)
{
  if constexpr (accuracy_traits<D, double>::guarded) {
    const bool corrected = sum_namm_v<D, V>;
    return trusted_pair_device(p.d, a, p.norms_a[i], p.norms_b[j], p.dim,
                               corrected ? &p.corr_a[i] : nullptr,
                               corrected ? &p.corr_b[j] : nullptr, trusted);
  } else {
    trusted = true;
    return double(intersection_finalize(p, i, j, a));
  }
}

/// The direct value of pair (i, j) of the operands of p (detail::direct_value in double).
template <class D, class V, class I>
__device__ double intersection_direct_value(const intersection_args<D, V, I>& p, std::int64_t i,
                                            std::int64_t j)
{
  return detail::direct_value<D, double>(p.d, csr_rows<V, I>{p.a_ptr, p.a_col, p.a_val}[i],
                                         csr_rows<V, I>{p.b_ptr, p.b_col, p.b_val}[j],
                                         p.norms_a[i], p.norms_b[j], p.dim);
}

/// Writes pair (i, j) to *dst: intersection_finalize, except for a selection NAMM with a fallback
/// list (spira::pairwise), where a pair whose fix-up needs a row scan stores its raw ⊕ and is
/// queued for selection_fallback_kernel (one warp per pair instead of one thread scanning a long
/// row); when the list is full the thread scans itself.
template <class D, class V, class I>
__device__ inline void intersection_store(
  const intersection_args<D, V, I>& p, std::int64_t i, std::int64_t j,
  terms<intersection_accumulator_t<D, V>, intersection_args<D, V, I>::N> a, V* dst)
{
  if constexpr (selection_namm_v<D, V>) {
    if (p.fallback != nullptr) {
      using add = typename D::add_monoid;
      constexpr int K = selection_candidates;
      const offset_t a_begin = p.a_ptr[i], a_n = p.a_ptr[i + 1] - a_begin;
      const offset_t b_begin = p.b_ptr[j], b_n = p.b_ptr[j + 1] - b_begin;
      V from_a, from_b;
      const bool done_a = candidates_outside<D, V, I>(p.top_a_col + i * K, p.top_a_val + i * K,
                                                      a_n, p.b_col + b_begin, b_n, from_a);
      const bool done_b = candidates_outside<D, V, I>(p.top_b_col + j * K, p.top_b_val + j * K,
                                                      b_n, p.a_col + a_begin, a_n, from_b);
      a[0] = add{}(add{}(a[0], from_a), from_b);
      if (!(done_a && done_b)) {
        const unsigned long long slot = atomicAdd(p.fallback_count, 1ull);
        if (slot < (unsigned long long)p.fallback_capacity) {
          p.fallback[slot] = selection_fallback{i, j, (done_a ? 0 : 1) | (done_b ? 0 : 2)};
          *dst = V(a[0]);
          return;
        }
        if (!done_a) {
          a[0] = add{}(a[0], scan_outside<D, V, I, true>(p.d, p.a_col + a_begin, p.a_val + a_begin,
                                                         0, a_n, 1, p.b_col + b_begin, b_n));
        }
        if (!done_b) {
          a[0] = add{}(a[0], scan_outside<D, V, I, false>(p.d, p.b_col + b_begin,
                                                          p.b_val + b_begin, 0, b_n, 1,
                                                          p.a_col + a_begin, a_n));
        }
      }
      *dst = V(finalize_device(p.d, a, p.norms_a[i], p.norms_b[j], p.dim,
                               static_cast<const terms<double, 1>*>(nullptr)));
      return;
    }
  }
  *dst = intersection_finalize(p, i, j, a);
}

/// Block (x: rows of A, grid-stride; y: tiles of tile_cols output columns, grid-stride). For row i
/// and the tile [j0, j1): the shared accumulator starts at e⊕, intersection_accumulate fills it and
/// the tile is finalized straight into the output (intersection_store).
template <class D, class V, class I>
__global__ void intersection_kernel(intersection_args<D, V, I> p)
{
  using add = typename D::add_monoid;
  using A = intersection_accumulator_t<D, V>;
  constexpr int N = intersection_args<D, V, I>::N;
  extern __shared__ unsigned char smem_raw[];
  A* acc = reinterpret_cast<A*>(smem_raw);
  const std::int64_t tiles = (p.rows_b + p.tile_cols - 1) / p.tile_cols;
  for (std::int64_t tile = blockIdx.y; tile < tiles; tile += gridDim.y) {
    const std::int64_t j0 = tile * p.tile_cols;
    const std::int64_t width = p.tile_cols < p.rows_b - j0 ? p.tile_cols : p.rows_b - j0;
    for (std::int64_t i = blockIdx.x; i < p.rows_a; i += gridDim.x) {
      for (std::int64_t e = threadIdx.x; e < width * N; e += blockDim.x) {
        acc[e] = add::template identity<A>();
      }
      __syncthreads();
      intersection_accumulate(p, i, j0, width, acc);
      __syncthreads();
      V* out_row = p.out + i * p.ld + j0;
      for (std::int64_t jj = threadIdx.x; jj < width; jj += blockDim.x) {
        terms<A, N> a;
#pragma unroll
        for (int t = 0; t < N; ++t) { a[t] = acc[jj * N + t]; }
        intersection_store(p, i, j0 + jj, a, out_row + jj);
      }
      __syncthreads();
    }
  }
}

/// The pairs the intersection kernel left to it (selection NAMMs): one warp per pair scans the
/// row(s) whose K candidates were all shared, reduces with ⊕, combines with the raw ⊕ stored in
/// the output and writes the finalized value.
template <class D, class V, class I>
__global__ void selection_fallback_kernel(intersection_args<D, V, I> p)
{
  using add = typename D::add_monoid;
  const unsigned long long stored = *p.fallback_count;
  const std::int64_t n = stored < (unsigned long long)p.fallback_capacity
                           ? std::int64_t(stored) : p.fallback_capacity;
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t e = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; e < n;
       e += warps) {
    const selection_fallback f = p.fallback[e];
    const offset_t a_begin = p.a_ptr[f.i], a_n = p.a_ptr[f.i + 1] - a_begin;
    const offset_t b_begin = p.b_ptr[f.j], b_n = p.b_ptr[f.j + 1] - b_begin;
    V best = add::template identity<V>();
    if (f.sides & 1) {
      best = add{}(best, scan_outside<D, V, I, true>(p.d, p.a_col + a_begin, p.a_val + a_begin,
                                                     lane, a_n, 32, p.b_col + b_begin, b_n));
    }
    if (f.sides & 2) {
      best = add{}(best, scan_outside<D, V, I, false>(p.d, p.b_col + b_begin, p.b_val + b_begin,
                                                      lane, b_n, 32, p.a_col + a_begin, a_n));
    }
    best = warp_reduce<add, V, 1>(terms<V, 1>{{best}})[0];
    if (lane == 0) {
      V* dst = p.out + f.i * p.ld + f.j;
      const terms<V, 1> a{{add{}(*dst, best)}};
      *dst = V(finalize_device(p.d, a, p.norms_a[f.i], p.norms_b[f.j], p.dim,
                               static_cast<const terms<double, 1>*>(nullptr)));
    }
  }
}

// ---- the seed paper's load-balanced hybrid CSR+COO kernel -------------------------------------------

/// Arguments of one hybrid pass. The held matrix H has one row (part) per block in shared memory;
/// the streamed matrix S is read in COO order, entries [s_begin, s_end). Pass 1: H = A, S = B;
/// pass 2 (NAMMs): H = B, S = A, skipping the columns H stores.
template <class D, class V, class I>
struct hybrid_args {
  static constexpr int N = distance_traits<D, V>::num_terms;
  D d;
  std::int64_t cols;
  const hybrid_part* parts;
  std::int64_t num_parts;
  const I* h_col;
  const V* h_val;
  const I* s_row;
  const I* s_col;
  const V* s_val;
  std::int64_t s_begin, s_end;
  std::int64_t chunk;  ///< streamed entries per block
  V* acc;              ///< accumulator: element (i, j), term t at acc[(i - row0) * ld + j * N + t]
  std::int64_t ld;
  std::int64_t row0;   ///< first row of A in this accumulator tile
  int table_slots;     ///< hash-table slots (a power of two); 0 = the dense layout
};

/// Shared-memory layout of the held row: dense (values[cols], presence bits[cols / 32]) or a hash
/// table (keys[slots] (-1 = empty), values[slots]).
template <class V, class I>
struct held_row {
  I* keys;
  V* values;
  unsigned* bits;
  int slots;

  __device__ void clear(std::int64_t cols, int tid, int threads) const
  {
    if (slots == 0) {
      for (std::int64_t w = tid; w < (cols + 31) / 32; w += threads) { bits[w] = 0u; }
    } else {
      for (int s = tid; s < slots; s += threads) { keys[s] = I(-1); }
    }
  }
  __device__ void insert(I c, V v) const
  {
    if (slots == 0) {
      values[c] = v;
      atomicOr(&bits[c / 32], 1u << (c % 32));
      return;
    }
    using W = std::conditional_t<sizeof(I) == 4, unsigned int, unsigned long long>;
    const W empty = W(I(-1)), key = W(c);
    unsigned s = unsigned(murmur_mix(std::uint64_t(c))) & unsigned(slots - 1);
    while (atomicCAS(reinterpret_cast<W*>(&keys[s]), empty, key) != empty) {
      s = (s + 1) & unsigned(slots - 1);
    }
    values[s] = v;
  }
  /// True and the value when column c is stored in the held row.
  __device__ bool find(I c, V& v) const
  {
    if (slots == 0) {
      if (((bits[c / 32] >> (c % 32)) & 1u) == 0u) { return false; }
      v = values[c];
      return true;
    }
    unsigned s = unsigned(murmur_mix(std::uint64_t(c))) & unsigned(slots - 1);
    while (true) {
      const I k = keys[s];
      if (k == c) {
        v = values[s];
        return true;
      }
      if (k == I(-1)) { return false; }
      s = (s + 1) & unsigned(slots - 1);
    }
  }
};

/// Grid: x = parts of the held matrix (grid-stride), y = chunks of the streamed entries
/// (grid-stride). Each warp reads 32 consecutive streamed entries at a time; their keys (the
/// streamed rows) are sorted, so a warp-segmented reduction leaves one value per row segment and
/// the segment's first lane applies one atomic ⊕ to the accumulator.
template <class D, class V, class I, bool SecondPass>
__global__ void hybrid_kernel(hybrid_args<D, V, I> p)
{
  using add = typename D::add_monoid;
  constexpr int N = hybrid_args<D, V, I>::N;
  extern __shared__ unsigned char smem_raw[];
  held_row<V, I> h;
  h.slots = p.table_slots;
  if (p.table_slots == 0) {
    h.values = reinterpret_cast<V*>(smem_raw);
    h.bits = reinterpret_cast<unsigned*>(smem_raw + ((p.cols * sizeof(V) + 15) / 16) * 16);
    h.keys = nullptr;
  } else {
    h.values = reinterpret_cast<V*>(smem_raw);
    h.keys = reinterpret_cast<I*>(smem_raw + std::size_t(p.table_slots) * sizeof(V));
    h.bits = nullptr;
  }
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  const std::int64_t chunks = (p.s_end - p.s_begin + p.chunk - 1) / p.chunk;
  const auto none = identity_terms_d<add, V, N>();

  for (std::int64_t pi = blockIdx.x; pi < p.num_parts; pi += gridDim.x) {
    const hybrid_part part = p.parts[pi];
    h.clear(p.cols, threadIdx.x, blockDim.x);
    __syncthreads();
    for (std::int64_t k = part.begin + threadIdx.x; k < part.end; k += blockDim.x) {
      h.insert(p.h_col[k], p.h_val[k]);
    }
    __syncthreads();
    for (std::int64_t ch = blockIdx.y; ch < chunks; ch += gridDim.y) {
      const std::int64_t c_begin = p.s_begin + ch * p.chunk;
      const std::int64_t c_end = c_begin + p.chunk < p.s_end ? c_begin + p.chunk : p.s_end;
      for (std::int64_t base = c_begin + std::int64_t(warp) * 32; base < c_end;
           base += std::int64_t(warps) * 32) {
        const std::int64_t e = base + lane;
        const bool valid = e < c_end;
        std::int64_t key = INT64_MAX;  // past the end: a segment of its own
        terms<V, N> v = none;
        bool contributes = false;
        if (valid) {
          key = p.s_row[e];
          const I c = p.s_col[e];
          if (std::int64_t(c) >= part.col_lo && std::int64_t(c) < part.col_hi) {
            const V s = p.s_val[e];
            V x;
            const bool found = h.find(c, x);
            if constexpr (!SecondPass) {
              // held = A_i, streamed = B: ⊗(a, b) on the intersection, ⊗(0, b) on B's side.
              if (found) {
                v = as_terms(p.d.template multiply<V>(x, s));
                contributes = true;
              } else if constexpr (!D::annihilating) {
                v = as_terms(p.d.template multiply<V>(V(0), s));
                contributes = true;
              }
            } else {
              // held = B_j, streamed = A: ⊗(a, 0) on the columns B_j does not store.
              if (!found) {
                v = as_terms(p.d.template multiply<V>(s, V(0)));
                contributes = true;
              }
            }
          }
        }
        // Segmented reduction: lane l accumulates the lanes l+1.. with its key (keys sorted).
        unsigned any = __ballot_sync(full_warp, contributes);
        if (any == 0u) { continue; }
        bool has = contributes;
        for (int off = 1; off < 32; off <<= 1) {
          const std::int64_t k2 = __shfl_down_sync(full_warp, key, off);
          const bool h2 = __shfl_down_sync(full_warp, has, off);
          terms<V, N> o;
#pragma unroll
          for (int t = 0; t < N; ++t) { o[t] = __shfl_down_sync(full_warp, v[t], off); }
          if (lane + off < 32 && k2 == key && h2) {
#pragma unroll
            for (int t = 0; t < N; ++t) { v[t] = has ? add{}(v[t], o[t]) : o[t]; }
            has = true;
          }
        }
        const std::int64_t prev = __shfl_up_sync(full_warp, key, 1);
        const bool leader = valid && (lane == 0 || prev != key);
        if (leader && has) {
          const std::int64_t i = SecondPass ? key : part.row;
          const std::int64_t j = SecondPass ? part.row : key;
          V* dst = p.acc + (i - p.row0) * p.ld + j * N;
#pragma unroll
          for (int t = 0; t < N; ++t) { atomic_combine<add>(&dst[t], v[t]); }
        }
      }
    }
    __syncthreads();
  }
}

/// out(i, j) = finalize(acc(i, j), norms) for an accumulator tile of rows [row0, row0 + rows),
/// through the accuracy guard (a and b: the operands, for pairs it evaluates directly).
template <class D, class V, class I>
__global__ void finalize_tile_kernel(
  D d, const V* acc, std::int64_t acc_ld, V* out, std::int64_t out_ld, std::int64_t row0,
  std::int64_t rows, std::int64_t cols_b, std::int64_t dim,
  const typename distance_traits<D, double>::norm_values* norms_a,
  const typename distance_traits<D, double>::norm_values* norms_b,
  const terms<double, distance_traits<D, V>::num_terms>* corr_a,
  const terms<double, distance_traits<D, V>::num_terms>* corr_b, csr_view<V, I> a,
  csr_view<V, I> b)
{
  constexpr int N = distance_traits<D, V>::num_terms;
  const std::int64_t total = rows * cols_b;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += stride) {
    const std::int64_t r = e / cols_b, j = e % cols_b, i = row0 + r;
    terms<V, N> acc_ij;
#pragma unroll
    for (int t = 0; t < N; ++t) { acc_ij[t] = acc[r * acc_ld + j * N + t]; }
    out[i * out_ld + j] = V(finalize_pair_device(
      d, acc_ij, norms_a[i], norms_b[j], dim, corr_a != nullptr ? &corr_a[i] : nullptr,
      corr_b != nullptr ? &corr_b[j] : nullptr, rows_of(a), i, rows_of(b), j));
  }
}

// ---- dense tiles ---------------------------------------------------------------------------------

/// dense[(i - row0) * cols + c] = Form::map(value) for the entries of rows [row0, row0 + rows)
/// (the tile was zeroed first).
template <class Form, class V, class I>
__global__ void densify_kernel(const offset_t* row_ptr, const I* col_idx, const V* values,
                               std::int64_t row0, std::int64_t rows, std::int64_t cols, V* dense)
{
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t r = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; r < rows;
       r += warps) {
    for (offset_t k = row_ptr[row0 + r] + lane; k < row_ptr[row0 + r + 1]; k += 32) {
      dense[r * cols + col_idx[k]] = Form::template map<V>(values[k]);
    }
  }
}

#endif  // __CUDACC__

// ---- host-side driver ------------------------------------------------------------------------------

#if defined(__CUDACC__)

/// Blocks for a warp-per-row kernel over `rows` rows, at most a few waves.
inline unsigned row_grid(std::int64_t rows, int sms)
{
  constexpr int warps_per_block = cuda_pairwise_policy::row_threads / 32;
  const std::int64_t want = (rows + warps_per_block - 1) / warps_per_block;
  return unsigned(std::clamp<std::int64_t>(want, 1, std::int64_t(sms) * 16));
}
inline unsigned elementwise_grid(std::int64_t n, int sms)
{
  const std::int64_t want = (n + cuda_pairwise_policy::row_threads - 1) /
                            cuda_pairwise_policy::row_threads;
  return unsigned(std::clamp<std::int64_t>(want, 1, std::int64_t(sms) * 16));
}

/// Everything the strategies share: norms, prepared values, NAMM corrections, and the operands
/// over the used columns only (compress_columns), so that no strategy allocates per declared
/// column; `dim` keeps the declared column count for finalize.
template <class D, class V, class I>
struct pairwise_context {
  using traits_d = distance_traits<D, double>;
  using norm_values = typename traits_d::norm_values;
  static constexpr int N = distance_traits<D, V>::num_terms;

  const cuda_resources& res;
  const D& d;
  csr_view<V, I> a, b;  ///< over the used columns, with prepared values when D has a prepare step
  dense_view<V> out;
  std::int64_t dim = 0;  ///< the declared column count of A and B (finalize's `dim`)
  int sms = 1;
  buffer<norm_values> norms_a, norms_b;
  buffer<V> prepared_a, prepared_b;
  renumbered_columns<I> renumbered;

  pairwise_context(const cuda_resources& r, const D& dist, csr_view<V, I> a_in,
                   csr_view<V, I> b_in, dense_view<V> o)
    : res(r), d(dist), a(a_in), b(b_in), out(o), dim(a_in.cols)
  {
    sms = multiprocessor_count(res.device);
    norms_a = row_norms(a_in, "row norms of A");
    norms_b = row_norms(b_in, "row norms of B");
    compress_columns();
    if constexpr (distance_traits<D, V>::has_prepare) {
      prepared_a = prepare(a_in);
      prepared_b = prepare(b_in);
      a.values = prepared_a.data();
      b.values = prepared_b.data();
    }
  }

  /// Renumbers the columns of a and b to the columns either stores (renumber_columns) when the
  /// declared count exceeds their stored entries (columns_worth_compressing): the CSC of B, the
  /// column counts of the selection statistics, the hybrid kernel's held row and the dense tiles
  /// are then sized by the used columns. The renumbering keeps the order of the columns, so every
  /// strategy computes the same values; B that is A stays the same matrix (same_matrix).
  void compress_columns()
  {
    if (!columns_worth_compressing(a.cols, a.nnz, b.nnz)) { return; }
    const bool same = a.row_ptr == b.row_ptr && a.col_idx == b.col_idx &&
                      a.values == b.values && a.rows == b.rows && a.nnz == b.nnz;
    renumbered = renumber_columns<I>(res, a.col_idx, a.nnz, same ? nullptr : b.col_idx,
                                     same ? 0 : b.nnz, a.cols);
    a.col_idx = renumbered.col_idx.data();
    b.col_idx = same ? a.col_idx : renumbered.col_idx.data() + a.nnz;
    a.cols = b.cols = renumbered.used;
  }

  buffer<norm_values> row_norms(csr_view<V, I> m, const char* what)
  {
    buffer<norm_values> n(res, std::size_t(std::max<std::int64_t>(m.rows, 1)), what);
    if constexpr (traits_d::norms::size > 0) {
      row_norms_kernel<typename traits_d::norms, V>
        <<<row_grid(m.rows, sms), cuda_pairwise_policy::row_threads, 0, res.stream>>>(
          m.row_ptr, m.values, m.rows, n.data());
      SPIRA_CHECK_LAUNCH();
    }
    return n;
  }

  buffer<V> prepare(csr_view<V, I> m)
  {
    buffer<V> v(res, std::size_t(std::max<std::int64_t>(m.nnz, 1)), "prepared values");
    prepare_kernel<D, V><<<row_grid(m.rows, sms), cuda_pairwise_policy::row_threads, 0,
                           res.stream>>>(d, m.row_ptr, m.values, m.rows, v.data());
    SPIRA_CHECK_LAUNCH();
    return v;
  }

  template <bool Left>
  buffer<terms<double, N>> corrections(csr_view<V, I> m)
  {
    buffer<terms<double, N>> c(res, std::size_t(std::max<std::int64_t>(m.rows, 1)),
                               "NAMM row corrections");
    corrections_kernel<D, V, N, Left><<<row_grid(m.rows, sms), cuda_pairwise_policy::row_threads,
                                        0, res.stream>>>(d, m.row_ptr, m.values, m.rows,
                                                         c.data());
    SPIRA_CHECK_LAUNCH();
    return c;
  }

  /// The finalize pass over an accumulator tile of rows [row0, row0 + rows).
  void finalize_tile(const V* acc, std::int64_t acc_ld, std::int64_t row0, std::int64_t rows,
                     const terms<double, N>* corr_a = nullptr,
                     const terms<double, N>* corr_b = nullptr)
  {
    if (rows == 0) { return; }
    finalize_tile_kernel<D, V, I>
      <<<elementwise_grid(rows * b.rows, sms), cuda_pairwise_policy::row_threads, 0,
         res.stream>>>(d, acc, acc_ld, out.data, out.ld, row0, rows, b.rows, dim,
                       norms_a.data(), norms_b.data(), corr_a, corr_b, a, b);
    SPIRA_CHECK_LAUNCH();
  }
};

/// True when two views are the same matrix (the same arrays and extents): A against itself.
template <class V, class I>
bool same_matrix(csr_view<V, I> a, csr_view<V, I> b)
{
  return a.row_ptr == b.row_ptr && a.col_idx == b.col_idx && a.values == b.values &&
         a.rows == b.rows && a.cols == b.cols && a.nnz == b.nnz;
}

/// side[q] = ⊗(0, values[q]) in double, for every entry of the CSC of B (sum NAMMs).
template <class D, class V, int N>
__global__ void right_sides_kernel(D d, const V* values, std::int64_t n, terms<double, N>* side)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t q = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; q < n; q += stride) {
    side[q] = one_sided_d<D, false>(d, values[q]);
  }
}

/// counts[c] += 1 for every stored column c (the caller zeroes counts).
template <class I>
__global__ void column_counts_kernel(const I* col_idx, std::int64_t nnz, unsigned long long* counts)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < nnz;
       k += stride) {
    atomicAdd(&counts[col_idx[k]], 1ull);
  }
}

/// stats[0] += Σ_c nnz(A[:,c]) nnz(B[:,c]) (counts_a == nullptr: A is B) and stats[1] += the
/// search steps of the selection fix-up over `samples` pairs: all pairs in order when there are
/// at most `samples`, else pairs drawn by a fixed hash of the sample index (deterministic). A row
/// whose K candidates are all stored by the other row costs deg x log2(2 + other degree).
template <class D, class V, class I>
__global__ void selection_statistics_kernel(intersection_args<D, V, I> p,
                                            const unsigned long long* counts_a,
                                            std::int64_t samples, double* stats)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t tid = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  double products = 0, steps = 0;
  for (std::int64_t c = tid; c < p.cols; c += stride) {
    const double nb = double(p.bt_ptr[c + 1] - p.bt_ptr[c]);
    products += (counts_a == nullptr ? nb : double(counts_a[c])) * nb;
  }
  constexpr int K = selection_candidates;
  const bool all_pairs = double(p.rows_a) * double(p.rows_b) <= double(samples);
  for (std::int64_t s = tid; s < samples; s += stride) {
    std::int64_t i, j;
    if (all_pairs) {
      if (s >= p.rows_a * p.rows_b) { break; }
      i = s / p.rows_b;
      j = s % p.rows_b;
    } else {
      i = std::int64_t(murmur_mix(std::uint64_t(2 * s + 1)) % std::uint64_t(p.rows_a));
      j = std::int64_t(murmur_mix(std::uint64_t(2 * s + 2)) % std::uint64_t(p.rows_b));
    }
    const offset_t a_begin = p.a_ptr[i], a_n = p.a_ptr[i + 1] - a_begin;
    const offset_t b_begin = p.b_ptr[j], b_n = p.b_ptr[j + 1] - b_begin;
    V unused;
    if (!candidates_outside<D, V, I>(p.top_a_col + i * K, p.top_a_val + i * K, a_n,
                                     p.b_col + b_begin, b_n, unused)) {
      steps += double(a_n) * log2(2.0 + double(b_n));
    }
    if (!candidates_outside<D, V, I>(p.top_b_col + j * K, p.top_b_val + j * K, b_n,
                                     p.a_col + a_begin, a_n, unused)) {
      steps += double(b_n) * log2(2.0 + double(a_n));
    }
  }
  auto r = warp_reduce<plus_monoid, double, 2>(terms<double, 2>{{products, steps}});
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&stats[0], r[0]);
    atomicAdd(&stats[1], r[1]);
  }
}

/// What the intersection kernels read besides A and B: the CSC of B, the NAMM corrections and
/// one-sided terms of B, or the selection candidates, gathered in `args` (out and ld left for the
/// caller). Built once per (A, B) pair; the buffers live as long as the setup.
template <class D, class V, class I>
struct intersection_setup {
  static constexpr int N = pairwise_context<D, V, I>::N;
  csr_matrix<V, I> bt;
  buffer<terms<double, N>> corr_a, corr_b, bt_side;
  buffer<I> top_a_col, top_b_col;
  buffer<V> top_a_val, top_b_val;
  intersection_args<D, V, I> args{};

  // B was validated by the caller: its transpose skips the second validation (a device round
  // trip).
  explicit intersection_setup(pairwise_context<D, V, I>& ctx)
    : bt(transpose_validated(ctx.res, ctx.b))
  {
    using policy = cuda_pairwise_policy;
    const auto& res = ctx.res;
    intersection_args<D, V, I>& p = args;
    p.d = ctx.d;
    p.rows_a = ctx.a.rows;
    p.rows_b = ctx.b.rows;
    p.cols = ctx.a.cols;
    p.dim = ctx.dim;
    p.a_ptr = ctx.a.row_ptr;
    p.a_col = ctx.a.col_idx;
    p.a_val = ctx.a.values;
    p.bt_ptr = bt.row_ptr();
    p.bt_row = bt.col_idx();
    p.bt_val = bt.values();
    p.norms_a = ctx.norms_a.data();
    p.norms_b = ctx.norms_b.data();
    p.b_ptr = ctx.b.row_ptr;  // B's rows: the selection fix-up and the accuracy guard read them
    p.b_col = ctx.b.col_idx;
    p.b_val = ctx.b.values;
    if constexpr (sum_namm_v<D, V>) {
      corr_a = ctx.template corrections<true>(ctx.a);
      corr_b = ctx.template corrections<false>(ctx.b);
      p.corr_a = corr_a.data();
      p.corr_b = corr_b.data();
      bt_side = buffer<terms<double, N>>(res, std::size_t(std::max<std::int64_t>(bt.nnz(), 1)),
                                         "one-sided terms of B");
      if (bt.nnz() > 0) {
        right_sides_kernel<D, V, N>
          <<<elementwise_grid(bt.nnz(), ctx.sms), policy::row_threads, 0, res.stream>>>(
            ctx.d, bt.values(), bt.nnz(), bt_side.data());
        SPIRA_CHECK_LAUNCH();
      }
      p.bt_side = bt_side.data();
    }
    if constexpr (selection_namm_v<D, V>) {
      constexpr int K = selection_candidates;
      const auto candidates = [&](csr_view<V, I> m, buffer<I>& col, buffer<V>& val, auto kernel) {
        const std::size_t n = std::size_t(std::max<std::int64_t>(m.rows, 1)) * K;
        col = buffer<I>(res, n, "selection candidates (columns)");
        val = buffer<V>(res, n, "selection candidates (values)");
        kernel<<<row_grid(m.rows, ctx.sms), policy::row_threads, 0, res.stream>>>(
          ctx.d, m.row_ptr, m.col_idx, m.values, m.rows, col.data(), val.data());
        SPIRA_CHECK_LAUNCH();
      };
      candidates(ctx.a, top_a_col, top_a_val, row_candidates_kernel<D, V, I, true>);
      candidates(ctx.b, top_b_col, top_b_val, row_candidates_kernel<D, V, I, false>);
      p.top_a_col = top_a_col.data();
      p.top_a_val = top_a_val.data();
      p.top_b_col = top_b_col.data();
      p.top_b_val = top_b_val.data();
    }
    using A = intersection_accumulator_t<D, V>;
    p.tile_cols = std::int64_t(policy::intersection_shared_bytes / (sizeof(A) * N));
    p.tile_cols = std::max<std::int64_t>(std::min(p.tile_cols, ctx.b.rows), 1);
  }
  /// Shared memory of the accumulator tile.
  [[nodiscard]] std::size_t accumulator_bytes() const
  {
    return std::size_t(args.tile_cols) * N * sizeof(intersection_accumulator_t<D, V>);
  }
};

/// Fills prob.products and prob.selection_scan (see pairwise_problem) for a selection NAMM from
/// its intersection setup: one column count of A (unless A is B), one statistics kernel over the
/// columns and a sample of pairs, and one read of 16 bytes.
template <class D, class V, class I>
void measure_selection(pairwise_context<D, V, I>& ctx, const intersection_setup<D, V, I>& setup,
                       pairwise_problem& prob)
{
  using policy = cuda_pairwise_policy;
  const auto& res = ctx.res;
  buffer<unsigned long long> counts_a;
  if (!same_matrix(ctx.a, ctx.b)) {
    counts_a = buffer<unsigned long long>(res, std::size_t(std::max<std::int64_t>(ctx.a.cols, 1)),
                                          "column counts of A");
    SPIRA_CUDA_TRY(cudaMemsetAsync(counts_a.data(), 0, counts_a.size() * sizeof(unsigned long long),
                                   res.stream));
    if (ctx.a.nnz > 0) {
      column_counts_kernel<I><<<elementwise_grid(ctx.a.nnz, ctx.sms), policy::row_threads, 0,
                                res.stream>>>(ctx.a.col_idx, ctx.a.nnz, counts_a.data());
      SPIRA_CHECK_LAUNCH();
    }
  }
  buffer<double> stats(res, 2, "selection statistics");
  SPIRA_CUDA_TRY(cudaMemsetAsync(stats.data(), 0, 2 * sizeof(double), res.stream));
  const std::int64_t samples = policy::selection_samples;
  selection_statistics_kernel<D, V, I>
    <<<elementwise_grid(std::max(samples, ctx.a.cols), ctx.sms), policy::row_threads, 0,
       res.stream>>>(setup.args, counts_a.size() > 0 ? counts_a.data() : nullptr, samples,
                     stats.data());
  SPIRA_CHECK_LAUNCH();
  double host[2] = {0, 0};
  copy(host, memory_space::host, stats.data(), memory_space::device, 2, res);
  const double pairs = double(ctx.a.rows) * double(ctx.b.rows);
  prob.products = host[0];
  prob.selection_scan = host[1] * (pairs / std::min(pairs, double(samples)));
}

/// The intersection strategy with a prepared setup: the kernel over (rows of A) x (tiles of B's
/// rows), then for selection NAMMs the warp-per-pair fallback of the pairs it queued.
template <class D, class V, class I>
void run_intersection(pairwise_context<D, V, I>& ctx, const intersection_setup<D, V, I>& setup)
{
  using policy = cuda_pairwise_policy;
  const auto& res = ctx.res;
  intersection_args<D, V, I> p = setup.args;
  p.out = ctx.out.data;
  p.ld = ctx.out.ld;
  buffer<selection_fallback> fallback;
  buffer<unsigned long long> fallback_count;
  if constexpr (selection_namm_v<D, V>) {
    const double pairs = double(ctx.a.rows) * double(ctx.b.rows);
    p.fallback_capacity = std::int64_t(std::min(
      pairs, double(std::max(ctx.a.nnz + ctx.b.nnz, policy::selection_fallback_min_capacity))));
    fallback = buffer<selection_fallback>(res, std::size_t(std::max<std::int64_t>(
                                                 p.fallback_capacity, 1)),
                                          "selection fallback pairs");
    fallback_count = buffer<unsigned long long>(res, 1, "selection fallback count");
    SPIRA_CUDA_TRY(
      cudaMemsetAsync(fallback_count.data(), 0, sizeof(unsigned long long), res.stream));
    p.fallback = fallback.data();
    p.fallback_count = fallback_count.data();
  }
  const std::int64_t tiles = (ctx.b.rows + p.tile_cols - 1) / p.tile_cols;
  const dim3 grid(unsigned(std::min<std::int64_t>(ctx.a.rows, std::numeric_limits<int>::max())),
                  unsigned(std::min<std::int64_t>(tiles, 65535)));
  intersection_kernel<D, V, I>
    <<<grid, policy::intersection_threads, setup.accumulator_bytes(), res.stream>>>(p);
  SPIRA_CHECK_LAUNCH();
  if constexpr (selection_namm_v<D, V>) {
    // At most the list's capacity; the kernel reads the count on the device (no host round trip).
    const std::int64_t most = p.fallback_capacity;
    selection_fallback_kernel<D, V, I>
      <<<row_grid(most, ctx.sms), policy::row_threads, 0, res.stream>>>(p);
    SPIRA_CHECK_LAUNCH();
  }
}

template <class D, class V, class I>
void run_intersection(pairwise_context<D, V, I>& ctx)
{
  const intersection_setup<D, V, I> setup(ctx);
  run_intersection(ctx, setup);
}

/// Shared-memory layout of the hybrid kernel for a dimension: dense slots = 0, else the table size.
template <class V, class I>
int hybrid_table_slots(std::int64_t cols)
{
  using policy = cuda_pairwise_policy;
  const std::size_t dense_bytes = ((std::size_t(cols) * sizeof(V) + 15) / 16) * 16 +
                                  std::size_t((cols + 31) / 32) * sizeof(unsigned);
  if (dense_bytes <= policy::hybrid_shared_bytes) { return 0; }
  int slots = 1;
  while (std::size_t(slots) * 2 * (sizeof(V) + sizeof(I)) <= policy::hybrid_shared_bytes) {
    slots *= 2;
  }
  return slots;
}
template <class V, class I>
std::size_t hybrid_shared_bytes(std::int64_t cols, int slots)
{
  if (slots == 0) {
    return ((std::size_t(cols) * sizeof(V) + 15) / 16) * 16 +
           std::size_t((cols + 31) / 32) * sizeof(unsigned);
  }
  return std::size_t(slots) * (sizeof(V) + sizeof(I));
}

/// The byte budget of a tiled temporary: the policy's default, or the smaller of it and the
/// caller's cap (0 = no cap).
inline std::size_t tile_budget(std::size_t policy_default, std::size_t cap)
{
  return cap == 0 ? policy_default : std::min(policy_default, cap);
}

/// The hybrid strategy. `workspace_cap` (0 = none) bounds the accumulator tile of a distance with
/// several terms; pairwise() has checked that it holds at least one row of the tile.
template <class D, class V, class I>
void run_hybrid(pairwise_context<D, V, I>& ctx, std::size_t workspace_cap)
{
  using policy = cuda_pairwise_policy;
  using add = typename D::add_monoid;
  constexpr int N = pairwise_context<D, V, I>::N;
  const auto& res = ctx.res;
  const auto& a = ctx.a;
  const auto& b = ctx.b;

  const int slots = hybrid_table_slots<V, I>(a.cols);
  const std::size_t shared = hybrid_shared_bytes<V, I>(a.cols, slots);
  const std::int64_t max_part = slots == 0 ? 0 : slots / 2;  // at most 50% load
  hybrid_partition parts_a = partition_rows<I>(res, a.row_ptr, a.col_idx, a.rows, a.cols, max_part);
  hybrid_partition parts_b;
  if constexpr (!D::annihilating) {
    parts_b = partition_rows<I>(res, b.row_ptr, b.col_idx, b.rows, b.cols, max_part);
  }
  // COO row indices of the streamed operands (B in pass 1, A in pass 2).
  buffer<I> rows_b(res, std::size_t(std::max<std::int64_t>(b.nnz, 1)), "COO rows of B");
  expand_row_indices<I><<<row_grid(b.rows, ctx.sms), policy::row_threads, 0, res.stream>>>(
    b.row_ptr, b.rows, rows_b.data());
  SPIRA_CHECK_LAUNCH();
  buffer<I> rows_a;
  if constexpr (!D::annihilating) {
    rows_a = buffer<I>(res, std::size_t(std::max<std::int64_t>(a.nnz, 1)), "COO rows of A");
    expand_row_indices<I><<<row_grid(a.rows, ctx.sms), policy::row_threads, 0, res.stream>>>(
      a.row_ptr, a.rows, rows_a.data());
    SPIRA_CHECK_LAUNCH();
  }
  std::vector<offset_t> a_ptr_host(std::size_t(a.rows) + 1);
  copy(a_ptr_host.data(), memory_space::host, a.row_ptr, memory_space::device,
       a_ptr_host.size(), res);

  // The accumulator: the output itself when it can hold one term in V, else a tile of rows of at
  // most min(policy::workspace_bytes, cap) bytes (at least one row: within a cap, checked by
  // pairwise()).
  const bool in_place = N == 1;
  std::int64_t tile_rows = a.rows;
  buffer<V> workspace;
  if (!in_place) {
    const std::size_t per_row = std::size_t(b.rows) * N * sizeof(V);
    const std::size_t budget = tile_budget(policy::workspace_bytes, workspace_cap);
    tile_rows = std::clamp<std::int64_t>(
      std::int64_t(std::min<std::size_t>(budget / std::max<std::size_t>(per_row, 1),
                                         std::size_t(a.rows))),
      1, a.rows);
    workspace = buffer<V>(res, std::size_t(tile_rows * b.rows * N), "hybrid accumulator tile");
  }

  const auto launch = [&](auto kernel, const hybrid_args<D, V, I>& args) {
    const std::int64_t stream_n = args.s_end - args.s_begin;
    if (args.num_parts == 0 || stream_n == 0) { return; }
    const std::int64_t target = std::int64_t(ctx.sms) * policy::hybrid_blocks_per_sm;
    const std::int64_t chunks_wanted =
      std::clamp<std::int64_t>((target + args.num_parts - 1) / args.num_parts, 1, 65535);
    hybrid_args<D, V, I> q = args;
    q.chunk = std::max<std::int64_t>((stream_n + chunks_wanted - 1) / chunks_wanted, 32);
    const std::int64_t chunks = (stream_n + q.chunk - 1) / q.chunk;
    const dim3 grid(unsigned(std::min<std::int64_t>(q.num_parts, std::numeric_limits<int>::max())),
                    unsigned(std::min<std::int64_t>(chunks, 65535)));
    kernel<<<grid, policy::hybrid_threads, shared, res.stream>>>(q);
    SPIRA_CHECK_LAUNCH();
  };

  for (std::int64_t row0 = 0; row0 < a.rows; row0 += tile_rows) {
    const std::int64_t rows = std::min(tile_rows, a.rows - row0);
    V* acc = in_place ? ctx.out.data + row0 * ctx.out.ld : workspace.data();
    const std::int64_t acc_ld = in_place ? ctx.out.ld : b.rows * N;
    fill_identity_kernel<add, V><<<elementwise_grid(rows * b.rows * N, ctx.sms),
                                   policy::row_threads, 0, res.stream>>>(acc, rows, b.rows * N,
                                                                          acc_ld);
    SPIRA_CHECK_LAUNCH();

    hybrid_args<D, V, I> p{};
    p.d = ctx.d;
    p.cols = a.cols;
    p.acc = acc;
    p.ld = acc_ld;
    p.row0 = row0;
    p.table_slots = slots;
    // Pass 1: the parts of rows [row0, row0 + rows) of A against every nonzero of B.
    const std::int64_t part0 = parts_a.row_part_offset[std::size_t(row0)];
    p.parts = parts_a.parts.data() + part0;
    p.num_parts = parts_a.row_part_offset[std::size_t(row0 + rows)] - part0;
    p.h_col = a.col_idx;
    p.h_val = a.values;
    p.s_row = rows_b.data();
    p.s_col = b.col_idx;
    p.s_val = b.values;
    p.s_begin = 0;
    p.s_end = b.nnz;
    launch(hybrid_kernel<D, V, I, false>, p);
    if constexpr (!D::annihilating) {
      // Pass 2: every part of B against the nonzeros of rows [row0, row0 + rows) of A.
      p.parts = parts_b.parts.data();
      p.num_parts = parts_b.row_part_offset.back();
      p.h_col = b.col_idx;
      p.h_val = b.values;
      p.s_row = rows_a.data();
      p.s_col = a.col_idx;
      p.s_val = a.values;
      p.s_begin = a_ptr_host[std::size_t(row0)];
      p.s_end = a_ptr_host[std::size_t(row0 + rows)];
      launch(hybrid_kernel<D, V, I, true>, p);
    }
    // A one-term semiring without finalize or guard already holds its result in the output.
    if (!(in_place && !distance_traits<D, double>::has_finalize &&
          !accuracy_traits<D, double>::guarded)) {
      ctx.finalize_tile(acc, acc_ld, row0, rows);
    }
  }
  // The workspace and the partitions are released stream-ordered when they go out of scope.
}

template <class D, class V, class I>
__global__ void finalize_in_place_kernel(
  D d, V* out, std::int64_t ld, std::int64_t rows, std::int64_t cols_b, std::int64_t dim,
  const typename distance_traits<D, double>::norm_values* norms_a,
  const typename distance_traits<D, double>::norm_values* norms_b, csr_view<V, I> a,
  csr_view<V, I> b)
{
  const std::int64_t total = rows * cols_b;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += stride) {
    const std::int64_t i = e / cols_b, j = e % cols_b;
    V* x = out + i * ld + j;
    *x = V(finalize_pair_device(d, terms<V, 1>{{*x}}, norms_a[i], norms_b[j], dim,
                                static_cast<const terms<double, 1>*>(nullptr),
                                static_cast<const terms<double, 1>*>(nullptr), rows_of(a), i,
                                rows_of(b), j));
  }
}

template <class D, class V, class I>
void finalize_dense_in_place(pairwise_context<D, V, I>& ctx)
{
  finalize_in_place_kernel<D, V, I>
    <<<elementwise_grid(ctx.a.rows * ctx.b.rows, ctx.sms), cuda_pairwise_policy::row_threads, 0,
       ctx.res.stream>>>(ctx.d, ctx.out.data, ctx.out.ld, ctx.a.rows, ctx.b.rows, ctx.dim,
                         ctx.norms_a.data(), ctx.norms_b.data(), ctx.a, ctx.b);
  SPIRA_CHECK_LAUNCH();
}

/// The dense strategy. `workspace_cap` (0 = none) bounds the densified tiles; pairwise() has
/// checked that it holds at least one row of A and one of B.
template <class D, class V, class I>
void run_dense(pairwise_context<D, V, I>& ctx, std::size_t workspace_cap)
{
  using policy = cuda_pairwise_policy;
  using form = dot_product_form<D>;
  const auto& res = ctx.res;
  const auto& a = ctx.a;
  const auto& b = ctx.b;
  const std::int64_t k = a.cols;
  // Tiles of ta rows of A and tb rows of B, densified: (ta + tb) * k * sizeof(V) bytes, at most
  // min(policy::dense_tile_bytes, cap) (but at least one row of each).
  const std::size_t budget = tile_budget(policy::dense_tile_bytes, workspace_cap);
  const std::size_t row_bytes = sizeof(V) * std::size_t(std::max<std::int64_t>(k, 1));
  const std::int64_t budget_rows = std::int64_t(std::clamp<std::size_t>(
    budget / row_bytes, 2, std::size_t(a.rows) + std::size_t(b.rows)));
  // B gets the rows A leaves over when A is short, and the other way round.
  const std::int64_t tb = std::min(b.rows, budget_rows - std::min(a.rows, budget_rows / 2));
  const std::int64_t ta = std::min(a.rows, budget_rows - tb);
  buffer<V> da(res, std::size_t(ta * k), "dense tile of A");
  buffer<V> db(res, std::size_t(tb * k), "dense tile of B");
  for (std::int64_t j0 = 0; j0 < b.rows; j0 += tb) {
    const std::int64_t nb = std::min(tb, b.rows - j0);
    SPIRA_CUDA_TRY(cudaMemsetAsync(db.data(), 0, std::size_t(nb * k) * sizeof(V), res.stream));
    densify_kernel<form, V, I><<<row_grid(nb, ctx.sms), policy::row_threads, 0, res.stream>>>(
      b.row_ptr, b.col_idx, b.values, j0, nb, k, db.data());
    SPIRA_CHECK_LAUNCH();
    for (std::int64_t i0 = 0; i0 < a.rows; i0 += ta) {
      const std::int64_t na = std::min(ta, a.rows - i0);
      if (j0 == 0 || ta < a.rows) {
        SPIRA_CUDA_TRY(cudaMemsetAsync(da.data(), 0, std::size_t(na * k) * sizeof(V), res.stream));
        densify_kernel<form, V, I><<<row_grid(na, ctx.sms), policy::row_threads, 0, res.stream>>>(
          a.row_ptr, a.col_idx, a.values, i0, na, k, da.data());
        SPIRA_CHECK_LAUNCH();
      }
      gemm_abt<V>(res, da.data(), db.data(), ctx.out.data + i0 * ctx.out.ld + j0, na, nb, k,
                  ctx.out.ld);
    }
  }
  // Expansion / finalize (and the accuracy guard) in place: the output holds the dot products.
  if constexpr (distance_traits<D, double>::has_finalize || accuracy_traits<D, double>::guarded) {
    finalize_dense_in_place(ctx);
  }
}

#endif  // __CUDACC__

inline void require_device_space(memory_space s, const char* op, const char* name)
{
  expects(s == memory_space::device, op, ": ", name,
          " is in host memory; pass host_resources or copy it with spira::to_device");
}

}  // namespace detail

/// The least workspace cap (spira::pairwise's workspace_bytes, distance_params::workspace_bytes)
/// with which strategy `s` can run D on these operands: for `hybrid` with a distance of several
/// accumulator terms, one row of the accumulator tile (rows(B) x terms x sizeof(V) bytes); for
/// `dense`, one densified row of A and one of B (2 x cols x sizeof(V) bytes); 0 otherwise (the
/// strategy has no tiled temporary).
template <class D, class V, class I>
[[nodiscard]] std::size_t workspace_minimum(csr_view<V, I> a, csr_view<V, I> b,
                                            pairwise_strategy s)
{
  constexpr int N = distance_traits<D, V>::num_terms;
  if (s == pairwise_strategy::hybrid && N > 1) { return std::size_t(b.rows) * N * sizeof(V); }
  if (s == pairwise_strategy::dense) { return 2 * std::size_t(a.cols) * sizeof(V); }
  return 0;
}

namespace detail {

/// Throws spira::invalid_argument, naming `name` (the caller's spelling of the cap), when a
/// nonzero cap is below workspace_minimum for strategy `s`.
template <class D, class V, class I>
void check_workspace_cap(csr_view<V, I> a, csr_view<V, I> b, pairwise_strategy s,
                         std::size_t cap, const char* name)
{
  if (cap == 0) { return; }
  const std::size_t least = workspace_minimum<D>(a, b, s);
  if (cap >= least) { return; }
  constexpr int N = distance_traits<D, V>::num_terms;
  if (s == pairwise_strategy::hybrid) {
    throw invalid_argument(concat(
      "spira::pairwise(cuda): ", name, " = ", cap, " is too small for the hybrid strategy: one "
      "row of its accumulator tile takes rows(B) x terms x sizeof(value) = ", b.rows, " x ", N,
      " x ", sizeof(V), " = ", least, " bytes; pass at least ", least,
      " (or 0 for the defaults)"));
  }
  throw invalid_argument(concat(
    "spira::pairwise(cuda): ", name, " = ", cap, " is too small for the dense strategy: one "
    "densified row of A and one of B take 2 x cols x sizeof(value) = 2 x ", a.cols, " x ",
    sizeof(V), " = ", least, " bytes; pass at least ", least, " (or 0 for the defaults)"));
}

}  // namespace detail

/// The strategy a call with `requested` runs for D on these operands (resolves `automatic`; throws
/// spira::invalid_argument for a strategy that cannot compute D). `automatic` passes over `dense`
/// when a nonzero `workspace_bytes` cannot hold its smallest tiles (workspace_minimum).
template <class D, class V, class I>
pairwise_strategy resolve_strategy(csr_view<V, I> a, csr_view<V, I> b, pairwise_strategy requested,
                                   std::size_t workspace_bytes = 0)
{
  using traits = distance_traits<D, V>;
  pairwise_problem prob{a.rows, b.rows, a.cols, a.nnz, b.nnz, traits::annihilating,
                        traits::invertible_add,
                        dot_product_form<D>::value && dense_keeps_accuracy_v<D, V>};
  prob.selection = detail::selection_namm_v<D, V>;
  pairwise_strategy s = requested;
  if (requested == pairwise_strategy::automatic) {
    s = choose_strategy(prob);
    if (s == pairwise_strategy::dense && workspace_bytes > 0 &&
        workspace_bytes < workspace_minimum<D>(a, b, s)) {
      prob.dot_product = false;  // the next choice for the same problem
      s = choose_strategy(prob);
    }
  }
  if (s == pairwise_strategy::intersection) {
    detail::expects(traits::annihilating || traits::invertible_add ||
                      detail::selection_namm_v<D, V>,
                    "spira::pairwise(cuda): the intersection strategy needs an annihilating "
                    "semiring, a NAMM whose add monoid is a sum, or a one-term NAMM whose add "
                    "monoid is min or max; use hybrid or automatic");
  }
  if (s == pairwise_strategy::dense) {
    detail::expects(dot_product_form<D>::value,
                    "spira::pairwise(cuda): the dense strategy needs a distance in dot-product "
                    "form (spira::dot_product_form); use intersection, hybrid or automatic");
  }
  return s;
}

#if defined(__CUDACC__)

namespace detail {

/// spira::pairwise on the GPU; `cap_name` is the caller's name of the workspace cap, for messages
/// ("workspace_bytes", "params.workspace_bytes").
template <class D, class V, class I>
void pairwise_cuda(const cuda_resources& res, csr_view<V, I> a, csr_view<V, I> b,
                   dense_view<V> out, const D& d, pairwise_strategy strategy,
                   std::size_t workspace_bytes, const char* cap_name)
{
  static_assert(semiring<D, V>, "spira::pairwise: D must model spira::semiring (add_monoid, "
                                "annihilating, multiply<T>(a, b))");
  detail::require_device_space(a.space, "spira::pairwise", "A");
  detail::require_device_space(b.space, "spira::pairwise", "B");
  detail::require_device_space(out.space, "spira::pairwise", "out");
  detail::expects<dimension_mismatch>(a.cols == b.cols, "spira::pairwise: A has ", a.cols,
                                      " columns but B has ", b.cols);
  detail::expects<dimension_mismatch>(out.rows == a.rows && out.cols == b.rows,
                                      "spira::pairwise: out is ", out.rows, " x ", out.cols,
                                      " but must be rows(A) x rows(B) = ", a.rows, " x ", b.rows);
  detail::expects(out.ld >= out.cols, "spira::pairwise: out.ld = ", out.ld,
                  " is smaller than out.cols = ", out.cols);
  detail::expects(out.data != nullptr || a.rows == 0 || b.rows == 0,
                  "spira::pairwise: out.data is null");
  const pairwise_strategy s = resolve_strategy<D>(a, b, strategy, workspace_bytes);
  detail::check_workspace_cap<D>(a, b, s, workspace_bytes, cap_name);
  detail::pairwise_device_scope scope(res.device);
  validate(res, a, csr_check::canonical, "spira::pairwise: A");
  if (!detail::same_matrix(a, b)) { validate(res, b, csr_check::canonical, "spira::pairwise: B"); }
  if (a.rows == 0 || b.rows == 0) { return; }
  detail::pairwise_context<D, V, I> ctx(res, d, a, b, out);
  if constexpr (detail::selection_namm_v<D, V>) {
    if (strategy == pairwise_strategy::automatic) {
      // The fix-up's cost depends on the values: measure it on the intersection setup, which the
      // intersection strategy then reuses (choose_strategy).
      const detail::intersection_setup<D, V, I> setup(ctx);
      pairwise_problem prob{a.rows, b.rows, a.cols, a.nnz, b.nnz, false, false, false};
      prob.selection = true;
      detail::measure_selection(ctx, setup, prob);
      if (choose_strategy(prob) == pairwise_strategy::intersection) {
        detail::run_intersection(ctx, setup);
        return;
      }
    }
  }
  switch (s) {
    case pairwise_strategy::intersection:
      if constexpr (D::annihilating || distance_traits<D, V>::invertible_add ||
                    detail::selection_namm_v<D, V>) {
        detail::run_intersection(ctx);
      }
      break;
    case pairwise_strategy::hybrid: detail::run_hybrid(ctx, workspace_bytes); break;
    case pairwise_strategy::dense:
      if constexpr (dot_product_form<D>::value) { detail::run_dense(ctx, workspace_bytes); }
      break;
    case pairwise_strategy::automatic: break;  // resolved above
  }
  // Workspace buffers are freed stream-ordered as ctx goes out of scope.
}

}  // namespace detail

/// out(i, j) = finalize(⊕_c ⊗(A[i,c], B[j,c]), norms(A_i), norms(B_j), A.cols) on the GPU, with
/// the semantics of the host spira::pairwise (spira/ops.hpp). A and B: canonical CSR in device
/// memory of res.device with the same number of columns; out: rows(A) x rows(B) in device memory.
/// `strategy` forces a strategy; `workspace_bytes` caps the tiled temporaries (the hybrid
/// accumulator tile of a distance with several terms, the dense strategy's densified tiles) at
/// min(policy default, cap), 0 = the defaults, with the meaning of
/// distance_params::workspace_bytes; a cap below workspace_minimum throws
/// spira::invalid_argument. Queued on res.stream; returns without synchronising except for small
/// host reads of sizes.
template <class D, class V, class I>
void pairwise(const cuda_resources& res, csr_view<V, I> a, csr_view<V, I> b, dense_view<V> out,
              const D& d = {}, pairwise_strategy strategy = pairwise_strategy::automatic,
              std::size_t workspace_bytes = 0)
{
  detail::pairwise_cuda(res, a, b, out, d, strategy, workspace_bytes, "workspace_bytes");
}

#endif  // __CUDACC__

}  // namespace spira
