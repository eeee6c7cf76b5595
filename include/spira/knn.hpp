// spira: exact k-nearest-neighbour graphs.
//
//   auto g = spira::knn_graph(spira::host_resources{}, index.view(), std::nullopt,
//                             {.k = 15, .metric = spira::metric::cosine});
//   // g.indices.view()(i, c) and g.distances.view()(i, c), c = 0..k-1: the neighbours of row i,
//   // nearest first
//
// Queries x index are processed in tiles bounded by a memory budget. Each tile's distances go
// through a row-wise select_k and a running merge keeps the best k across index tiles, so any k and
// any dataset size complete within the budget. The direction follows the metric: distances keep the
// smallest values, similarities (inner_product) the largest.
//
// merge_knn merges the results of disjoint index blocks (each task of a distributed run searches
// one block) into the result knn_graph gives for the whole index, in the same order.
//
// Promises: rows sorted nearest first; among equal distances (as the float32 values returned)
// the smaller index comes first (the result is unique for given distances; deterministic on the
// host, and on CUDA up to the last bit of atomically summed distances - see below); without
// exclude_self a point of the index queried against itself is normally its own first neighbour (it
// ties at distance 0 with exact duplicates, which then come in index order); with exclude_self the
// query row's own index is removed - only that index, so exact duplicates remain at distance 0.
#pragma once

#include <spira/distance.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>
#include <spira/select_k.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

namespace spira {

/// How the CUDA backend computes the k-NN graph (the host backend always tiles).
enum class knn_algo {
  automatic,  ///< fused when the metric runs with the intersection strategy, k <= 1,024 and no
              ///< tile size is forced
  fused,      ///< the top-k fused into the intersection kernel: O(nnz + n_q k) memory (CUDA only)
  tiled,      ///< distance tiles through pairwise_distance, select_k and a running merge
};

/// "automatic", "fused", "tiled"; knn_algo_from_string reads them back (invalid_argument
/// listing the valid names otherwise).
[[nodiscard]] const char* to_string(knn_algo a) noexcept;
[[nodiscard]] knn_algo knn_algo_from_string(std::string_view name);

struct knn_params {
  std::int64_t k = 15;
  spira::metric metric = spira::metric::euclidean;
  double p = 2.0;  ///< Minkowski exponent
  /// Remove each query row's own index from its neighbours. Only meaningful when the queries are
  /// the index (no separate queries given); rejected otherwise.
  bool exclude_self = false;
  /// Bytes the distance tiles and the running top-k may use; 0 =
  /// spira::default_host_memory_budget() on the host (half of the memory available to the process,
  /// its cgroup limit included, at most a quarter of physical memory), half the free device memory
  /// on CUDA. The tile sizes follow from it unless forced.
  std::size_t memory_budget = 0;
  /// Strategy overrides (tests and benchmarks): rows of queries and of the index per tile (0 =
  /// derived from the budget). Setting either selects the tiled algorithm.
  std::int64_t query_tile = 0;
  std::int64_t index_tile = 0;
  /// The CUDA backend's algorithm and, for its tiles and its fused kernel, the pairwise strategy
  /// (automatic: spira::choose_strategy). The fused algorithm needs the intersection strategy.
  knn_algo algo = knn_algo::automatic;
  pairwise_strategy strategy = pairwise_strategy::automatic;
  /// Called after each tile with (query rows finished, total query rows); may be empty.
  std::function<void(std::int64_t, std::int64_t)> progress;
};

/// Read-only n_q x k neighbour lists in host or device memory (a knn_result's, or arrays the
/// caller holds, e.g. from Python): what merge_knn reads.
struct knn_result_view {
  dense_view<const std::int64_t> indices;
  dense_view<const float> distances;
};

/// The k-NN graph of n_q queries: indices (int64) and distances (float32, in the metric's own
/// units, e.g. euclidean and not squared), n_q x k, each row nearest first.
struct knn_result {
  dense_matrix<std::int64_t> indices;
  dense_matrix<float> distances;

  [[nodiscard]] knn_result_view view() const noexcept { return {indices.view(), distances.view()}; }
};

/// Exact k-NN of the rows of `queries` (default: the rows of `index`) among the rows of `index`.
/// Both canonical CSR in host memory with the same columns; 1 <= k <= rows(index) (- 1 with
/// exclude_self). The result is in host memory.
template <class ValueT, class IndexT>
[[nodiscard]] knn_result knn_graph(
    const host_resources& res, csr_view<ValueT, IndexT> index,
    std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> queries,
    const knn_params& params);

/// The same on the GPU (res.device, res.stream). Index and queries both in host memory (the result
/// is in host memory) or both in device memory of res.device (the result is in device memory:
/// nothing goes through the host). Two algorithms (knn_params::algo):
///  * fused (the default where it applies: metrics that run with the intersection strategy, which
///    automatic picks for sparse data, and k <= knn_fused_max_k = 1,024): the top-k is kept in
///    shared memory by the distance kernel itself (spira/cuda/knn.cuh); memory O(nnz + n_q k);
///  * tiled: distance tiles under the memory budget, select_k per tile and a running merge, all
///    on the GPU; a host index is copied to the device once (when it fits half the budget), host
///    query rows once per query tile; device operands are used where they are. An index tile on
///    the device is prepared once for the distance engine (row norms, prepared values, the CSC
///    of the intersection strategy) and kept for every query tile, while the tiles kept take at
///    most half the budget, beside it (the distances are the same bits either way).
/// The operands are checked once per call. Without exclude_self a self query computes each
/// point's distance to itself with the others (no second pass). memory_budget bounds the device
/// memory of either (default: half the free device memory); the fused algorithm falls back to
/// tiles when the index does not fit. Float distances are computed in float on the GPU, so ties
/// and near-ties may order differently from the host backend within float rounding. Sums use
/// atomics (see spira/cuda/pairwise.cuh), so a distance may differ in its last bit between runs
/// and near-ties may swap. With the intersection strategy in its tiles, the tiled algorithm
/// computes every distance with the same code as the fused one.
/// A build without CUDA throws spira::not_compiled.
template <class ValueT, class IndexT>
[[nodiscard]] knn_result knn_graph(
    const cuda_resources& res, csr_view<ValueT, IndexT> index,
    std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> queries,
    const knn_params& params);

/// What merge_knn checks of its parts. `rows` (the default): the parts' shapes and every row (the
/// index range, padding after the real entries, no index twice, sorted best first), each
/// violation an error naming the part and the row. `shapes`: the shapes only, for parts the
/// library made itself (a distributed run's partial lists), whose rows need no second check; a
/// row that breaks the contract then merges to an unspecified list instead of an error. The row
/// checks cost about half of the merge: the duplicate check sorts each row's indices.
enum class merge_check { rows, shapes };

/// Merges the k-NN lists of the same n_q queries against DISJOINT blocks of an index into the
/// exact k-NN lists against their union: the building block of distributed runs, where each task
/// computes knn_graph against one index block and the partial results merge in a tree.
///
/// Contract of the parts (checked; violations throw spira::invalid_argument, or
/// spira::dimension_mismatch for shapes, naming the part, the row and the value):
///  * every part has n_q rows; part p has k_p columns (any k_p >= 0, indices and distances alike);
///  * indices are global (a block's local index plus the block's first row) and >= -1; -1 marks
///    padding, which is ignored (its distance is not read) and may only follow the real entries;
///  * each row is sorted best first by the order below, as knn_graph, select_k (sorted) and
///    merge_knn return it;
///  * the blocks are disjoint: an index listed twice in one row, by two parts or by one, is a
///    caller error ("row 7 lists index 42 in parts 0 and 2").
/// The order is knn_graph's: by the float32 distance in the direction of `order` (smallest for
/// distances, largest for similarities such as inner_product), -0 equal to +0, NaN after every
/// number in either direction, then the smaller index. Merging the knn_graph results of disjoint
/// blocks (each with k_p = min(k, rows of the block)) therefore gives, bit for bit, the knn_graph
/// of the whole index for the same queries (separate queries; the index queried against itself
/// ranks each point first among equal distances, which a merge of blocks does not know).
///
/// The result is n_q x k (k >= 1), each row best first; a row with fewer than k real candidates
/// is padded after them with index -1 and distance +inf (smallest) or -inf (largest), as select_k
/// pads. Host memory; the merge runs on res.threads threads (OpenMP over rows). Cost
/// O(n_q (sum k_p) log(sum k_p)): the duplicate check sorts each row's indices.
[[nodiscard]] knn_result merge_knn(const host_resources& res,
                                   std::span<const knn_result_view> parts, std::int64_t k,
                                   select_order order, merge_check check = merge_check::rows);

/// The same contract for parts in host or device memory (all parts in one space). Device parts are
/// checked and merged on the GPU (res.device, res.stream), with the order and the running merge of
/// the host code above: the result, in device memory allocated from res, is the host merge's bit
/// for bit, and a bad part is reported with the host's message (the first bad row, found on the
/// device, is copied back and described on the host). The call returns after the merge completed
/// (it reads the check's outcome). Device workspace: n_q x k entries besides the result, and the
/// duplicate check's sort buffers for a chunk of rows (at most about 512 MiB). Host parts are
/// merged on the host and the result stays in host memory, without touching the device. A build
/// without CUDA throws spira::not_compiled.
[[nodiscard]] knn_result merge_knn(const cuda_resources& res,
                                   std::span<const knn_result_view> parts, std::int64_t k,
                                   select_order order, merge_check check = merge_check::rows);

namespace detail {
inline std::vector<knn_result_view> knn_result_views(std::span<const knn_result> parts)
{
  std::vector<knn_result_view> v;
  v.reserve(parts.size());
  for (const knn_result& p : parts) {
    v.push_back(p.view());
  }
  return v;
}
}  // namespace detail

/// merge_knn of owning results (e.g. a std::vector<knn_result>).
[[nodiscard]] inline knn_result merge_knn(const host_resources& res,
                                          std::span<const knn_result> parts, std::int64_t k,
                                          select_order order, merge_check check = merge_check::rows)
{
  return merge_knn(res, std::span<const knn_result_view>(detail::knn_result_views(parts)), k, order,
                   check);
}
[[nodiscard]] inline knn_result merge_knn(const cuda_resources& res,
                                          std::span<const knn_result> parts, std::int64_t k,
                                          select_order order, merge_check check = merge_check::rows)
{
  return merge_knn(res, std::span<const knn_result_view>(detail::knn_result_views(parts)), k, order,
                   check);
}

/// How a k-NN graph becomes a sparse matrix (scikit-learn's kneighbors_graph modes).
enum class knn_graph_mode { distance, connectivity };
/// "distance", "connectivity" (scikit-learn's mode names); knn_graph_mode_from_string reads them.
[[nodiscard]] const char* to_string(knn_graph_mode m) noexcept;
[[nodiscard]] knn_graph_mode knn_graph_mode_from_string(std::string_view name);

/// The order of a row's entries in to_csr_graph.
enum class knn_graph_order {
  nearest_first,  ///< the row of the k-NN result as it is (sklearn.neighbors.kneighbors_graph)
  by_column       ///< increasing column index (a canonical CSR, see spira::csr_check)
};

/// The graph as an n_q x n_index CSR with k entries per row, values the distances (mode distance)
/// or 1 (connectivity). The default order, nearest first, is the layout of
/// sklearn.neighbors.kneighbors_graph (and what NearestNeighbors(metric="precomputed") expects of
/// a sparse input); by_column gives a canonical CSR. Throws spira::invalid_argument naming the row
/// when a neighbour index lies outside [0, index_rows).
[[nodiscard]] csr_matrix<float, std::int64_t> to_csr_graph(
    const knn_result& g, std::int64_t index_rows, knn_graph_mode mode,
    knn_graph_order order = knn_graph_order::nearest_first);

/// The symmetrised graph max(G, G^T) of a square k-NN graph (an edge kept when either end lists
/// the other; both directions carry the same value), as used for spectral clustering. G may list
/// a row's entries in any order (either order of to_csr_graph); a column listed twice in one row
/// is an error. The result is canonical (columns increasing).
/// (ewise_add of G and Gᵀ with max: spira/ewise.hpp.)
[[nodiscard]] csr_matrix<float, std::int64_t> symmetrize(csr_view<float, std::int64_t> g);

/// UMAP's fuzzy set union G + Gᵀ - G∘Gᵀ of a square graph of membership strengths in [0, 1]: an
/// edge where either end lists the other, a + b - ab where both do (a, b the two directions'
/// values), the one value where only one does. G as for symmetrize; the result is canonical.
/// (ewise_union of G and Gᵀ: spira/ewise.hpp.)
[[nodiscard]] csr_matrix<float, std::int64_t> fuzzy_union(csr_view<float, std::int64_t> g);

/// symmetrize and fuzzy_union of a graph in device memory, on res's GPU: the result in device
/// memory, the host's bit for bit (spira/cuda/graphblas.cuh's element-wise operations).
[[nodiscard]] csr_matrix<float, std::int64_t> symmetrize(const cuda_resources& res,
                                                         csr_view<float, std::int64_t> g);
[[nodiscard]] csr_matrix<float, std::int64_t> fuzzy_union(const cuda_resources& res,
                                                          csr_view<float, std::int64_t> g);

}  // namespace spira
