// spira: the built-in distance catalogue behind a compiled entry point.
//
//   spira::dense_matrix<float> d(res, a.rows(), b.rows());
//   spira::pairwise_distance(spira::host_resources{}, a.view(), b.view(), d.view(),
//                            {.metric = spira::metric::cosine});
//
// Metric names follow scipy.spatial.distance / scikit-learn; the semantics of each metric (and its
// documented results for all-zero rows, 0/0, 0 log 0 and x log(x/0)) are in docs/metrics.md and
// next to the operator structs in semirings/distances.hpp. User-defined distances go through the
// header-only spira::pairwise (spira/ops.hpp) instead.
#pragma once

#include <spira/error.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>

#include <cstddef>
#include <limits>
#include <span>
#include <string_view>

namespace spira {

enum class metric {
  cosine,
  euclidean,
  sqeuclidean,
  manhattan,
  chebyshev,
  minkowski,
  canberra,
  braycurtis,
  hamming,
  jaccard,
  dice,
  russellrao,
  correlation,
  jensenshannon,
  hellinger,
  kl_divergence,
  inner_product,
};

/// Every metric, in declaration order.
[[nodiscard]] std::span<const metric> all_metrics() noexcept;

/// The scipy / scikit-learn name of a metric ("cosine", "kl_divergence", ...).
[[nodiscard]] const char* to_string(metric m) noexcept;

/// Another name of a metric that scipy or scikit-learn accepts ("cityblock" for manhattan).
struct metric_alias {
  const char* name;
  metric target;
};

/// The aliases metric_from_string accepts: cityblock and l1 (manhattan), l2 (euclidean).
[[nodiscard]] std::span<const metric_alias> metric_aliases() noexcept;

/// Parses a metric name: the names to_string returns or an alias (metric_aliases); throws
/// spira::invalid_argument listing the valid names otherwise.
[[nodiscard]] metric metric_from_string(std::string_view name);

/// True when larger values mean closer (inner_product); k-NN then keeps the largest values.
[[nodiscard]] bool is_similarity(metric m) noexcept;

/// True when the metric requires non-negative input values (jensenshannon, hellinger,
/// kl_divergence); pairwise_distance rejects negative values for them.
[[nodiscard]] bool requires_nonnegative(metric m) noexcept;

/// How the CUDA engine evaluates A ⊕.⊗ Bᵀ (docs/cuda-engine.md). The host engine has one strategy
/// per semiring class and ignores this choice.
enum class pairwise_strategy {
  automatic,     ///< chosen from the shapes, densities and the metric (spira::choose_strategy)
  intersection,  ///< the CSC of B walked from A's nonzeros (plus per-pair fix-ups for chebyshev)
  hybrid,        ///< the seed paper's load-balanced hybrid CSR+COO kernel (two passes for NAMMs)
  dense,         ///< densified tiles and a cuBLAS GEMM (dot-product metrics only)
};

/// "automatic", "intersection", "hybrid" or "dense".
[[nodiscard]] const char* to_string(pairwise_strategy s) noexcept;

/// Parses a strategy name (exactly the names to_string returns); throws spira::invalid_argument
/// listing the valid names otherwise.
[[nodiscard]] pairwise_strategy pairwise_strategy_from_string(std::string_view name);

/// True when the CUDA engine can evaluate metric `m` with strategy `s` (automatic, intersection and
/// hybrid: every metric; dense: the metrics whose ⊗ is a product of per-element maps: cosine,
/// euclidean, sqeuclidean, correlation, inner_product, dice, russellrao, hellinger).
/// pairwise_distance throws spira::invalid_argument otherwise.
[[nodiscard]] bool supports_strategy(metric m, pairwise_strategy s) noexcept;

struct distance_params {
  spira::metric metric = spira::metric::euclidean;
  /// The Minkowski exponent, p >= 1 and finite (ignored by the other metrics).
  double p = 2.0;
  /// CUDA engine only (see pairwise_strategy); every strategy computes the same distances.
  pairwise_strategy strategy = pairwise_strategy::automatic;
  /// CUDA engine only: a cap, in bytes, on its tiled temporaries: the hybrid strategy's
  /// accumulator tile (distances with several accumulator terms, e.g. braycurtis) and the dense
  /// strategy's densified tiles of A and B. 0 = the policy's defaults (512 MiB and 1 GiB,
  /// spira::cuda_pairwise_policy); otherwise the smaller of the default and the cap. The
  /// O(nnz + rows) workspace (CSC of B, norms, row parts) is not counted. A cap below one tile's
  /// minimum (one row of the accumulator tile: rows(B) x terms x sizeof(ValueT); one densified row
  /// of A and one of B: 2 x cols x sizeof(ValueT)) throws spira::invalid_argument naming
  /// params.workspace_bytes when that strategy is forced; `automatic` then takes `intersection`
  /// instead of `dense`. See docs/cuda-engine.md (Memory). The host engine ignores it.
  std::size_t workspace_bytes = 0;
};

/// Whether p is a valid Minkowski exponent: finite and at least 1 (every entry point and the CLI
/// ask this one function).
[[nodiscard]] constexpr bool valid_minkowski_p(double p) noexcept
{
  return p >= 1.0 && p <= std::numeric_limits<double>::max();
}

namespace detail {
/// Throws spira::invalid_argument "OP: minkowski needs a finite p >= 1, got p = P" for metric
/// minkowski with an invalid p.
inline void check_minkowski_p(metric m, double p, const char* op)
{
  expects(m != metric::minkowski || valid_minkowski_p(p), op,
          ": minkowski needs a finite p >= 1, got p = ", p);
}
/// Throws spira::invalid_argument "OP: strategy S cannot evaluate metric M" where
/// supports_strategy(m, s) is false.
inline void check_strategy_supported(metric m, pairwise_strategy s, const char* op)
{
  expects(supports_strategy(m, s), op, ": strategy ", to_string(s), " cannot evaluate metric ",
          to_string(m), " (see spira::supports_strategy)");
}
}  // namespace detail

/// out(i, j) = distance(row i of A, row j of B) for the built-in metric `params.metric`.
/// A and B: canonical CSR in host memory (sorted, duplicate-free columns; see spira::canonicalize)
/// with the same number of columns; they may have different numbers of rows. out: rows(A) x
/// rows(B) in host memory. Throws spira::invalid_argument for a non-canonical input, a Minkowski p
/// outside [1, inf), or a negative value where the metric requires non-negative input;
/// spira::dimension_mismatch for disagreeing extents.
template <class ValueT, class IndexT>
void pairwise_distance(const host_resources& res, csr_view<ValueT, IndexT> a,
                       csr_view<ValueT, IndexT> b, dense_view<ValueT> out,
                       const distance_params& params);

/// The same on the GPU: A, B and out in device memory of res.device, queued on res.stream (the
/// call returns once the work is queued, apart from small reads of sizes). Same semantics, edge
/// cases and exceptions as the host overload, within floating-point tolerance
/// (docs/cuda-engine.md); params.strategy forces a strategy. A build without CUDA throws
/// spira::not_compiled.
template <class ValueT, class IndexT>
void pairwise_distance(const cuda_resources& res, csr_view<ValueT, IndexT> a,
                       csr_view<ValueT, IndexT> b, dense_view<ValueT> out,
                       const distance_params& params);

}  // namespace spira
