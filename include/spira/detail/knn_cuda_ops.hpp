// spira internals: the CUDA backend's pieces of the one k-NN driver (spira/detail/knn_driver.hpp).
// Operands in host memory are copied to the device (the index once, when it fits half the budget;
// each query tile once); operands already in device memory are used where they are. An index tile
// that stays on the device is prepared once for the distance engine (norms, CSC...) and kept for
// every query tile, within a share of the budget. The running lists, the merge and the final graph
// stay on the device; the result is in the operands' memory space. Plain C++: the kernels are
// compiled into the library (src/knn/knn_ops_cuda.cu).
#pragma once

#include <spira/convert.hpp>
#include <spira/detail/knn_driver.hpp>
#include <spira/detail/knn_policy.hpp>
#include <spira/knn.hpp>
#include <spira/memory.hpp>
#include <spira/select_k.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

namespace spira::detail {

// Defined in src/knn/knn_ops_cuda.cu for ValueT = float, double (device pointers, queued on
// res.stream).

/// The running merge of `rows` query rows: run (rows x k, trailing entries with index -1 are
/// empty) and the tile's sorted top-kt (indices + offset are global) into out (rows x k, padded
/// with index -1), by knn_merge_sorted; row r drops index skip_first + r when skip_first >= 0.
template <class ValueT>
void knn_merge_tile_cuda(const cuda_resources& res, std::int64_t rows, std::int64_t k,
                         const ValueT* run_values, const std::int64_t* run_indices,
                         const ValueT* tile_values, const std::int64_t* tile_indices,
                         std::int64_t kt, std::int64_t offset, std::int64_t skip_first,
                         bool largest, ValueT* out_values, std::int64_t* out_indices);

/// Rows x k lists into rows [row0, row0 + rows) of a float graph (out_ld = k): values converted.
template <class ValueT>
void knn_store_rows_cuda(const cuda_resources& res, std::int64_t rows, std::int64_t k,
                         const ValueT* values, const std::int64_t* indices, float* out_values,
                         std::int64_t* out_indices);

/// knn_insert_self_row for every row of a device graph (see there; in place when k == ko).
template <class ValueT>
void knn_insert_self_cuda(const cuda_resources& res, std::int64_t n, std::int64_t ko,
                          const float* others_values, const std::int64_t* others_indices,
                          const ValueT* self, std::int64_t k, bool largest, float* out_values,
                          std::int64_t* out_indices);

/// indices[0, n) = -1: empty list entries.
void knn_clear_indices_cuda(const cuda_resources& res, std::int64_t* indices, std::int64_t n);

/// count values d[r * ld + r] -> dst[r] (the diagonal of a distance tile).
template <class ValueT>
void knn_copy_diagonal_cuda(const cuda_resources& res, const ValueT* d, std::int64_t ld,
                            std::int64_t count, ValueT* dst);

/// Rows [r0, r1) of a device CSR matrix: a rebased copy of their row pointers (returned in `ptr`)
/// and a view of their columns and values where they are.
template <class ValueT, class IndexT>
csr_view<ValueT, IndexT> device_row_slice(const cuda_resources& res, csr_view<ValueT, IndexT> a,
                                          std::int64_t r0, std::int64_t r1, buffer<offset_t>& ptr);

/// knn_params::memory_budget, or the CUDA default (a share of the free device memory).
inline std::size_t knn_cuda_budget(const cuda_resources& res, const knn_params& params)
{
  return params.memory_budget > 0 ? params.memory_budget
                                  : cuda_free_memory(res) / knn_policy::device_budget_divisor;
}

/// The structure of device operands, checked once per call (the tiles are not checked again):
/// canonical CSR. Host operands are checked by knn_cuda_ops, on the device when it copies them
/// whole and on the host otherwise, so that a bad row is always named by its row in the caller's
/// matrix.
template <class ValueT, class IndexT>
void knn_validate(const cuda_resources& res, csr_view<ValueT, IndexT> index,
                  std::optional<csr_view<ValueT, IndexT>> queries)
{
  if (index.space != memory_space::device) {
    return;
  }
  validate(res, index, csr_check::canonical, "knn_graph: index");
  if (queries) {
    validate(res, *queries, csr_check::canonical, "knn_graph: queries");
  }
}

/// knn_drive's pieces on the GPU. `prepare_index(index_tile)` returns a std::unique_ptr to what the
/// distance engine computes of an index tile alone (its norms, prepared values, CSC: e.g.
/// pairwise_prepared), which has device_bytes(); `tile_distances(queries_tile, index_tile, out,
/// prepared)` fills a device distance tile without checking its operands again, with `prepared`
/// the index tile's prepared state or nullptr, and the same values either way; `fused(queries,
/// index, k, skip_self, self_values, out_values, out_indices)` runs the fused algorithm on device
/// operands, or is never called when `use_fused` is false.
///
/// When the index tiles stay on the device and there are several query tiles, each index tile is
/// prepared once, by its first distance tile, and kept for the distance tiles of the other query
/// tiles, while the tiles kept take at most budget / knn_policy::prepared_index_divisor bytes;
/// the tiles past that are not prepared (each distance tile computes what it needs, as with one
/// query tile).
template <class ValueT, class IndexT, class TileDistances, class PrepareIndex, class Fused>
class knn_cuda_ops {
 public:
  using value_type = ValueT;
  /// What prepare_index returns: a std::unique_ptr to the prepared state of an index tile.
  using prepared_ptr = std::invoke_result_t<PrepareIndex&, csr_view<ValueT, IndexT>>;

  knn_cuda_ops(const cuda_resources& res, csr_view<ValueT, IndexT> index,
               csr_view<ValueT, IndexT> queries, const knn_params& params, bool largest,
               std::size_t budget, bool use_fused, TileDistances tile_distances,
               PrepareIndex prepare_index, Fused fused)
      : res_(res),
        index_(index),
        queries_(queries),
        params_(params),
        largest_(largest),
        budget_(budget),
        use_fused_(use_fused),
        on_device_(index.space == memory_space::device),
        tile_distances_(std::move(tile_distances)),
        prepare_index_(std::move(prepare_index)),
        fused_(std::move(fused))
  {
    if (on_device_) {
      index_dev_ = index_;
      queries_dev_ = queries_;
    }
  }

  std::int64_t query_rows() const { return queries_.rows; }
  std::int64_t index_rows() const { return index_.rows; }

  knn_lists<ValueT> make_lists(std::int64_t rows, std::int64_t k) const
  {
    return {dense_matrix<ValueT>(res_, rows, k), dense_matrix<std::int64_t>(res_, rows, k)};
  }
  buffer<ValueT> make_self_values(std::int64_t n) const
  {
    return n > 0 ? buffer<ValueT>(res_, std::size_t(n), "k-NN self distances") : buffer<ValueT>{};
  }
  knn_result make_result(std::int64_t rows, std::int64_t k) const
  {
    return {dense_matrix<std::int64_t>(res_, rows, k), dense_matrix<float>(res_, rows, k)};
  }

  bool fused(std::int64_t k, bool skip_self, ValueT* self_values, knn_result& out)
  {
    if (!use_fused_) {
      return false;
    }
    std::optional<csr_matrix<ValueT, IndexT>> index_copy;
    std::optional<csr_matrix<ValueT, IndexT>> queries_copy;
    csr_view<ValueT, IndexT> iv = index_;
    csr_view<ValueT, IndexT> qv = queries_;
    if (!on_device_) {
      index_copy = to_device(res_, index_);
      iv = index_copy->view();
      validate(res_, iv, csr_check::canonical, "knn_graph: index");
      if (same_operands()) {
        qv = iv;
      } else {
        queries_copy = to_device(res_, queries_);
        qv = queries_copy->view();
        validate(res_, qv, csr_check::canonical, "knn_graph: queries");
      }
    }
    if constexpr (std::is_same_v<ValueT, float>) {
      fused_(qv, iv, k, skip_self, self_values, out.distances.view(), out.indices.view());
    } else {
      dense_matrix<ValueT> values(res_, qv.rows, k);
      fused_(qv, iv, k, skip_self, self_values, values.view(), out.indices.view());
      knn_store_rows_cuda<ValueT>(res_, qv.rows, k, values.data(), out.indices.data(),
                                  out.distances.data(), out.indices.data());
    }
    return true;
  }

  knn_tiling plan(std::int64_t k)
  {
    // A host index counts against the budget: when it takes at most 1/resident_index_divisor, all
    // its tiles stay on the device (copied once) and the distance tiles get the rest; otherwise
    // one index tile at a time is copied when used (again for every query tile).
    const std::size_t index_bytes = std::size_t(index_.nnz) * (sizeof(ValueT) + sizeof(IndexT)) +
                                    std::size_t(index_.rows + 1) * sizeof(offset_t);
    resident_ = on_device_ || index_bytes <= budget_ / knn_policy::resident_index_divisor;
    const std::size_t tile_budget =
        on_device_
            ? budget_
            : (resident_ ? budget_ - index_bytes : budget_ / knn_policy::resident_index_divisor);
    tiling_ = plan_knn_tiles(tile_budget, queries_.rows, index_.rows, k, sizeof(ValueT), params_,
                             budget_, knn_policy::cuda_progress_min_rows);
    if (!on_device_) {
      // Host operands are checked once: the index on the device when it is copied whole, else on
      // the host; separate queries (copied tile by tile) on the host.
      if (resident_) {
        // The whole index in one copy; a self query then takes its query tiles from it too.
        index_copy_ = to_device(res_, index_);
        index_dev_ = index_copy_->view();
        validate(res_, index_dev_, csr_check::canonical, "knn_graph: index");
        if (same_operands()) {
          queries_dev_ = index_dev_;
        }
      } else {
        validate(host_resources{}, index_, csr_check::canonical, "knn_graph: index");
      }
      if (!same_operands()) {
        validate(host_resources{}, queries_, csr_check::canonical, "knn_graph: queries");
      }
    }
    if (resident_) {
      for (std::int64_t i0 = 0; i0 < index_.rows; i0 += tiling_.index) {
        index_tiles_.push_back(slice(index_dev_, i0, std::min(index_.rows, i0 + tiling_.index)));
      }
      if (tiling_.queries < queries_.rows) {
        // Several query tiles use each index tile: prepare each once (prepared_tile).
        prepared_.resize(index_tiles_.size());
        prepared_counted_.assign(index_tiles_.size(), 0);
      }
    }
    return tiling_;
  }

  void begin_query_tile(std::int64_t q0, std::int64_t q1)
  {
    query_tile_ = slice(queries_dev_ ? *queries_dev_ : queries_, q0, q1);
  }
  void reset(knn_lists<ValueT>& lists, std::int64_t rows) const
  {
    knn_clear_indices_cuda(res_, lists.indices.data(), rows * lists.indices.cols());
  }

  void tile_top_k(std::int64_t q0, std::int64_t q1, std::int64_t i0, std::int64_t i1,
                  std::int64_t kt, ValueT* self_values)
  {
    const std::int64_t nq = q1 - q0;
    const std::int64_t ni = i1 - i0;
    const csr_view<ValueT, IndexT> it = index_tile(i0);
    const auto t = static_cast<std::size_t>(i0 / tiling_.index);
    dense_matrix<ValueT> d(res_, nq, ni);
    tile_distances_(query_tile_.view, it, d.view(), prepared_tile(t, it));
    count_prepared(t);
    if constexpr (!std::is_same_v<ValueT, float>) {
      round_to_float_in_place(d.data(), nq, ni, d.view().ld, res_);
    }
    const std::int64_t g0 = std::max(q0, i0);
    const std::int64_t g1 = std::min(q1, i1);
    if (self_values != nullptr && g0 < g1) {
      knn_copy_diagonal_cuda<ValueT>(res_, d.data() + (g0 - q0) * d.view().ld + (g0 - i0),
                                     d.view().ld, g1 - g0, self_values + g0);
    }
    if (tile_v_.rows() != nq || tile_v_.cols() != kt) {
      tile_v_ = dense_matrix<ValueT>(res_, nq, kt);
      tile_i_ = dense_matrix<std::int64_t>(res_, nq, kt);
    }
    if (kt > 0) {
      select_k<ValueT, std::int64_t>(res_, dense_view<const ValueT>(d.view()), kt,
                                     largest_ ? select_order::largest : select_order::smallest,
                                     tile_v_.view(), tile_i_.view(), {.sorted = true});
    }
  }

  void merge(knn_lists<ValueT>& lists, std::int64_t rows, std::int64_t k, std::int64_t kt,
             std::int64_t i0, std::int64_t skip_first)
  {
    if (spare_.values.rows() != lists.values.rows() || spare_.values.cols() != k) {
      spare_ = make_lists(lists.values.rows(), k);
    }
    knn_merge_tile_cuda<ValueT>(res_, rows, k, lists.values.data(), lists.indices.data(),
                                tile_v_.data(), tile_i_.data(), kt, i0, skip_first, largest_,
                                spare_.values.data(), spare_.indices.data());
    std::swap(lists, spare_);
  }

  void store(const knn_lists<ValueT>& lists, std::int64_t q0, std::int64_t q1,
             knn_result& out) const
  {
    const std::int64_t k = out.indices.cols();
    knn_store_rows_cuda<ValueT>(res_, q1 - q0, k, lists.values.data(), lists.indices.data(),
                                out.distances.data() + q0 * k, out.indices.data() + q0 * k);
  }

  knn_result insert_self(knn_result others, const buffer<ValueT>& self, std::int64_t k,
                         bool largest) const
  {
    const std::int64_t n = others.indices.rows();
    const std::int64_t ko = others.indices.cols();
    knn_result out = ko == k ? std::move(others) : make_result(n, k);
    const knn_result& in = ko == k ? out : others;
    knn_insert_self_cuda<ValueT>(res_, n, ko, in.distances.data(), in.indices.data(), self.data(),
                                 k, largest, out.distances.data(), out.indices.data());
    return out;
  }

 private:
  struct device_rows {
    buffer<offset_t> ptr;
    std::optional<csr_matrix<ValueT, IndexT>> copy;
    csr_view<ValueT, IndexT> view{};
  };

  bool same_operands() const
  {
    return queries_.row_ptr == index_.row_ptr && queries_.col_idx == index_.col_idx &&
           queries_.values == index_.values && queries_.rows == index_.rows;
  }

  /// Rows [r0, r1) of `a` on the device: a view of a device operand (with its own row pointers),
  /// or a copy of a host one.
  device_rows slice(csr_view<ValueT, IndexT> a, std::int64_t r0, std::int64_t r1)
  {
    device_rows out;
    if (a.space == memory_space::device) {
      out.view = device_row_slice(res_, a, r0, r1, out.ptr);
    } else {
      out.copy = to_device(res_, row_slice(a, r0, r1, host_ptr_));
      out.view = out.copy->view();
    }
    return out;
  }

  /// The prepared state of resident index tile t (tile: its view), made now if it has none and
  /// the tiles kept are within their share of the budget; nullptr when tiles are not prepared.
  typename prepared_ptr::element_type* prepared_tile(std::size_t t, csr_view<ValueT, IndexT> tile)
  {
    if (t < prepared_.size() && !prepared_[t] && prepare_more_) {
      prepared_[t] = prepare_index_(tile);
    }
    return t < prepared_.size() ? prepared_[t].get() : nullptr;
  }

  /// Counts the device bytes of tile t's prepared state after a distance tile (they grow when a
  /// strategy builds its part on first use). Past budget / prepared_index_divisor the state is
  /// released and no further tile is prepared.
  void count_prepared(std::size_t t)
  {
    if (t >= prepared_.size() || !prepared_[t]) {
      return;
    }
    const std::size_t now = prepared_[t]->device_bytes();
    prepared_bytes_ = prepared_bytes_ - prepared_counted_[t] + now;
    prepared_counted_[t] = now;
    if (prepared_bytes_ > budget_ / knn_policy::prepared_index_divisor) {
      prepared_bytes_ -= now;
      prepared_counted_[t] = 0;
      prepared_[t].reset();  // freed in stream order, after the distance tile that read it
      prepare_more_ = false;
    }
  }

  csr_view<ValueT, IndexT> index_tile(std::int64_t i0)
  {
    const std::size_t t = static_cast<std::size_t>(i0 / tiling_.index);
    if (resident_) {
      return index_tiles_[t].view;
    }
    if (held_ != i0) {
      index_tiles_.clear();  // free the previous tile first
      index_tiles_.push_back(slice(index_, i0, std::min(index_.rows, i0 + tiling_.index)));
      held_ = i0;
    }
    return index_tiles_.front().view;
  }

  cuda_resources res_;
  csr_view<ValueT, IndexT> index_;
  csr_view<ValueT, IndexT> queries_;
  const knn_params& params_;
  bool largest_;
  std::size_t budget_;
  bool use_fused_;
  bool on_device_;
  TileDistances tile_distances_;
  PrepareIndex prepare_index_;
  Fused fused_;
  bool resident_ = false;
  csr_view<ValueT, IndexT> index_dev_{};  // the index on the device, when it is there
  std::optional<csr_view<ValueT, IndexT>>
      queries_dev_;  // the queries on the device, when they are there
  std::optional<csr_matrix<ValueT, IndexT>> index_copy_;  // a host index copied whole
  knn_tiling tiling_{1, 1};
  std::vector<device_rows> index_tiles_;       // every tile (resident), or the one held
  std::int64_t held_ = -1;                     // the first row of the tile held (not resident)
  std::vector<prepared_ptr> prepared_;         // per resident tile, when several query tiles use it
  std::vector<std::size_t> prepared_counted_;  // the bytes of each counted in prepared_bytes_
  std::size_t prepared_bytes_ = 0;
  bool prepare_more_ = true;
  device_rows query_tile_;
  std::vector<offset_t> host_ptr_;
  dense_matrix<ValueT> tile_v_;
  dense_matrix<std::int64_t> tile_i_;
  knn_lists<ValueT> spare_;
};

/// The k-NN graph on the GPU (arguments checked, values checked by the caller): the fused
/// algorithm when `use_fused`, else tiles (see knn_cuda_ops for the three callables). The result
/// is in the operands' memory space.
template <class ValueT, class IndexT, class TileDistances, class PrepareIndex, class Fused>
knn_result knn_cuda(const cuda_resources& res, csr_view<ValueT, IndexT> index,
                    std::optional<csr_view<ValueT, IndexT>> queries, const knn_params& params,
                    bool largest, std::size_t budget, bool use_fused,
                    TileDistances&& tile_distances, PrepareIndex&& prepare_index, Fused&& fused)
{
  const csr_view<ValueT, IndexT> q = queries.value_or(index);
  knn_cuda_ops<ValueT, IndexT, std::decay_t<TileDistances>, std::decay_t<PrepareIndex>,
               std::decay_t<Fused>>
      ops(res, index, q, params, largest, budget, use_fused,
          std::forward<TileDistances>(tile_distances), std::forward<PrepareIndex>(prepare_index),
          std::forward<Fused>(fused));
  knn_result g = knn_drive(ops, params, largest, !queries.has_value());
  if (index.space == memory_space::device) {
    return g;
  }
  // Host operands: the graph comes back to the host.
  const host_resources host{};
  knn_result out{dense_matrix<std::int64_t>(host, g.indices.rows(), g.indices.cols()),
                 dense_matrix<float>(host, g.distances.rows(), g.distances.cols())};
  const std::size_t n = std::size_t(g.indices.rows() * g.indices.cols());
  copy(out.indices.data(), memory_space::host, g.indices.data(), memory_space::device, n, res);
  copy(out.distances.data(), memory_space::host, g.distances.data(), memory_space::device, n, res);
  return out;
}

}  // namespace spira::detail
