// spira internals: the host backend's pieces of the one k-NN driver (spira/detail/knn_driver.hpp):
// distance tiles from a callable (the built-in metrics' host engine or a user semiring's), their
// row-wise select_k and the running merge; the rows without tiles of knn_host_disjoint where a
// caller provides them; and, for a self query whose distances are symmetric bit for bit, square
// tiles that each serve both their rows and their columns. Plain C++.
#pragma once

#include <spira/detail/knn_driver.hpp>
#include <spira/select_k.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

namespace spira::detail {

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
///
/// `symmetric`: the distance of (i, j) is the distance of (j, i), bit for bit (the built-in
/// metrics whose host engine evaluates a matrix against itself as a symmetric product). A self
/// query that needs more than one distance tile then runs on square tiles (square_tiles), unless
/// params ask for tiles.
template <class ValueT, class IndexT, class TileDistances, class PrepareIndex,
          class ByRows = no_host_rows>
class knn_host_ops {
 public:
  using value_type = ValueT;
  /// What prepare_index returns: a std::unique_ptr to the prepared state of an index tile.
  using prepared_ptr = std::invoke_result_t<PrepareIndex&, csr_view<ValueT, IndexT>>;

  knn_host_ops(const host_resources& res, csr_view<ValueT, IndexT> index,
               csr_view<ValueT, IndexT> queries, const knn_params& params, bool largest,
               TileDistances tile_distances, PrepareIndex prepare_index, ByRows by_rows = {},
               bool symmetric = false)
      : res_(res),
        index_(index),
        queries_(queries),
        params_(params),
        largest_(largest),
        tile_distances_(std::move(tile_distances)),
        prepare_index_(std::move(prepare_index)),
        by_rows_(std::move(by_rows)),
        symmetric_(symmetric)
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
    if (by_rows_(k, largest_, skip_self, self_values, result, knn_host_budget(params_))) {
      return true;
    }
    return skip_self && symmetric_ && square_tiles(k, self_values, result);
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
    merge_into(lists, 0, tile_v_, tile_i_, rows, k, kt, i0, skip_first);
  }

  /// Merges the sorted candidates tv/ti (rows x kt, indices + i0 global) into the running lists'
  /// rows first_row ... first_row + rows - 1; skip_first: the global index of the first row's own
  /// point (dropped), or -1.
  void merge_into(knn_lists<ValueT>& lists, std::int64_t first_row, const dense_matrix<ValueT>& tv,
                  const dense_matrix<std::int64_t>& ti, std::int64_t rows, std::int64_t k,
                  std::int64_t kt, std::int64_t i0, std::int64_t skip_first)
  {
    const int threads = res_.num_threads();
    SPIRA_OMP(omp parallel num_threads(threads))
    {
      std::vector<ValueT> mv(static_cast<std::size_t>(k));
      std::vector<std::int64_t> mi(static_cast<std::size_t>(k));
      SPIRA_OMP(omp for schedule(static))
      for (std::int64_t r = 0; r < rows; ++r) {
        ValueT* bv = lists.values.view().row(first_row + r);
        std::int64_t* bi = lists.indices.view().row(first_row + r);
        const std::int64_t have = std::find(bi, bi + k, std::int64_t{-1}) - bi;
        const std::int64_t merged = knn_merge_sorted<ValueT>(
            {bv, bi, have}, {tv.view().row(r), ti.view().row(r), kt, i0}, k, largest_,
            skip_first >= 0 ? skip_first + r : -1, mv.data(), mi.data());
        std::copy_n(mv.begin(), merged, bv);
        std::copy_n(mi.begin(), merged, bi);
        std::fill(bi + merged, bi + k, std::int64_t{-1});
      }
    }
  }

  void store(const knn_lists<ValueT>& lists, std::int64_t q0, std::int64_t q1, knn_result& out,
             std::int64_t first_row = 0) const
  {
    const std::int64_t k = out.indices.cols();
    for (std::int64_t r = 0; r < q1 - q0; ++r) {
      std::copy_n(lists.indices.view().row(first_row + r), k, out.indices.view().row(q0 + r));
      std::transform(lists.values.view().row(first_row + r),
                     lists.values.view().row(first_row + r) + k, out.distances.view().row(q0 + r),
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
  /// The self query on square tiles (symmetric distances): blocks of rows as even as possible, as
  /// large as a distance tile of host_tile_budget allows; tile (I, J >= I) of blocks I and J is
  /// computed once and gives block I's rows their candidates among block J (the rows' top-k, as
  /// tile_top_k) and, for J > I, block J's rows theirs among block I (the columns' top-k,
  /// column_top_k): about half the products and finalizes of tiles of whole index rows. The
  /// distances are the same bits as theirs and every row keeps the best k of the same candidates,
  /// so the graph is the same bytes. With a progress callback the blocks are the rows of a progress
  /// step (knn_policy::progress_rows) where the budget allows, and a report follows each block's
  /// rows, at the same row counts as the query tiles of whole index rows report (the first
  /// blocks take the most tiles: their reports come later). Returns false (nothing done)
  /// where one tile holds every pair (its product is symmetric already) or the lists of every row
  /// do not fit 1 / knn_policy::square_lists_divisor of the budget.
  bool square_tiles(std::int64_t k, ValueT* self_values, knn_result& result)
  {
    const std::int64_t n = index_.rows;
    budget_ = knn_host_budget(params_);
    // The lists of every row, and at most twice as much for a tile's row and column candidates,
    // beside the distance tile.
    const std::size_t list_bytes = std::size_t(n) * std::size_t(k) * (sizeof(ValueT) + 8);
    if (list_bytes > budget_ / knn_policy::square_lists_divisor) {
      return false;
    }
    const std::size_t tile_values =
        std::min(host_tile_budget(budget_, n, k, sizeof(ValueT)), budget_ - 3 * list_bytes) /
        sizeof(ValueT);
    auto side_max =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(std::sqrt(double(tile_values))));
    if (params_.progress) {  // a report after each block's rows, as after each query tile
      side_max = std::min(side_max, knn_policy::progress_rows(n, knn_policy::progress_min_rows));
    }
    const std::int64_t blocks = (n + side_max - 1) / side_max;
    if (blocks < 2) {
      return false;
    }
    // Even blocks; with a progress callback blocks of a progress step's rows, as the query tiles
    // of whole index rows report.
    const std::int64_t side = params_.progress ? side_max : (n + blocks - 1) / blocks;
    tiling_ = {side, side};
    prepared_.resize(std::size_t(blocks));
    prepared_tiles_.resize(std::size_t(blocks));
    prepared_counted_.assign(std::size_t(blocks), 0);
    auto lists = make_lists(n, k);
    reset(lists, n);
    for (std::int64_t a0 = 0; a0 < n; a0 += side) {
      const std::int64_t a1 = std::min(n, a0 + side);
      for (std::int64_t b0 = a0; b0 < n; b0 += side) {
        const std::int64_t b1 = std::min(n, b0 + side);
        // As knn_drive: one more candidate where the rows' own points are among the columns.
        const std::int64_t kt = std::min(k + (b0 == a0 ? 1 : 0), b1 - b0);
        tile_top_k(a0, a1, b0, b1, kt, self_values);
        merge_into(lists, a0, tile_v_, tile_i_, a1 - a0, k, kt, b0, a0);
        if (b0 > a0) {
          const std::int64_t kc = std::min(k, a1 - a0);
          column_top_k(a1 - a0, b1 - b0, kc);
          merge_into(lists, b0, col_v_, col_i_, b1 - b0, k, kc, a0, -1);
        }
      }
      store(lists, a0, a1, result, a0);
      release_prepared(std::size_t(a0 / side));  // no later tile takes block a0 as its columns
      if (params_.progress) {
        params_.progress(a1, n);
      }
    }
    return true;
  }

  /// Each column's best kc entries of the distance tile in tile_d_ (rows x cols, rows >= kc), best
  /// first by knn_better with the tile's row as the index, into col_v_ / col_i_ (cols x kc; the
  /// values copied from the tile). The rows stream through a sorted list per column in blocks of
  /// knn_policy::square_column_block columns; an entry enters only when its key is smaller than
  /// the list's worst (an equal key comes from a later row, which loses the tie).
  void column_top_k(std::int64_t rows, std::int64_t cols, std::int64_t kc)
  {
    using traits = selection::key_traits<ValueT>;
    using key_type = typename traits::key_type;
    constexpr std::int64_t width = knn_policy::square_column_block;
    col_v_ = dense_matrix<ValueT>(res_, cols, kc);
    col_i_ = dense_matrix<std::int64_t>(res_, cols, kc);
    const dense_view<ValueT> dv{rows, cols, cols, tile_d_.data()};
    const dense_view<ValueT> out_v = col_v_.view();
    const dense_view<std::int64_t> out_i = col_i_.view();
    const std::int64_t blocks = (cols + width - 1) / width;
    const bool largest = largest_;
    SPIRA_OMP(omp parallel num_threads(res_.num_threads()))
    {
      std::vector<key_type> keys(static_cast<std::size_t>(width * kc));
      std::vector<std::int64_t> index(static_cast<std::size_t>(width * kc));
      SPIRA_OMP(omp for schedule(dynamic, 1))
      for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t c0 = b * width;
        const std::int64_t w = std::min(cols, c0 + width) - c0;
        for (std::int64_t r = 0; r < rows; ++r) {
          const ValueT* row = dv.row(r) + c0;
          const std::int64_t have = std::min(r, kc);
          for (std::int64_t c = 0; c < w; ++c) {
            const key_type x = traits::to_key(row[c], largest);
            key_type* lk = keys.data() + c * kc;
            std::int64_t* li = index.data() + c * kc;
            if (have == kc && !(x < lk[kc - 1])) {
              continue;
            }
            std::int64_t p = have == kc ? kc - 1 : have;
            for (; p > 0 && x < lk[p - 1]; --p) {
              lk[p] = lk[p - 1];
              li[p] = li[p - 1];
            }
            lk[p] = x;
            li[p] = r;
          }
        }
        for (std::int64_t c = 0; c < w; ++c) {
          for (std::int64_t j = 0; j < kc; ++j) {
            const std::int64_t r = index[std::size_t(c * kc + j)];
            out_i(c0 + c, j) = r;
            out_v(c0 + c, j) = dv(r, c0 + c);
          }
        }
      }
    }
  }

  /// Releases index tile t's prepared state (no later distance tile uses it), so that the budget's
  /// share for prepared tiles goes to the tiles still to come.
  void release_prepared(std::size_t t)
  {
    if (t < prepared_.size() && prepared_[t]) {
      prepared_bytes_ -= prepared_counted_[t];
      prepared_counted_[t] = 0;
      prepared_[t].reset();
      prepared_tiles_[t] = kept_tile{};
      prepare_more_ = true;
    }
  }

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
  bool symmetric_ = false;
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
  dense_matrix<ValueT> col_v_;  // square tiles: each column's candidates
  dense_matrix<std::int64_t> col_i_;
};

/// The k-NN graph on the host (arguments checked, values checked by the caller; see knn_host_ops
/// for the callables).
template <class ValueT, class IndexT, class TileDistances, class PrepareIndex,
          class ByRows = no_host_rows>
knn_result knn_host(const host_resources& res, csr_view<ValueT, IndexT> index,
                    std::optional<csr_view<ValueT, IndexT>> queries, const knn_params& params,
                    bool largest, TileDistances&& tile_distances, PrepareIndex&& prepare_index,
                    ByRows&& by_rows = {}, bool symmetric = false)
{
  const csr_view<ValueT, IndexT> q = queries.value_or(index);
  knn_host_ops<ValueT, IndexT, std::decay_t<TileDistances>, std::decay_t<PrepareIndex>,
               std::decay_t<ByRows>>
      ops(res, index, q, params, largest, std::forward<TileDistances>(tile_distances),
          std::forward<PrepareIndex>(prepare_index), std::forward<ByRows>(by_rows), symmetric);
  return knn_drive(ops, params, largest, !queries.has_value());
}

}  // namespace spira::detail
