// spira internals: the one k-NN driver of both backends. It checks the arguments once, then either
// runs the fused CUDA algorithm or loops over query and index tiles (distance tile -> row-wise
// select_k -> running merge), and puts each point first when the index is queried against itself.
// The backend's pieces come from an "ops" object: knn_host_ops in spira/detail/knn_host_ops.hpp,
// knn_cuda_ops in spira/detail/knn_cuda_ops.hpp. Used by the built-in metrics (src/knn) and the
// user-semiring templates (spira/knn_semiring.hpp, spira/cuda/knn.cuh). Plain C++.
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
///                                                      the host's: rows without tiles, or a
///                                                      self query's square tiles)
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

// ---- pieces of the host backend (knn_host_ops.hpp) and of the host-side checks ----------------

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

}  // namespace spira::detail
