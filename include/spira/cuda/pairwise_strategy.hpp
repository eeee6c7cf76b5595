// spira: the strategy choice of the CUDA pairwise engine, its tuning policy and the traits it
// reads (plain C++: compiles without a CUDA compiler, so that hosts and tests can ask which
// strategy a call would run). The kernels are in spira/cuda/detail/pairwise_*.cuh, the entry
// point in spira/cuda/pairwise.cuh.
#pragma once

#include <spira/accuracy.hpp>
#include <spira/distance.hpp>
#include <spira/error.hpp>
#include <spira/matrix.hpp>
#include <spira/semiring.hpp>
#include <spira/semirings/distances.hpp>
#include <spira/semirings/graphblas.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace spira {

// ---- tuning
// ---------------------------------------------------------------------------------------

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
  /// A row of A with at least this many nonzeros, against a B whose rows fit one tile, takes its
  /// nonzeros in batches of 32 a warp (their column bounds loaded side by side, short columns'
  /// products spread over the lanes) instead of one a warp. Measured on the H100
  /// (bench/results/knn-batches-2026-11-27): long rows over short columns (movielens, 165
  /// nonzeros a row over columns of about 10) gain; short rows, and indexes of several tiles
  /// (where each column must be cut at both ends of the tile), do not.
  static constexpr std::int64_t intersection_batch_entries = 64;
  /// ... and a batch's products are spread over the warp's lanes when its columns average fewer
  /// than this many entries (else its nonzeros are walked one at a time by the whole warp).
  static constexpr int intersection_spread_column_entries = 64;
  /// Entries of the accumulator tile each thread of the fused k-NN reads per round (a round is
  /// then one barrier when the pairs it holds may all be skipped, spira/cuda/knn.cuh).
  static constexpr int knn_round_entries = 4;
  /// The fused k-NN takes a query row whose disjoint pairs may be skipped by its products (sorted
  /// pairs of index row and product) rather than by a walk over the index when the index has at
  /// least this many rows per product (and the products fit the accumulator tile's memory;
  /// spira/cuda/knn.cuh).
  static constexpr std::int64_t knn_walk_per_product = 8;
  /// Otherwise its walk skips the disjoint pairs (rounds of knn_round_entries) when the index has
  /// at least this many rows per product; with fewer, nearly every pair shares a column and the
  /// walk ranks every pair in rounds of one entry a thread. Measured on the H200
  /// (bench/results/knn-gates-2026-11-27: 1, 2, 4, 8 and always; 1 was fastest or within the
  /// spread of runs on every set).
  static constexpr std::int64_t knn_skip_per_product = 1;
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

// ---- traits
// ---------------------------------------------------------------------------------------

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

template <>
struct dot_product_form<distances::inner_product> : std::true_type, detail::identity_form {};
template <>
struct dot_product_form<distances::sqeuclidean> : std::true_type, detail::identity_form {};
template <>
struct dot_product_form<distances::euclidean> : std::true_type, detail::identity_form {};
template <>
struct dot_product_form<distances::cosine> : std::true_type, detail::identity_form {};
template <>
struct dot_product_form<distances::correlation> : std::true_type, detail::identity_form {};
template <>
struct dot_product_form<distances::dice> : std::true_type, detail::indicator_form {};
template <>
struct dot_product_form<distances::russellrao> : std::true_type, detail::indicator_form {};
template <>
struct dot_product_form<distances::hellinger> : std::true_type, detail::sqrt_form {};
template <>
struct dot_product_form<semirings::plus_times> : std::true_type, detail::identity_form {};

/// Whether the intersection strategy accumulates D's ⊕ in double (else in the value type ValueT).
/// Default: every sum-kind ⊕, because sums feed cancelling finalizes (NAMM corrections, norm
/// expansions). Distances whose finalize does not cancel (a dot product used as it is, or divided
/// by the norms) accumulate in ValueT: half the shared memory per output column and cheaper
/// atomics, with a relative error of the float sum (about 1e-7 of Σ|a b|). Specialise for a user
/// distance.
template <class D>
struct intersection_sums_in_double : std::bool_constant<D::add_monoid::kind == monoid_kind::sum> {};
template <>
struct intersection_sums_in_double<distances::cosine> : std::false_type {};
template <>
struct intersection_sums_in_double<distances::inner_product> : std::false_type {};
template <>
struct intersection_sums_in_double<semirings::plus_times> : std::false_type {};

/// Whether `automatic` may run D with the dense strategy on values of type ValueT: its GEMM sums in
/// ValueT, and a float sum cannot feed an expansion that the accuracy guard checks
/// (spira/accuracy.hpp: every pair would be recomputed directly), so float data with euclidean,
/// sqeuclidean, correlation or hellinger runs sparse. Forcing dense stays correct (the guard), only
/// slower.
template <class D, class ValueT>
inline constexpr bool dense_keeps_accuracy_v =
    sizeof(ValueT) >= sizeof(double) || !accuracy_traits<D, double>::has_trusted ||
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
  if (p.annihilating || p.invertible_add) {
    return pairwise_strategy::intersection;
  }
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
template <class D, class ValueT>
inline constexpr bool sum_namm_v = !D::annihilating && D::add_monoid::kind == monoid_kind::sum;

/// A one-term NAMM whose ⊕ is a selection (min or max). Its union is
///   ⊕( ⊕_{A_i ∩ B_j} ⊗(a, b),  best_{c ∈ A_i \ B_j} ⊗(a_c, 0),  best_{c ∈ B_j \ A_i} ⊗(0, b_c) )
/// and each "best outside the other row" is the first entry, in ⊕-order, whose column the other
/// row does not store: usually the row's best entry itself. The intersection strategy evaluates
/// the first term with its kernel and the other two per pair from a few precomputed candidates.
template <class D, class ValueT>
inline constexpr bool selection_namm_v =
    !D::annihilating && distance_traits<D, ValueT>::num_terms == 1 &&
    (D::add_monoid::kind == monoid_kind::min || D::add_monoid::kind == monoid_kind::max);

/// Whether the intersection strategy (and so the fused k-NN) can compute D: an annihilating
/// semiring, a NAMM whose ⊕ is a sum (the union as intersection plus per-row corrections), or a
/// one-term NAMM whose ⊕ is min or max (selection_namm_v).
template <class D, class ValueT>
inline constexpr bool intersection_capable_v =
    D::annihilating || distance_traits<D, ValueT>::invertible_add || selection_namm_v<D, ValueT>;

inline void require_device_space(memory_space s, const char* op, const char* name)
{
  expects(s == memory_space::device, op, ": ", name,
          " is in host memory; pass host_resources or copy it with spira::to_device");
}

}  // namespace detail

/// The least workspace cap (spira::pairwise's workspace_bytes, distance_params::workspace_bytes)
/// with which strategy `s` can run D on these operands: for `hybrid` with a distance of several
/// accumulator terms, one row of the accumulator tile (rows(B) x terms x sizeof(ValueT) bytes); for
/// `dense`, one densified row of A and one of B (2 x cols x sizeof(ValueT) bytes); 0 otherwise (the
/// strategy has no tiled temporary).
template <class D, class ValueT, class IndexT>
[[nodiscard]] std::size_t workspace_minimum(csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b,
                                            pairwise_strategy s)
{
  constexpr int N = distance_traits<D, ValueT>::num_terms;
  if (s == pairwise_strategy::hybrid && N > 1) {
    return std::size_t(b.rows) * N * sizeof(ValueT);
  }
  if (s == pairwise_strategy::dense) {
    return 2 * std::size_t(a.cols) * sizeof(ValueT);
  }
  return 0;
}

namespace detail {

/// Throws spira::invalid_argument, naming `name` (the caller's spelling of the cap), when a
/// nonzero cap is below workspace_minimum for strategy `s`.
template <class D, class ValueT, class IndexT>
void check_workspace_cap(csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b,
                         pairwise_strategy s, std::size_t cap, const char* name)
{
  if (cap == 0) {
    return;
  }
  const std::size_t least = workspace_minimum<D>(a, b, s);
  if (cap >= least) {
    return;
  }
  constexpr int N = distance_traits<D, ValueT>::num_terms;
  if (s == pairwise_strategy::hybrid) {
    throw invalid_argument(
        concat("spira::pairwise(cuda): ", name, " = ", cap,
               " is too small for the hybrid strategy: one "
               "row of its accumulator tile takes rows(B) x terms x sizeof(value) = ",
               b.rows, " x ", N, " x ", sizeof(ValueT), " = ", least, " bytes; pass at least ",
               least, " (or 0 for the defaults)"));
  }
  throw invalid_argument(
      concat("spira::pairwise(cuda): ", name, " = ", cap,
             " is too small for the dense strategy: one "
             "densified row of A and one of B take 2 x cols x sizeof(value) = 2 x ",
             a.cols, " x ", sizeof(ValueT), " = ", least, " bytes; pass at least ", least,
             " (or 0 for the defaults)"));
}

}  // namespace detail

/// The strategy a call with `requested` runs for D on these operands (resolves `automatic`; throws
/// spira::invalid_argument for a strategy that cannot compute D). `automatic` passes over `dense`
/// when a nonzero `workspace_bytes` cannot hold its smallest tiles (workspace_minimum).
template <class D, class ValueT, class IndexT>
pairwise_strategy resolve_strategy(csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b,
                                   pairwise_strategy requested, std::size_t workspace_bytes = 0)
{
  using traits = distance_traits<D, ValueT>;
  pairwise_problem prob{a.rows,
                        b.rows,
                        a.cols,
                        a.nnz,
                        b.nnz,
                        traits::annihilating,
                        traits::invertible_add,
                        dot_product_form<D>::value && dense_keeps_accuracy_v<D, ValueT>};
  prob.selection = detail::selection_namm_v<D, ValueT>;
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
    detail::expects(detail::intersection_capable_v<D, ValueT>,
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

}  // namespace spira
