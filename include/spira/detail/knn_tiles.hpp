// spira internals: the backend-independent parts of the k-NN graph (argument checks, tiling under
// a memory budget, the running merge across index tiles, and the host side of the tiled and fused
// CUDA algorithms), shared by the built-in metrics (src/knn) and the user-semiring templates
// (spira/knn_semiring.hpp, spira/cuda/knn.cuh). Plain C++: it calls the library's entry points.
#pragma once

#include <spira/convert.hpp>
#include <spira/knn.hpp>
#include <spira/memory.hpp>
#include <spira/select_k.hpp>
#include <selection/keys.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

namespace spira::detail {

/// knn_params::memory_budget = 0 on the host: the library's one default (spira/memory.hpp), which
/// respects the cgroup limit and the memory already in use.
inline std::size_t knn_default_host_budget() { return default_host_memory_budget(); }

/// The k-NN graph returns float distances, and the tie rule holds on what it returns: a tile of
/// double distances is rounded to float before it is ranked (x -> double(float(x))), so values
/// that round to the same float rank by index.
template <class V>
void round_to_returned(dense_view<V> d)
{
  if constexpr (!std::is_same_v<V, float>) {
    for (std::int64_t i = 0; i < d.rows; ++i) {
      V* row = d.row(i);
      for (std::int64_t j = 0; j < d.cols; ++j) { row[j] = V(static_cast<float>(row[j])); }
    }
  }
}

/// Is (va, ia) better than (vb, ib)? The ranking key of select_k (selection::key_traits: smaller,
/// or larger, value first; -0 equals +0; NaN worse than any number in both directions), then the
/// smaller index. The one order of the k-NN graph and of merge_knn.
template <class V>
bool knn_better(V va, std::int64_t ia, V vb, std::int64_t ib, bool largest)
{
  using traits = selection::key_traits<V>;
  const auto ka = traits::to_key(va, largest);
  const auto kb = traits::to_key(vb, largest);
  return ka != kb ? ka < kb : ia < ib;
}

/// One row's candidate list, sorted best first by knn_better: entry j is (values[j],
/// indices[j] + offset), the offset turning tile-local indices into global ones.
template <class V>
struct knn_list {
  const V* values = nullptr;
  const std::int64_t* indices = nullptr;
  std::int64_t size = 0;
  std::int64_t offset = 0;
};

/// The running merge of the k-NN graph and of merge_knn: writes the best min(k, candidates) entries
/// of two sorted lists, best first by knn_better, to out_values/out_indices (which must not alias
/// either list; indices global) and returns how many it wrote. Entries whose global index is
/// `skip` are dropped (the query's own index under exclude_self; -1, which no entry has, for none).
template <class V>
std::int64_t knn_merge_sorted(knn_list<V> a, knn_list<V> b, std::int64_t k, bool largest,
                              std::int64_t skip, V* out_values, std::int64_t* out_indices)
{
  std::int64_t ia = 0;
  std::int64_t ib = 0;
  std::int64_t m = 0;
  for (; m < k; ++m) {
    while (ia < a.size && a.indices[ia] + a.offset == skip) { ++ia; }
    while (ib < b.size && b.indices[ib] + b.offset == skip) { ++ib; }
    if (ia == a.size && ib == b.size) { break; }
    const bool take_a = ib == b.size || (ia < a.size && knn_better(a.values[ia],
                                                                   a.indices[ia] + a.offset,
                                                                   b.values[ib],
                                                                   b.indices[ib] + b.offset,
                                                                   largest));
    if (take_a) {
      out_values[m] = a.values[ia];
      out_indices[m] = a.indices[ia++] + a.offset;
    } else {
      out_values[m] = b.values[ib];
      out_indices[m] = b.indices[ib++] + b.offset;
    }
  }
  return m;
}

/// The index queried against itself without exclude_self: each point comes before every other
/// index at the same distance (then the smaller index first), so a point is its own first
/// neighbour whenever no other index is strictly nearer, even among exact duplicates.
/// `run(p)` computes the graph with exclude_self (k' = min(k, n - 1) neighbours besides the point
/// itself); `self_distance()` gives d(i, i) for every row (host, in the engine's arithmetic,
/// spira::detail::self_distances); each point is merged in at its own distance.
/// One n x k result is held: when k' = k (k < n) the point is inserted into the rows of run's
/// result in place (its last entry drops out). Only k = n (every index a neighbour) needs a second,
/// wider result.
template <class Run, class SelfDistance>
knn_result knn_self_first(std::int64_t n, const knn_params& params, bool largest, Run&& run,
                          SelfDistance&& self_distance)
{
  const host_resources res{};
  const std::int64_t k = params.k;
  knn_params others_params = params;
  others_params.exclude_self = true;
  others_params.k = std::min(k, n - 1);
  std::optional<knn_result> others;
  if (others_params.k > 0) { others.emplace(run(others_params)); }
  const auto self = self_distance();
  const std::int64_t ko = others_params.k;
  if (ko == k) {
    for (std::int64_t i = 0; i < n; ++i) {
      const float ds = static_cast<float>(self[static_cast<std::size_t>(i)]);
      std::int64_t* ri = others->indices.view().row(i);
      float* rd = others->distances.view().row(i);
      // The point itself (index -1 for the tie rule: before every other at its distance).
      std::int64_t c = 0;
      while (c < k && !knn_better(ds, std::int64_t{-1}, rd[c], ri[c], largest)) { ++c; }
      if (c == k) { continue; }  // k others strictly nearer
      std::copy_backward(ri + c, ri + k - 1, ri + k);
      std::copy_backward(rd + c, rd + k - 1, rd + k);
      ri[c] = i;
      rd[c] = ds;
    }
    return std::move(*others);
  }
  knn_result out{dense_matrix<std::int64_t>(res, n, k), dense_matrix<float>(res, n, k)};
  for (std::int64_t i = 0; i < n; ++i) {
    const float ds = static_cast<float>(self[static_cast<std::size_t>(i)]);
    const std::int64_t* oi = ko > 0 ? others->indices.view().row(i) : nullptr;
    const float* od = ko > 0 ? others->distances.view().row(i) : nullptr;
    std::int64_t* ri = out.indices.view().row(i);
    float* rd = out.distances.view().row(i);
    std::int64_t j = 0;  // next of the others
    bool placed = false;
    for (std::int64_t c = 0; c < k; ++c) {
      // The point itself (index -1 for the tie rule: before every other at its distance).
      if (!placed && (j >= ko || knn_better(ds, std::int64_t{-1}, od[j], oi[j], largest))) {
        ri[c] = i;
        rd[c] = ds;
        placed = true;
      } else {
        ri[c] = oi[j];
        rd[c] = od[j++];
      }
    }
  }
  return out;
}

/// Checks the arguments shared by both backends; returns the query matrix.
template <class V, class I>
csr_view<V, I> check_knn_args(csr_view<V, I> index, std::optional<csr_view<V, I>> queries,
                              const knn_params& params)
{
  expects(!(params.exclude_self && queries.has_value()),
                  "knn_graph: exclude_self applies when the queries are the index itself; it was "
                  "set together with separate queries");
  const csr_view<V, I> q = queries.value_or(index);
  expects(index.space == memory_space::host && q.space == memory_space::host,
                  "knn_graph: the index and the queries must be in host memory (both backends "
                  "move tiles to where they compute)");
  expects<dimension_mismatch>(q.cols == index.cols, "knn_graph: the queries have ",
                                      q.cols, " columns but the index has ", index.cols);
  const std::int64_t available = index.rows - (params.exclude_self ? 1 : 0);
  expects(params.k >= 1 && params.k <= available, "knn_graph: k = ", params.k,
                  " must be in [1, ", available, "] (the index has ", index.rows, " rows",
                  params.exclude_self ? ", one excluded" : "", ")");
  expects(params.query_tile >= 0 && params.index_tile >= 0,
                  "knn_graph: negative tile override (query_tile = ", params.query_tile,
                  ", index_tile = ", params.index_tile, ")");
  return q;
}

struct knn_tiling {
  std::int64_t queries;  ///< query rows per tile
  std::int64_t index;    ///< index rows per tile
};

/// With a progress callback, query tiles are cut so that about this many reports come...
inline constexpr std::int64_t knn_progress_steps = 20;
/// ...but never below this many query rows per tile.
inline constexpr std::int64_t knn_progress_min_rows = 256;

/// Tiles such that the distance tile (queries x index values of `value_bytes`), its top-k and the
/// running top-k lists fit `budget`. Prefers whole index rows per query tile; splits the index when
/// k or the index is too large for that. Overrides in params win.
inline knn_tiling plan_knn_tiles(std::size_t budget, std::int64_t n_q, std::int64_t n_i, std::int64_t k,
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
      expects<out_of_memory>(lists < budget, "knn_graph: memory budget of ", budget,
                                     " bytes cannot hold the top-", k, " lists of one query (",
                                     lists, " bytes); raise knn_params::memory_budget");
      ti = std::clamp<std::int64_t>((budget - lists) / (tq * value_bytes), 1, n_i);
    }
    expects<out_of_memory>(tq >= 1, "knn_graph: memory budget of ", budget,
                                   " bytes is too small for one query against ", ti,
                                   " index rows; raise knn_params::memory_budget");
    if (params.progress) {
      // Progress is reported per query tile: about knn_progress_steps reports, tiles of at least
      // knn_progress_min_rows rows.
      const std::int64_t step = (n_q + knn_progress_steps - 1) / knn_progress_steps;
      tq = std::min(tq, std::max(step, knn_progress_min_rows));
    }
  }
  return {std::min(tq, std::max<std::int64_t>(n_q, 1)), ti};
}

/// The backend-independent part: loops over query and index tiles, asks `tile_top_k(q0, q1, i0,
/// i1, kt, values, indices)` for the sorted best kt of every query row of the tile (host arrays,
/// indices relative to i0) and merges them into running lists on the host.
template <class V, class I, class TileTopK>
knn_result run_knn_tiles(csr_view<V, I> index, csr_view<V, I> q, const knn_params& params,
                         bool largest, const knn_tiling& t, int threads, TileTopK&& tile_top_k)
{
  const host_resources res{.threads = threads};
  const std::int64_t n_q = q.rows;
  const std::int64_t n_i = index.rows;
  const std::int64_t k = params.k;
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
#if defined(_OPENMP)  // a translation unit built without OpenMP (nvcc, say) merges serially
#pragma omp parallel num_threads(res.num_threads())
#endif
      {
        std::vector<V> mv(static_cast<std::size_t>(k));
        std::vector<std::int64_t> mi(static_cast<std::size_t>(k));
#if defined(_OPENMP)
#pragma omp for schedule(static)
#endif
        for (std::int64_t r = 0; r < nq; ++r) {
          V* bv = best_v.view().row(r);
          std::int64_t* bi = best_i.view().row(r);
          const V* cv = tv.view().row(r);
          const std::int64_t* ci = tix.view().row(r);
          // With exclude_self the query's own index is dropped from the tile's candidates.
          const std::int64_t self = params.exclude_self ? q0 + r : -1;
          const std::int64_t merged =
            knn_merge_sorted<V>({bv, bi, have[r]}, {cv, ci, kt, i0}, k, largest, self, mv.data(),
                                mi.data());
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

/// The tiled algorithm on the host: `tile_distances(queries_tile, index_tile, out)` fills a host
/// distance tile, select_k takes its sorted top-kt and run_knn_tiles merges.
template <class V, class I, class TileDistances>
knn_result knn_tiled_host(const host_resources& res, csr_view<V, I> index, csr_view<V, I> q,
                          const knn_params& params, bool largest, TileDistances&& tile_distances)
{
  expects(params.algo != knn_algo::fused,
          "knn_graph: the fused algorithm runs on the CUDA backend only");
  const std::size_t budget =
    params.memory_budget > 0 ? params.memory_budget : knn_default_host_budget();
  const knn_tiling t = plan_knn_tiles(budget, q.rows, index.rows, params.k, sizeof(V), params);
  const select_order order = largest ? select_order::largest : select_order::smallest;
  std::vector<offset_t> qptr;
  std::vector<offset_t> iptr;
  return run_knn_tiles(index, q, params, largest, t, res.num_threads(),
                       [&](std::int64_t q0, std::int64_t q1, std::int64_t i0, std::int64_t i1,
                           std::int64_t kt, dense_view<V> tv, dense_view<std::int64_t> tix) {
                         dense_matrix<V> d(res, q1 - q0, i1 - i0);
                         tile_distances(row_slice(q, q0, q1, qptr), row_slice(index, i0, i1, iptr),
                                        d.view());
                         round_to_returned(d.view());
                         select_k<V, std::int64_t>(res, dense_view<const V>(d.view()), kt, order,
                                                   tv, tix, {.sorted = true});
                       });
}

/// The tiled algorithm on CUDA: each index tile is copied to the device once and reused by every
/// query tile; `tile_distances(queries_dev, index_dev, out_dev)` fills a device distance tile,
/// select_k takes its sorted top-kt on the GPU and run_knn_tiles merges on the host.
template <class V, class I, class TileDistances>
knn_result knn_tiled_cuda(const cuda_resources& res, csr_view<V, I> index, csr_view<V, I> q,
                          const knn_params& params, bool largest, std::size_t budget,
                          TileDistances&& tile_distances)
{
  // The index on the device counts against the budget: when it takes at most half, all its tiles
  // stay on the device (copied once) and the distance tiles get the rest; otherwise one index tile
  // at a time is copied when used (again for every query tile: slower, but within the budget).
  const std::size_t index_bytes =
    std::size_t(index.nnz) * (sizeof(V) + sizeof(I)) + std::size_t(index.rows + 1) * sizeof(offset_t);
  const bool resident = index_bytes <= budget / 2;
  const std::size_t tile_budget = resident ? budget - index_bytes : budget / 2;
  const knn_tiling t = plan_knn_tiles(tile_budget, q.rows, index.rows, params.k, sizeof(V), params);
  const select_order order = largest ? select_order::largest : select_order::smallest;
  std::vector<csr_matrix<V, I>> index_tiles;  // every tile (resident), or the one held
  std::int64_t held = -1;                     // the first row of the tile held (not resident)
  std::vector<offset_t> ptr;
  const auto slice_to_device = [&](std::int64_t i0) {
    return to_device(res, row_slice(index, i0, std::min(index.rows, i0 + t.index), ptr));
  };
  if (resident) {
    for (std::int64_t i0 = 0; i0 < index.rows; i0 += t.index) {
      index_tiles.push_back(slice_to_device(i0));
    }
  }
  const auto index_tile = [&](std::int64_t i0) -> csr_view<V, I> {
    if (resident) { return index_tiles[static_cast<std::size_t>(i0 / t.index)].view(); }
    if (held != i0) {
      index_tiles.clear();  // free the previous tile first
      index_tiles.push_back(slice_to_device(i0));
      held = i0;
    }
    return index_tiles.front().view();
  };
  csr_matrix<V, I> query_tile;
  std::int64_t query_tile_start = -1;
  return run_knn_tiles(index, q, params, largest, t, host_resources{}.num_threads(),
                       [&](std::int64_t q0, std::int64_t q1, std::int64_t i0, std::int64_t i1,
                           std::int64_t kt, dense_view<V> tv, dense_view<std::int64_t> tix) {
                         if (query_tile_start != q0) {
                           query_tile = to_device(res, row_slice(q, q0, q1, ptr));
                           query_tile_start = q0;
                         }
                         const std::int64_t nq = q1 - q0;
                         dense_matrix<V> d(res, nq, i1 - i0);
                         tile_distances(query_tile.view(), index_tile(i0), d.view());
                         if constexpr (!std::is_same_v<V, float>) {
                           round_to_float_in_place(d.data(), nq, i1 - i0, d.view().ld,
                                                   res);
                         }
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

/// Pairs the fused CUDA algorithm queues for direct evaluation per launch of `rows` query rows
/// before it splits the launch (pairs the accuracy guard did not trust; see knn_deferred).
constexpr std::int64_t knn_deferred_capacity(std::int64_t rows)
{
  return std::max<std::int64_t>(std::int64_t(1) << 16, 2 * rows);
}

/// Device bytes of the queue of deferred pairs for one launch of `rows` query rows: the pairs
/// (16 bytes), their values and columns once grouped, and two counters per row.
template <class V>
std::size_t knn_deferred_bytes(std::int64_t rows)
{
  return std::size_t(knn_deferred_capacity(rows)) * (16 + sizeof(V) + 8) +
         std::size_t(rows + 1) * 16;
}

/// Device bytes the fused CUDA algorithm needs: the operands, the CSC of the index, per-row
/// statistics, the queue of deferred pairs and the n_q x k outputs.
template <class V, class I>
std::size_t knn_fused_bytes(csr_view<V, I> queries, csr_view<V, I> index, std::int64_t k)
{
  const auto csr_bytes = [](csr_view<V, I> m) {
    return std::size_t(m.nnz) * (sizeof(V) + sizeof(I)) + std::size_t(m.rows + 1) * 8;
  };
  return 3 * csr_bytes(index) + 2 * csr_bytes(queries) +
         std::size_t(index.rows + queries.rows) * 64 + knn_deferred_bytes<V>(queries.rows) +
         std::size_t(queries.rows * k) * (sizeof(V) + 8);
}

/// The host side of the fused CUDA algorithm: copies the operands to the device,
/// `run(queries_dev, index_dev, values_dev, indices_dev)` fills the sorted n_q x k lists (and
/// reports params.progress), and the result comes back as float distances.
template <class V, class I, class Run>
knn_result knn_fused_cuda(const cuda_resources& res, csr_view<V, I> index,
                          std::optional<csr_view<V, I>> queries, const knn_params& params,
                          Run&& run)
{
  const csr_matrix<V, I> index_dev = to_device(res, index);
  std::optional<csr_matrix<V, I>> queries_dev;
  if (queries.has_value()) { queries_dev = to_device(res, *queries); }
  const csr_view<V, I> qv = queries_dev ? queries_dev->view() : index_dev.view();
  const std::int64_t n_q = qv.rows;
  dense_matrix<V> dv(res, n_q, params.k);
  dense_matrix<std::int64_t> di(res, n_q, params.k);
  run(qv, index_dev.view(), dv.view(), di.view());
  const host_resources host{};
  knn_result out{dense_matrix<std::int64_t>(host, n_q, params.k),
                 dense_matrix<float>(host, n_q, params.k)};
  const std::size_t n = static_cast<std::size_t>(n_q * params.k);
  copy(out.indices.data(), memory_space::host, di.data(), memory_space::device, n, res);
  if constexpr (std::is_same_v<V, float>) {
    copy(out.distances.data(), memory_space::host, dv.data(), memory_space::device, n, res);
  } else {
    std::vector<V> v(n);
    copy(v.data(), memory_space::host, dv.data(), memory_space::device, n, res);
    std::transform(v.begin(), v.end(), out.distances.data(),
                   [](V x) { return static_cast<float>(x); });
  }
  return out;
}

}  // namespace spira::detail
