// The k-NN graph on both backends: tiled pairwise distances, a row-wise select_k per tile, and a
// running merge of the best k across index tiles (on the host, O(n_q k) per tile). The backends
// differ only in where a tile's distances and top-k are computed (run_knn's tile_top_k).
#include <spira/convert.hpp>
#include <spira/knn.hpp>
#include <spira/select_k.hpp>

#if defined(SPIRA_HAS_CUDA)
#include "knn_cuda.hpp"
#endif

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace spira {

namespace {

std::size_t default_host_budget()
{
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) { return std::size_t{1} << 30; }
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 4;
}

/// Is (va, ia) better than (vb, ib)? Smaller (or larger) value first, then the smaller index;
/// NaN is worse than any number in both directions.
template <class V>
bool better(V va, std::int64_t ia, V vb, std::int64_t ib, bool largest)
{
  const bool na = std::isnan(va);
  const bool nb = std::isnan(vb);
  if (na != nb) { return nb; }
  if (!na && va != vb) { return largest ? va > vb : va < vb; }
  return ia < ib;
}

/// Checks the arguments shared by both backends; returns the query matrix.
template <class V, class I>
csr_view<V, I> check_knn_args(csr_view<V, I> index, std::optional<csr_view<V, I>> queries,
                              const knn_params& params)
{
  detail::expects(!(params.exclude_self && queries.has_value()),
                  "knn_graph: exclude_self applies when the queries are the index itself; it was "
                  "set together with separate queries");
  const csr_view<V, I> q = queries.value_or(index);
  detail::expects(index.space == memory_space::host && q.space == memory_space::host,
                  "knn_graph: the index and the queries must be in host memory (both backends "
                  "move tiles to where they compute)");
  detail::expects<dimension_mismatch>(q.cols == index.cols, "knn_graph: the queries have ",
                                      q.cols, " columns but the index has ", index.cols);
  const std::int64_t available = index.rows - (params.exclude_self ? 1 : 0);
  detail::expects(params.k >= 1 && params.k <= available, "knn_graph: k = ", params.k,
                  " must be in [1, ", available, "] (the index has ", index.rows, " rows",
                  params.exclude_self ? ", one excluded" : "", ")");
  detail::expects(params.query_tile >= 0 && params.index_tile >= 0,
                  "knn_graph: negative tile override (query_tile = ", params.query_tile,
                  ", index_tile = ", params.index_tile, ")");
  return q;
}

struct tiling {
  std::int64_t queries;  ///< query rows per tile
  std::int64_t index;    ///< index rows per tile
};

/// Tiles such that the distance tile (queries x index values of `value_bytes`), its top-k and the
/// running top-k lists fit `budget`. Prefers whole index rows per query tile; splits the index when
/// k or the index is too large for that. Overrides in params win.
tiling plan_tiles(std::size_t budget, std::int64_t n_q, std::int64_t n_i, std::int64_t k,
                  std::size_t value_bytes, const knn_params& params)
{
  const std::size_t pair = value_bytes + sizeof(std::int64_t);
  std::int64_t ti = params.index_tile > 0 ? std::min(params.index_tile, n_i) : n_i;
  std::int64_t tq = params.query_tile;
  if (tq == 0) {
    const std::size_t lists_per_query = 3 * k * pair;  // running, tile and merge lists
    tq = static_cast<std::int64_t>(budget / (ti * value_bytes + lists_per_query));
    if (tq < std::min<std::int64_t>(n_q, 256) && params.index_tile == 0) {
      // Whole index rows do not fit for enough queries: split the index instead. Keep at least
      // half the budget for distance tiles so that index tiles stay long.
      tq = std::min<std::int64_t>(n_q, 256);
      while (tq > 1 && tq * lists_per_query > budget / 2) { tq /= 2; }
      const std::size_t lists = tq * lists_per_query;
      detail::expects<out_of_memory>(lists < budget, "knn_graph: memory budget of ", budget,
                                     " bytes cannot hold the top-", k, " lists of one query (",
                                     lists, " bytes); raise knn_params::memory_budget");
      ti = std::clamp<std::int64_t>((budget - lists) / (tq * value_bytes), 1, n_i);
    }
    detail::expects<out_of_memory>(tq >= 1, "knn_graph: memory budget of ", budget,
                                   " bytes is too small for one query against ", ti,
                                   " index rows; raise knn_params::memory_budget");
  }
  return {std::min(tq, std::max<std::int64_t>(n_q, 1)), ti};
}

/// The backend-independent part: loops over query and index tiles, asks `tile_top_k(q0, q1, i0,
/// i1, kt, values, indices)` for the sorted best kt of every query row of the tile (host arrays,
/// indices relative to i0) and merges them into running lists on the host.
template <class V, class I, class TileTopK>
knn_result run_knn(csr_view<V, I> index, csr_view<V, I> q, const knn_params& params,
                   const tiling& t, int threads, TileTopK&& tile_top_k)
{
  const host_resources res{.threads = threads};
  const std::int64_t n_q = q.rows;
  const std::int64_t n_i = index.rows;
  const std::int64_t k = params.k;
  const bool largest = is_similarity(params.metric);
  knn_result out{dense_matrix<std::int64_t>(res, n_q, k), dense_matrix<float>(res, n_q, k)};
  dense_matrix<V> best_v(res, t.queries, k);
  dense_matrix<std::int64_t> best_i(res, t.queries, k);

  for (std::int64_t q0 = 0; q0 < n_q; q0 += t.queries) {
    const std::int64_t q1 = std::min(n_q, q0 + t.queries);
    const std::int64_t nq = q1 - q0;
    // Entries of each running list filled so far.
    std::vector<std::int64_t> have(static_cast<std::size_t>(nq), 0);
    for (std::int64_t i0 = 0; i0 < n_i; i0 += t.index) {
      const std::int64_t i1 = std::min(n_i, i0 + t.index);
      // With exclude_self one extra candidate per tile covers the query's own index, which the
      // merge below skips (only that index: exact duplicates stay).
      const std::int64_t kt = std::min(k + (params.exclude_self ? 1 : 0), i1 - i0);
      dense_matrix<V> tv(res, nq, kt);
      dense_matrix<std::int64_t> tix(res, nq, kt);
      tile_top_k(q0, q1, i0, i1, kt, tv.view(), tix.view());
      // Merge the tile's sorted top-kt into the running sorted lists.
#pragma omp parallel num_threads(res.num_threads())
      {
        std::vector<V> mv(static_cast<std::size_t>(k));
        std::vector<std::int64_t> mi(static_cast<std::size_t>(k));
#pragma omp for schedule(static)
        for (std::int64_t r = 0; r < nq; ++r) {
          V* bv = best_v.view().row(r);
          std::int64_t* bi = best_i.view().row(r);
          const V* cv = tv.view().row(r);
          const std::int64_t* ci = tix.view().row(r);
          const std::int64_t self = params.exclude_self ? q0 + r : -1;
          // When the query's own index lies in this tile, the tile's kt candidates are either its
          // top-kt with self skipped, or all ni < k + 1 entries including self.
          const bool self_here = self >= i0 && self < i1;
          const std::int64_t merged = std::min(k, have[r] + kt - (self_here ? 1 : 0));
          std::int64_t a = 0;
          std::int64_t b = 0;
          for (std::int64_t m = 0; m < merged; ++m) {
            if (b < kt && ci[b] + i0 == self) { ++b; }
            const bool take_a =
              b >= kt || (a < have[r] && better(bv[a], bi[a], cv[b], ci[b] + i0, largest));
            if (take_a) {
              mv[m] = bv[a];
              mi[m] = bi[a++];
            } else {
              mv[m] = cv[b];
              mi[m] = ci[b++] + i0;
            }
          }
          std::copy_n(mv.begin(), merged, bv);
          std::copy_n(mi.begin(), merged, bi);
          have[r] = merged;
        }
      }
    }
    if (params.progress) { params.progress(q1, n_q); }
    for (std::int64_t r = 0; r < nq; ++r) {
      std::copy_n(best_i.view().row(r), k, out.indices.view().row(q0 + r));
      std::transform(best_v.view().row(r), best_v.view().row(r) + k,
                     out.distances.view().row(q0 + r), [](V x) { return static_cast<float>(x); });
    }
  }
  return out;
}

}  // namespace

template <class V, class I>
knn_result knn_graph(const host_resources& res, csr_view<V, I> index,
                     std::optional<csr_view<V, I>> queries, const knn_params& params)
{
  const csr_view<V, I> q = check_knn_args(index, queries, params);
  detail::expects(params.algo != knn_algo::fused,
                  "knn_graph: the fused algorithm runs on the CUDA backend only");
  const std::size_t budget = params.memory_budget > 0 ? params.memory_budget : default_host_budget();
  const tiling t = plan_tiles(budget, q.rows, index.rows, params.k, sizeof(V), params);
  const distance_params dp{.metric = params.metric, .p = params.p};
  const select_order order =
    is_similarity(params.metric) ? select_order::largest : select_order::smallest;
  std::vector<offset_t> qptr;
  std::vector<offset_t> iptr;
  return run_knn(index, q, params, t, res.num_threads(),
                 [&](std::int64_t q0, std::int64_t q1, std::int64_t i0, std::int64_t i1,
                     std::int64_t kt, dense_view<V> tv, dense_view<std::int64_t> tix) {
                   dense_matrix<V> d(res, q1 - q0, i1 - i0);
                   pairwise_distance(res, row_slice(q, q0, q1, qptr),
                                     row_slice(index, i0, i1, iptr), d.view(), dp);
                   select_k<V, std::int64_t>(res, dense_view<const V>(d.view()), kt, order, tv,
                                             tix, {.sorted = true});
                 });
}

template <class V, class I>
knn_result knn_graph(const cuda_resources& res, csr_view<V, I> index,
                     std::optional<csr_view<V, I>> queries, const knn_params& params)
{
  const csr_view<V, I> q = check_knn_args(index, queries, params);
  // Half of the free device memory by default: the index tiles (O(nnz)) and the workspaces of the
  // distance engine and of select_k live beside the tiles.
  const std::size_t budget = params.memory_budget > 0 ? params.memory_budget
                                                      : cuda_free_memory(res) / 2;
#if defined(SPIRA_HAS_CUDA)
  if (detail::knn_use_fused(q, index, params, budget)) {
    // The top-k fused into the distance kernel: no tiles, no merge.
    const csr_matrix<V, I> index_dev = to_device(res, index);
    std::optional<csr_matrix<V, I>> queries_dev;
    if (queries.has_value()) { queries_dev = to_device(res, q); }
    const csr_view<V, I> qv = queries_dev ? queries_dev->view() : index_dev.view();
    dense_matrix<V> dv(res, q.rows, params.k);
    dense_matrix<std::int64_t> di(res, q.rows, params.k);
    detail::knn_fused_metric(res, qv, index_dev.view(), params, dv.view(), di.view());
    const host_resources host{};
    knn_result out{dense_matrix<std::int64_t>(host, q.rows, params.k),
                   dense_matrix<float>(host, q.rows, params.k)};
    const std::size_t n = static_cast<std::size_t>(q.rows * params.k);
    copy(out.indices.data(), memory_space::host, di.data(), memory_space::device, n, res);
    if constexpr (std::is_same_v<V, float>) {
      copy(out.distances.data(), memory_space::host, dv.data(), memory_space::device, n, res);
    } else {
      std::vector<V> v(n);
      copy(v.data(), memory_space::host, dv.data(), memory_space::device, n, res);
      std::transform(v.begin(), v.end(), out.distances.data(),
                     [](V x) { return static_cast<float>(x); });
    }
    if (params.progress) { params.progress(q.rows, q.rows); }
    return out;
  }
#endif
  const tiling t = plan_tiles(budget, q.rows, index.rows, params.k, sizeof(V), params);
  const distance_params dp{.metric = params.metric, .p = params.p, .strategy = params.strategy};
  const select_order order =
    is_similarity(params.metric) ? select_order::largest : select_order::smallest;
  // Each index tile is copied to the device once and reused by every query tile.
  std::vector<csr_matrix<V, I>> index_tiles;
  std::vector<offset_t> ptr;
  for (std::int64_t i0 = 0; i0 < index.rows; i0 += t.index) {
    index_tiles.push_back(to_device(res, row_slice(index, i0, std::min(index.rows, i0 + t.index), ptr)));
  }
  csr_matrix<V, I> query_tile;
  std::int64_t query_tile_start = -1;
  return run_knn(index, q, params, t, host_resources{}.num_threads(),
                 [&](std::int64_t q0, std::int64_t q1, std::int64_t i0, std::int64_t i1,
                     std::int64_t kt, dense_view<V> tv, dense_view<std::int64_t> tix) {
                   if (query_tile_start != q0) {
                     query_tile = to_device(res, row_slice(q, q0, q1, ptr));
                     query_tile_start = q0;
                   }
                   const std::int64_t nq = q1 - q0;
                   dense_matrix<V> d(res, nq, i1 - i0);
                   pairwise_distance(res, query_tile.view(), index_tiles[i0 / t.index].view(),
                                     d.view(), dp);
                   dense_matrix<V> dv(res, nq, kt);
                   dense_matrix<std::int64_t> di(res, nq, kt);
                   select_k<V, std::int64_t>(res, dense_view<const V>(d.view()), kt, order,
                                             dv.view(), di.view(), {.sorted = true});
                   copy(tv.data, memory_space::host, dv.data(), memory_space::device,
                        static_cast<std::size_t>(nq * kt), res);
                   copy(tix.data, memory_space::host, di.data(), memory_space::device,
                        static_cast<std::size_t>(nq * kt), res);
                 });
}

csr_matrix<float, std::int64_t> to_csr_graph(const knn_result& g, std::int64_t index_rows,
                                             knn_graph_mode mode)
{
  const host_resources res{};
  const std::int64_t n = g.indices.rows();
  const std::int64_t k = g.indices.cols();
  csr_matrix<float, std::int64_t> m(res, n, index_rows, n * k);
  std::vector<std::pair<std::int64_t, float>> row(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i <= n; ++i) { m.row_ptr()[i] = i * k; }
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t c = g.indices.view()(i, j);
      detail::expects(c >= 0 && c < index_rows, "to_csr_graph: neighbour index ", c, " of row ", i,
                      " is outside [0, ", index_rows, ")");
      row[j] = {c, mode == knn_graph_mode::distance ? g.distances.view()(i, j) : 1.0f};
    }
    std::sort(row.begin(), row.end());
    for (std::int64_t j = 0; j < k; ++j) {
      m.col_idx()[i * k + j] = row[j].first;
      m.values()[i * k + j] = row[j].second;
    }
  }
  return m;
}

csr_matrix<float, std::int64_t> symmetrize(csr_view<float, std::int64_t> g)
{
  const host_resources res{};
  detail::expects(g.rows == g.cols, "symmetrize: the graph must be square, got ", g.rows, " x ",
                  g.cols);
  validate(res, g, csr_check::canonical, "symmetrize: graph");
  const auto t = transpose(res, g);
  // Union of the sparsity patterns of G and G^T, max of the values where both are present.
  std::vector<offset_t> ptr(static_cast<std::size_t>(g.rows) + 1, 0);
  std::vector<std::int64_t> cols;
  std::vector<float> vals;
  cols.reserve(static_cast<std::size_t>(2 * g.nnz));
  vals.reserve(static_cast<std::size_t>(2 * g.nnz));
  for (std::int64_t i = 0; i < g.rows; ++i) {
    offset_t a = g.row_ptr[i];
    offset_t b = t.row_ptr()[i];
    const offset_t ae = g.row_ptr[i + 1];
    const offset_t be = t.row_ptr()[i + 1];
    while (a < ae || b < be) {
      const std::int64_t ca = a < ae ? g.col_idx[a] : std::numeric_limits<std::int64_t>::max();
      const std::int64_t cb = b < be ? t.col_idx()[b] : std::numeric_limits<std::int64_t>::max();
      if (ca == cb) {
        cols.push_back(ca);
        vals.push_back(std::max(g.values[a++], t.values()[b++]));
      } else if (ca < cb) {
        cols.push_back(ca);
        vals.push_back(g.values[a++]);
      } else {
        cols.push_back(cb);
        vals.push_back(t.values()[b++]);
      }
    }
    ptr[i + 1] = static_cast<offset_t>(cols.size());
  }
  return make_csr<float, std::int64_t>(res, g.rows, g.cols, ptr, cols, vals, csr_check::canonical);
}

template knn_result knn_graph(const host_resources&, csr_view<float, std::int32_t>,
                              std::optional<csr_view<float, std::int32_t>>, const knn_params&);
template knn_result knn_graph(const host_resources&, csr_view<float, std::int64_t>,
                              std::optional<csr_view<float, std::int64_t>>, const knn_params&);
template knn_result knn_graph(const host_resources&, csr_view<double, std::int32_t>,
                              std::optional<csr_view<double, std::int32_t>>, const knn_params&);
template knn_result knn_graph(const host_resources&, csr_view<double, std::int64_t>,
                              std::optional<csr_view<double, std::int64_t>>, const knn_params&);

template knn_result knn_graph(const cuda_resources&, csr_view<float, std::int32_t>,
                              std::optional<csr_view<float, std::int32_t>>, const knn_params&);
template knn_result knn_graph(const cuda_resources&, csr_view<float, std::int64_t>,
                              std::optional<csr_view<float, std::int64_t>>, const knn_params&);
template knn_result knn_graph(const cuda_resources&, csr_view<double, std::int32_t>,
                              std::optional<csr_view<double, std::int32_t>>, const knn_params&);
template knn_result knn_graph(const cuda_resources&, csr_view<double, std::int64_t>,
                              std::optional<csr_view<double, std::int64_t>>, const knn_params&);

}  // namespace spira
