// spira internals: the one k-NN driver of both backends. It checks the arguments once, then either
// runs the fused CUDA algorithm or loops over query and index tiles (distance tile -> row-wise
// select_k -> running merge), and puts each point first when the index is queried against itself.
// The backend's pieces come from an "ops" object: knn_host_ops below, knn_cuda_ops in
// spira/detail/knn_cuda_ops.hpp. Used by the built-in metrics (src/knn) and the user-semiring
// templates (spira/knn_semiring.hpp, spira/cuda/knn.cuh). Plain C++.
#pragma once

#include <spira/config.hpp>
#include <spira/convert.hpp>
#include <spira/detail/knn_policy.hpp>
#include <spira/knn.hpp>
#include <spira/memory.hpp>
#include <spira/select_k.hpp>
#include <spira/selection/keys.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

namespace spira::detail {

// ---- the order and the merge (one definition, host and device) ---------------------------------

/// knn_better on ranking keys already taken (selection::key_traits::to_key): the smaller key, then
/// the smaller index.
template <class Key>
SPIRA_HD bool knn_key_better(Key ka, std::int64_t ia, Key kb, std::int64_t ib)
{
  return ka != kb ? ka < kb : ia < ib;
}

/// Is (va, ia) better than (vb, ib)? The ranking key of select_k (selection::key_traits: smaller,
/// or larger, value first; -0 equals +0; NaN worse than any number in both directions), then the
/// smaller index. The one order of the k-NN graph and of merge_knn.
template <class ValueT>
SPIRA_HD bool knn_better(ValueT va, std::int64_t ia, ValueT vb, std::int64_t ib, bool largest)
{
  using traits = selection::key_traits<ValueT>;
  return knn_key_better(traits::to_key(va, largest), ia, traits::to_key(vb, largest), ib);
}

/// One row's candidate list, sorted best first by knn_better: entry j is (values[j],
/// indices[j] + offset), the offset turning tile-local indices into global ones.
template <class ValueT>
struct knn_list {
  const ValueT* values = nullptr;
  const std::int64_t* indices = nullptr;
  std::int64_t size = 0;
  std::int64_t offset = 0;
};

/// The running merge of the k-NN graph and of merge_knn: writes the best min(k, candidates) entries
/// of two sorted lists, best first by knn_better, to out_values/out_indices (which must not alias
/// either list; indices global) and returns how many it wrote. Entries whose global index is
/// `skip` are dropped (the query's own index when it is not a candidate; -1, which no entry has,
/// for none).
template <class ValueT>
SPIRA_HD std::int64_t knn_merge_sorted(knn_list<ValueT> a, knn_list<ValueT> b, std::int64_t k,
                                       bool largest, std::int64_t skip, ValueT* out_values,
                                       std::int64_t* out_indices)
{
  std::int64_t ia = 0;
  std::int64_t ib = 0;
  std::int64_t m = 0;
  for (; m < k; ++m) {
    while (ia < a.size && a.indices[ia] + a.offset == skip) {
      ++ia;
    }
    while (ib < b.size && b.indices[ib] + b.offset == skip) {
      ++ib;
    }
    if (ia == a.size && ib == b.size) {
      break;
    }
    const bool take_a =
        ib == b.size ||
        (ia < a.size && knn_better(a.values[ia], a.indices[ia] + a.offset, b.values[ib],
                                   b.indices[ib] + b.offset, largest));
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

/// Row i of the graph of an index queried against itself, each point first: `others` (ko entries,
/// the point's own index excluded, sorted) with the point itself inserted at its own distance
/// `self` - before every other index at that distance (index -1 for the tie rule) - into the k
/// entries of `out_values`/`out_indices` (k is ko or ko + 1). May run in place (out == others,
/// k == ko): entries are written from the last one down.
template <class ValueT>
SPIRA_HD void knn_insert_self_row(const float* others_values, const std::int64_t* others_indices,
                                  std::int64_t ko, std::int64_t i, float self, std::int64_t k,
                                  bool largest, float* out_values, std::int64_t* out_indices)
{
  std::int64_t c = 0;  // the point's position: after every entry strictly better
  while (c < ko &&
         !knn_better(self, std::int64_t{-1}, others_values[c], others_indices[c], largest)) {
    ++c;
  }
  for (std::int64_t j = k - 1; j >= 0; --j) {
    if (j > c) {
      out_values[j] = others_values[j - 1];
      out_indices[j] = others_indices[j - 1];
    } else if (j == c) {
      out_values[j] = self;
      out_indices[j] = i;
    } else {
      out_values[j] = others_values[j];
      out_indices[j] = others_indices[j];
    }
  }
}

// ---- arguments
// ------------------------------------------------------------------------------------

/// Checks the arguments shared by both backends (`device_ok`: the CUDA backend, which also takes
/// operands in device memory); returns the query matrix. Values are checked by the caller, once.
template <class ValueT, class IndexT>
csr_view<ValueT, IndexT> check_knn_args(csr_view<ValueT, IndexT> index,
                                        std::optional<csr_view<ValueT, IndexT>> queries,
                                        const knn_params& params, bool device_ok = false)
{
  expects(!(params.exclude_self && queries.has_value()),
          "knn_graph: exclude_self applies when the queries are the index itself; it was set "
          "together with separate queries");
  const csr_view<ValueT, IndexT> q = queries.value_or(index);
  expects(device_ok || (index.space == memory_space::host && q.space == memory_space::host),
          "knn_graph: the index and the queries must be in host memory for the host backend");
  expects(index.space == q.space, "knn_graph: the index is in ", to_string(index.space),
          " memory but the queries are in ", to_string(q.space),
          " memory (both must be in the same space)");
  expects<dimension_mismatch>(q.cols == index.cols, "knn_graph: the queries have ", q.cols,
                              " columns but the index has ", index.cols);
  const std::int64_t available = index.rows - (params.exclude_self ? 1 : 0);
  expects(params.k >= 1 && params.k <= available, "knn_graph: k = ", params.k, " must be in [1, ",
          available, "] (the index has ", index.rows, " rows",
          params.exclude_self ? ", one excluded" : "", ")");
  expects(params.query_tile >= 0 && params.index_tile >= 0,
          "knn_graph: negative tile override (query_tile = ", params.query_tile,
          ", index_tile = ", params.index_tile, ")");
  return q;
}

// ---- the driver
// -------------------------------------------------------------------------------------

/// The k-NN graph of ops' queries against ops' index (`self_query`: the queries are the index).
/// Without exclude_self a self query runs as one with the point's own index left out of the
/// candidates (k' = min(k, n - 1) others); the distance of each point to itself comes from the
/// same computation (the diagonal of the distance tiles, or the fused kernel's pair (i, i)) and
/// the point is inserted before every other index at its distance. No second pass over the data.
///
/// Ops (knn_host_ops, knn_cuda_ops) provides, in its memory space:
///   value_type, lists (n x k values and int64 indices), self_values (n values)
///   query_rows(), index_rows()
///   make_lists(rows, k), make_self_values(n), make_result(rows, k)  (a knn_result)
///   fused(k, skip_self, self_values*, result&) -> bool   (false: not applicable; tiles then;
///                                                      the host's: rows without tiles)
///   plan(k) -> knn_tiling
///   begin_query_tile(q0, q1), reset(lists&, rows)                    (padding: index -1)
///   tile_top_k(q0, q1, i0, i1, kt, self_values*)   distances, diagonal, sorted top-kt per row
///   merge(lists&, rows, k, kt, i0, skip_first)     running lists <- the tile's top-kt
///   store(lists&, q0, q1, result&)                 float distances into the result rows
///   insert_self(result&&, self_values, k, largest) -> knn_result
template <class Ops>
knn_result knn_drive(Ops& ops, const knn_params& params, bool largest, bool self_query)
{
  const std::int64_t n_q = ops.query_rows();
  const std::int64_t n_i = ops.index_rows();
  const bool first = self_query && !params.exclude_self;
  const std::int64_t k = params.k;
  const std::int64_t k_run = first ? std::min(k, n_i - 1) : k;
  auto self_values = ops.make_self_values(first ? n_q : 0);
  auto* self_out = first ? self_values.data() : nullptr;
  knn_result result = ops.make_result(n_q, k_run);
  if (n_q > 0 && (k_run == 0 || !ops.fused(k_run, self_query, self_out, result))) {
    const knn_tiling t = ops.plan(k_run);
    auto lists = ops.make_lists(t.queries, k_run);
    for (std::int64_t q0 = 0; q0 < n_q; q0 += t.queries) {
      const std::int64_t q1 = std::min(n_q, q0 + t.queries);
      ops.begin_query_tile(q0, q1);
      ops.reset(lists, q1 - q0);
      for (std::int64_t i0 = 0; i0 < n_i; i0 += t.index) {
        const std::int64_t i1 = std::min(n_i, i0 + t.index);
        // A self query keeps one more candidate per tile: the point's own index, which the merge
        // drops (only that index: exact duplicates stay).
        const std::int64_t kt = std::min(k_run + (self_query ? 1 : 0), i1 - i0);
        ops.tile_top_k(q0, q1, i0, i1, kt, self_out);
        if (k_run > 0) {
          ops.merge(lists, q1 - q0, k_run, kt, i0, self_query ? q0 : -1);
        }
      }
      ops.store(lists, q0, q1, result);
      if (params.progress) {
        params.progress(q1, n_q);
      }
    }
  }
  if (!first) {
    return result;
  }
  return ops.insert_self(std::move(result), self_values, k, largest);
}

// ---- the host backend ---------------------------------------------------------------------------

/// The k-NN graph returns float distances, and the tie rule holds on what it returns: a double
/// distance is rounded to float before it is ranked (x -> double(float(x))), so values that round
/// to the same float rank by index.
template <class ValueT>
ValueT as_returned(ValueT x)
{
  return ValueT(static_cast<float>(x));
}

/// as_returned over a distance tile.
template <class ValueT>
void round_to_returned(dense_view<ValueT> d)
{
  if constexpr (!std::is_same_v<ValueT, float>) {
    for (std::int64_t i = 0; i < d.rows; ++i) {
      ValueT* row = d.row(i);
      for (std::int64_t j = 0; j < d.cols; ++j) {
        row[j] = as_returned(row[j]);
      }
    }
  }
}

/// Running lists of `rows` queries, k entries each, in the backend's memory.
template <class ValueT>
struct knn_lists {
  dense_matrix<ValueT> values;
  dense_matrix<std::int64_t> indices;
};

/// knn_host_ops's host path without tiles, for callers that have none.
struct no_host_rows {
  template <class... Args>
  bool operator()(Args&&...) const
  {
    return false;
  }
};

/// knn_drive's pieces on the host. `prepare_index(index_tile)` returns a std::unique_ptr to what
/// the host engine computes of an index tile alone (its norms, prepared values, CSC: e.g.
/// host_pairwise_prepared), which has host_bytes(); `tile_distances(queries_tile, index_tile, out,
/// prepared)` fills a host distance tile (the host engine, or a user semiring's), with `prepared`
/// the index tile's prepared state or nullptr, and the same values either way.
///
/// With several query tiles, each index tile is prepared once, by its first distance tile, and
/// kept (with its row pointers) for the distance tiles of the other query tiles, while the tiles
/// kept take at most budget / knn_policy::prepared_index_divisor bytes; the tiles past that are
/// not prepared (each distance tile computes what it needs, as with one query tile).
///
/// `by_rows(k, largest, skip_self, self_values, result, budget)`, tried first unless params ask for
/// tiles (algo tiled, a tile size given): fills the whole result row by row without distance tiles
/// (knn_host_disjoint) and returns true, or returns false having done nothing.
template <class ValueT, class IndexT, class TileDistances, class PrepareIndex,
          class ByRows = no_host_rows>
class knn_host_ops {
 public:
  using value_type = ValueT;
  /// What prepare_index returns: a std::unique_ptr to the prepared state of an index tile.
  using prepared_ptr = std::invoke_result_t<PrepareIndex&, csr_view<ValueT, IndexT>>;

  knn_host_ops(const host_resources& res, csr_view<ValueT, IndexT> index,
               csr_view<ValueT, IndexT> queries, const knn_params& params, bool largest,
               TileDistances tile_distances, PrepareIndex prepare_index, ByRows by_rows = {})
      : res_(res),
        index_(index),
        queries_(queries),
        params_(params),
        largest_(largest),
        tile_distances_(std::move(tile_distances)),
        prepare_index_(std::move(prepare_index)),
        by_rows_(std::move(by_rows))
  {
    expects(params.algo != knn_algo::fused,
            "knn_graph: the fused algorithm runs on the CUDA backend only");
  }

  std::int64_t query_rows() const { return queries_.rows; }
  std::int64_t index_rows() const { return index_.rows; }

  knn_lists<ValueT> make_lists(std::int64_t rows, std::int64_t k) const
  {
    return {dense_matrix<ValueT>(res_, rows, k), dense_matrix<std::int64_t>(res_, rows, k)};
  }
  std::vector<ValueT> make_self_values(std::int64_t n) const
  {
    return std::vector<ValueT>(std::size_t(n));
  }
  knn_result make_result(std::int64_t rows, std::int64_t k) const
  {
    return {dense_matrix<std::int64_t>(res_, rows, k), dense_matrix<float>(res_, rows, k)};
  }
  bool fused(std::int64_t k, bool skip_self, ValueT* self_values, knn_result& result)
  {
    if (params_.algo == knn_algo::tiled || params_.query_tile > 0 || params_.index_tile > 0) {
      return false;
    }
    return by_rows_(k, largest_, skip_self, self_values, result, knn_host_budget(params_));
  }
  knn_tiling plan(std::int64_t k)
  {
    budget_ = knn_host_budget(params_);
    tiling_ = plan_knn_tiles(host_tile_budget(budget_, index_.rows, k, sizeof(ValueT)),
                             queries_.rows, index_.rows, k, sizeof(ValueT), params_, budget_);
    if (tiling_.queries < queries_.rows) {
      // Several query tiles use each index tile: prepare each once (prepared_tile).
      const std::size_t tiles = std::size_t((index_.rows + tiling_.index - 1) / tiling_.index);
      prepared_.resize(tiles);
      prepared_tiles_.resize(tiles);
      prepared_counted_.assign(tiles, 0);
    }
    return tiling_;
  }
  void begin_query_tile(std::int64_t, std::int64_t) {}
  void reset(knn_lists<ValueT>& lists, std::int64_t rows) const
  {
    std::fill_n(lists.indices.data(), rows * lists.indices.cols(), std::int64_t{-1});
  }

  void tile_top_k(std::int64_t q0, std::int64_t q1, std::int64_t i0, std::int64_t i1,
                  std::int64_t kt, ValueT* self_values)
  {
    // One distance tile's memory for the whole call (at most knn_policy::host_tile_bytes): a new
    // one per tile would be new pages each time, which the kernel zeroes on first touch.
    const auto need = static_cast<std::size_t>((q1 - q0) * (i1 - i0));
    if (tile_d_.size() < need) {
      tile_d_ = buffer<ValueT>(res_, need, "the distance tile");
    }
    const dense_view<ValueT> dv{q1 - q0, i1 - i0, i1 - i0, tile_d_.data()};
    const auto t = static_cast<std::size_t>(i0 / tiling_.index);
    auto* prepared = prepared_tile(t, i0, i1);
    const csr_view<ValueT, IndexT> it =
        prepared != nullptr ? prepared_tiles_[t].view : row_slice(index_, i0, i1, iptr_);
    tile_distances_(row_slice(queries_, q0, q1, qptr_), it, dv, prepared);
    count_prepared(t);
    round_to_returned(dv);
    if (self_values != nullptr) {
      for (std::int64_t g = std::max(q0, i0); g < std::min(q1, i1); ++g) {
        self_values[g] = dv(g - q0, g - i0);
      }
    }
    tile_v_ = dense_matrix<ValueT>(res_, q1 - q0, kt);
    tile_i_ = dense_matrix<std::int64_t>(res_, q1 - q0, kt);
    if (kt > 0) {
      select_k<ValueT, std::int64_t>(res_, dense_view<const ValueT>(dv), kt,
                                     largest_ ? select_order::largest : select_order::smallest,
                                     tile_v_.view(), tile_i_.view(), {.sorted = true});
    }
  }

  void merge(knn_lists<ValueT>& lists, std::int64_t rows, std::int64_t k, std::int64_t kt,
             std::int64_t i0, std::int64_t skip_first)
  {
    const int threads = res_.num_threads();
    SPIRA_OMP(omp parallel num_threads(threads))
    {
      std::vector<ValueT> mv(static_cast<std::size_t>(k));
      std::vector<std::int64_t> mi(static_cast<std::size_t>(k));
      SPIRA_OMP(omp for schedule(static))
      for (std::int64_t r = 0; r < rows; ++r) {
        ValueT* bv = lists.values.view().row(r);
        std::int64_t* bi = lists.indices.view().row(r);
        const std::int64_t have = std::find(bi, bi + k, std::int64_t{-1}) - bi;
        const std::int64_t merged = knn_merge_sorted<ValueT>(
            {bv, bi, have}, {tile_v_.view().row(r), tile_i_.view().row(r), kt, i0}, k, largest_,
            skip_first >= 0 ? skip_first + r : -1, mv.data(), mi.data());
        std::copy_n(mv.begin(), merged, bv);
        std::copy_n(mi.begin(), merged, bi);
        std::fill(bi + merged, bi + k, std::int64_t{-1});
      }
    }
  }

  void store(const knn_lists<ValueT>& lists, std::int64_t q0, std::int64_t q1,
             knn_result& out) const
  {
    const std::int64_t k = out.indices.cols();
    for (std::int64_t r = 0; r < q1 - q0; ++r) {
      std::copy_n(lists.indices.view().row(r), k, out.indices.view().row(q0 + r));
      std::transform(lists.values.view().row(r), lists.values.view().row(r) + k,
                     out.distances.view().row(q0 + r),
                     [](ValueT x) { return static_cast<float>(x); });
    }
  }

  knn_result insert_self(knn_result others, const std::vector<ValueT>& self, std::int64_t k,
                         bool largest) const
  {
    const std::int64_t n = others.indices.rows();
    const std::int64_t ko = others.indices.cols();
    knn_result out = ko == k ? std::move(others) : make_result(n, k);
    const knn_result& in = ko == k ? out : others;
    for (std::int64_t i = 0; i < n; ++i) {
      knn_insert_self_row<ValueT>(in.distances.view().row(i), in.indices.view().row(i), ko, i,
                                  static_cast<float>(self[static_cast<std::size_t>(i)]), k, largest,
                                  out.distances.view().row(i), out.indices.view().row(i));
    }
    return out;
  }

 private:
  /// An index tile kept prepared: its rows (a view with its own row pointers, so that the view
  /// passed with the prepared state is the same for every query tile).
  struct kept_tile {
    std::vector<offset_t> ptr;
    csr_view<ValueT, IndexT> view{};
  };

  /// The prepared state of index tile t (rows [i0, i1)), made now if it has none and the tiles
  /// kept are within their share of the budget; nullptr when tiles are not prepared.
  typename prepared_ptr::element_type* prepared_tile(std::size_t t, std::int64_t i0,
                                                     std::int64_t i1)
  {
    if (t >= prepared_.size()) {
      return nullptr;
    }
    if (!prepared_[t] && prepare_more_) {
      kept_tile& k = prepared_tiles_[t];
      k.view = row_slice(index_, i0, i1, k.ptr);
      prepared_[t] = prepare_index_(k.view);
    }
    return prepared_[t].get();
  }

  /// Counts the bytes of tile t's prepared state (and its row pointers) after a distance tile
  /// (they grow when an engine builds its part on first use). Past budget /
  /// prepared_index_divisor the state is released and no further tile is prepared.
  void count_prepared(std::size_t t)
  {
    if (t >= prepared_.size() || !prepared_[t]) {
      return;
    }
    const std::size_t now =
        prepared_[t]->host_bytes() + prepared_tiles_[t].ptr.size() * sizeof(offset_t);
    prepared_bytes_ = prepared_bytes_ - prepared_counted_[t] + now;
    prepared_counted_[t] = now;
    if (prepared_bytes_ > budget_ / knn_policy::prepared_index_divisor) {
      prepared_bytes_ -= now;
      prepared_counted_[t] = 0;
      prepared_[t].reset();
      prepared_tiles_[t] = kept_tile{};
      prepare_more_ = false;
    }
  }

  host_resources res_;
  csr_view<ValueT, IndexT> index_;
  csr_view<ValueT, IndexT> queries_;
  const knn_params& params_;
  bool largest_;
  TileDistances tile_distances_;
  PrepareIndex prepare_index_;
  ByRows by_rows_;
  std::size_t budget_ = 0;
  knn_tiling tiling_{1, 1};
  std::vector<prepared_ptr> prepared_;         // per index tile, when several query tiles use it
  std::vector<kept_tile> prepared_tiles_;      // the rows of each tile prepared
  std::vector<std::size_t> prepared_counted_;  // the bytes of each counted in prepared_bytes_
  std::size_t prepared_bytes_ = 0;
  bool prepare_more_ = true;
  std::vector<offset_t> qptr_;
  std::vector<offset_t> iptr_;
  buffer<ValueT> tile_d_;
  dense_matrix<ValueT> tile_v_;
  dense_matrix<std::int64_t> tile_i_;
};

/// The k-NN graph on the host (arguments checked, values checked by the caller; see knn_host_ops
/// for the callables).
template <class ValueT, class IndexT, class TileDistances, class PrepareIndex,
          class ByRows = no_host_rows>
knn_result knn_host(const host_resources& res, csr_view<ValueT, IndexT> index,
                    std::optional<csr_view<ValueT, IndexT>> queries, const knn_params& params,
                    bool largest, TileDistances&& tile_distances, PrepareIndex&& prepare_index,
                    ByRows&& by_rows = {})
{
  const csr_view<ValueT, IndexT> q = queries.value_or(index);
  knn_host_ops<ValueT, IndexT, std::decay_t<TileDistances>, std::decay_t<PrepareIndex>,
               std::decay_t<ByRows>>
      ops(res, index, q, params, largest, std::forward<TileDistances>(tile_distances),
          std::forward<PrepareIndex>(prepare_index), std::forward<ByRows>(by_rows));
  return knn_drive(ops, params, largest, !queries.has_value());
}

}  // namespace spira::detail
