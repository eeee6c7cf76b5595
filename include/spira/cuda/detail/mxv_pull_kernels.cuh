// spira internals: the pull of mxv / vxm on CUDA (spira/cuda/detail/mxv_cuda.cuh): t[i] folds the
// products of row i of A with u in the order of spira/detail/pull_fold.hpp (the host's), a warp
// per row, or for short rows a group of lanes per row, a block per tile of consecutive rows; its
// kernels also check A and u as they read them. Where it reads u (in place, or a dense copy) and
// where it writes t (the new vector itself, ordered_vector.cuh, or a dense copy) are small policy
// structs.
#pragma once

#include <spira/cuda/detail/graphblas_rows.cuh>
#include <spira/cuda/detail/mxm_kernels.cuh>  // rounded
#include <spira/cuda/detail/ordered_vector.cuh>
#include <spira/detail/pull_fold.hpp>
#include <spira/matrix.hpp>

#include <cstdint>

namespace spira::detail {

#if defined(__CUDACC__)

/// The pull kernel's tuning.
struct mxv_pull_policy {
  /// Positions of a row each lane loads before it folds them (loads in flight per lane).
  static constexpr int batch = 8;
  /// Lanes per row of the tiled kernel (a warp takes 32 / short_group consecutive rows at a
  /// time; a row of at most 32 entries is one step of its group).
  static constexpr int short_group = 4;
  /// The tiled kernel runs when A stores at most this many entries per row on average; rows
  /// longer than 32 are then folded by the whole warp after the tile's short ones.
  static constexpr std::int64_t tiled_max_mean_row = 32;
  static constexpr int threads = graphblas_rows_policy::block_threads;
  /// The rows of a block's tile: a row a warp, or a row a group of short_group lanes (the tiled
  /// kernel) - as many rows in flight as a grid-stride launch would have.
  template <bool Tiled>
  static constexpr int tile_rows = threads / (Tiled ? short_group : 32);
};

/// Where the pull reads u: a dense copy (state 0: no entry), for any u. at(k) is read whether or
/// not has(k) (an unset value is not used).
struct pull_u_dense {
  static constexpr bool every_index = false;
  const unsigned char* state;
  const double* value;
  __device__ bool has(std::int64_t k) const { return state[k] != 0; }
  __device__ double at(std::int64_t k) const { return value[k]; }
  /// The dense copy's scatter checked u.
  __device__ void check(unsigned long long*) const {}
};

/// u itself, when it stores every index (nnz = size): entry k is index k. Its indices are checked
/// here (k at entry k, else the first entry that is not into *bad, atomicMin); what the products
/// read is right only when none is found.
template <class ValueT, class IndexT>
struct pull_u_full {
  static constexpr bool every_index = true;
  const IndexT* indices;
  const ValueT* values;
  std::int64_t nnz;
  __device__ bool has(std::int64_t) const { return true; }
  __device__ double at(std::int64_t k) const { return double(values[k]); }
  __device__ void check(unsigned long long* bad) const
  {
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t p = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < nnz;
         p += stride) {
      if (std::int64_t(indices[p]) != p) {
        atomicMin(bad, (unsigned long long)p);
      }
    }
  }
};

/// Where the pull writes t: a dense copy (state 2 or 0, the value where 2), for the write under a
/// mask or into w. A block's tile is its block index.
struct pull_to_dense {
  unsigned char* state;
  double* value;
  static constexpr bool places_rows = false;
  template <int Rows>
  struct tile_storage {};
  template <int Rows>
  __device__ std::int64_t take_tile(tile_storage<Rows>&) const
  {
    return blockIdx.x;
  }
  template <int Rows>
  __device__ void put(const tile_storage<Rows>&, std::int64_t, std::int64_t i, bool found,
                      double v) const
  {
    state[i] = found ? 2 : 0;
    if (found) {
      value[i] = v;
    }
  }
};

/// The new vector itself (no mask, no w: t is the result). Before a block folds its tile, it
/// finds which rows have an entry (pull_row_has_entry) and places them (place_rows: their
/// positions in the vector, known once the tiles before have counted theirs); put then writes
/// each entry at its place. A tile's count is published before its folds, so no block waits for
/// another's folds. The tile storage is only named as the kernel's own __shared__ variable: kept
/// as a pointer in a struct beside the vector's pointers, it led nvcc to address the values
/// pointer as shared memory (cvta.to.shared of the kernel parameter).
template <class ValueT, class IndexT>
struct pull_to_vector {
  ordered_vector_ref<ValueT, IndexT> out;
  static constexpr bool places_rows = true;
  template <int Rows>
  struct tile_storage {
    typename ordered_vector_ref<ValueT, IndexT>::template tile_storage<mxv_pull_policy::threads>
        placing;
    std::int64_t at[Rows];  // the entry's position, -1: none
  };
  template <int Rows>
  __device__ std::int64_t take_tile(tile_storage<Rows>& storage) const
  {
    return out.take_tile(storage.placing);
  }
  /// Every thread: `has` whether the row it stands for (row r of the tile, when `lead`) has an
  /// entry; all of the block's threads call it.
  template <int Rows>
  __device__ void place_rows(std::int64_t tile, int r, bool lead, bool has,
                             tile_storage<Rows>& storage) const
  {
    const bool mine[1] = {lead && has};
    const std::int64_t at =
        out.template place_tile<mxv_pull_policy::threads, 1>(storage.placing, tile, mine);
    if (lead) {
      storage.at[r] = has ? at : -1;
    }
    __syncthreads();
  }
  /// Row i of the tile starting at row `first`, once placed.
  template <int Rows>
  __device__ void put(const tile_storage<Rows>& storage, std::int64_t first, std::int64_t i,
                      bool found, double v) const
  {
    const std::int64_t at = storage.at[i - first];
    if (found && at >= 0) {
      out.indices[at] = IndexT(i);
      out.values[at] = ValueT(v);
    }
  }
};

/// Row i of the pull: whether the mask allows it and its extent; `skip` when nothing is folded
/// (masked out without checks, or row pointers that are wrong, or i past the rows): the caller
/// writes it as absent.
struct pull_row_extent {
  bool in = false;
  bool skip = true;
  offset_t begin = 0;
  offset_t end = 0;
};

/// The extent of row i, its row pointers checked with `bad_row` (spira::validate's canonical
/// level; a wrong one reported when `lead`, one lane of the row's lanes).
template <class ValueT, class IndexT>
__device__ pull_row_extent pull_row_of(csr_view<ValueT, IndexT> a, std::int64_t i,
                                       const unsigned char* mask_state, bool structural,
                                       bool complement, unsigned long long* bad_row, bool lead)
{
  pull_row_extent r;
  if (i >= a.rows) {
    return r;
  }
  r.in = (mask_state == nullptr || (structural ? mask_state[i] > 0 : mask_state[i] == 2)) !=
         complement;
  if (!r.in && bad_row == nullptr) {
    return r;
  }
  r.begin = a.row_ptr[i];
  r.end = a.row_ptr[i + 1];
  if (bad_row != nullptr && !(r.begin >= 0 && r.begin <= r.end && r.end <= a.nnz &&
                              (i > 0 || r.begin == 0) && (i + 1 < a.rows || r.end == a.nnz))) {
    if (lead) {
      atomicMin(bad_row, (unsigned long long)i);
    }
    r.begin = r.end = 0;
    return r;
  }
  r.skip = false;
  return r;
}

/// Whether row r (its extent) has an entry in the pull: the mask allows it and it stores an index
/// that u stores (in range: a wrong one is the fold's to report). By a group of G lanes (lane g
/// tests positions g, g + G, ... until one is found); every lane of the warp calls it and every
/// lane of the group gets the answer.
template <int G, class U, class ValueT, class IndexT>
__device__ bool pull_row_has_entry(csr_view<ValueT, IndexT> a, const U& u, const pull_row_extent& r)
{
  bool hit = false;
  if (!r.skip && r.in) {
    if constexpr (U::every_index) {
      hit = r.end > r.begin;
    } else {
      for (offset_t p = r.begin + offset_t(threadIdx.x % G); p < r.end; p += G) {
        const auto k = std::int64_t(a.col_idx[p]);
        if (k >= 0 && k < a.cols && u.has(k)) {
          hit = true;
          break;
        }
      }
    }
  }
#pragma unroll
  for (int h = G / 2; h > 0; h /= 2) {
    hit = (__shfl_xor_sync(0xffffffffu, int(hit), h, G) != 0) || hit;
  }
  return hit;
}

/// The fold of positions [begin, end) of a row by a group of G lanes (G = 32: the warp), in
/// pull_fold's order: lane g of the group holds the partial folds g, g + G, ... (32 / G of them),
/// each lane loading `batch` positions a step before it folds them (the loads first, no store
/// between them, so they are in flight together); then the tree - its levels 16 .. G within each
/// lane, the rest by shuffles in the group. Every lane of the warp calls it (an empty range for
/// a lane with nothing to fold); the group's first lane gets the result (found: any product). A
/// wrong column index (checked: bounds and increase) is not used and sets `wrong`.
template <int G, bool VectorFirst, class S, class U, class ValueT, class IndexT>
__device__ void pull_fold_row(csr_view<ValueT, IndexT> a, const S& s, const U& u, offset_t begin,
                              offset_t end, bool in, bool checked, bool& found, double& acc,
                              bool& wrong)
{
  using add = typename S::add_monoid;
  constexpr int lanes = pull_fold<add, double>::lanes;
  constexpr int folds = lanes / G;  // partial folds per lane
  constexpr int batch = mxv_pull_policy::batch;
  static_assert(lanes == 32 && G <= 32 && batch % folds == 0,
                "a step of a lane covers its folds evenly");
  const int g = int(threadIdx.x % G);
  double part[folds];
  unsigned present = 0;
  for (offset_t p0 = begin + g; p0 < end; p0 += offset_t(G) * batch) {
    IndexT col[batch], before[batch];
    ValueT x[batch];
#pragma unroll
    for (int j = 0; j < batch; ++j) {
      const offset_t p = p0 + offset_t(G) * j;
      if (p < end) {
        col[j] = a.col_idx[p];
        x[j] = a.values[p];
        if (checked && p > begin) {
          before[j] = a.col_idx[p - 1];
        }
      }
    }
    bool here[batch];
    double y[batch];
#pragma unroll
    for (int j = 0; j < batch; ++j) {
      const offset_t p = p0 + offset_t(G) * j;
      const auto k = std::int64_t(col[j]);
      const bool ok =
          p < end &&
          (!checked || (k >= 0 && k < a.cols && (p == begin || std::int64_t(before[j]) < k)));
      wrong = wrong || (p < end && !ok);
      here[j] = ok && in && u.has(k);
      y[j] = ok ? u.at(k) : 0.0;  // not after has(k): both loads in flight
    }
#pragma unroll
    for (int j = 0; j < batch; ++j) {
      if (here[j]) {
        const int m = j % folds;  // position p0 + G j is fold g + G m
        const double prod =
            rounded(double(VectorFirst ? s.template multiply<double>(y[j], double(x[j]))
                                       : s.template multiply<double>(double(x[j]), y[j])));
        part[m] = (present >> m) & 1u ? double(add{}(part[m], prod)) : prod;
        present |= 1u << m;
      }
    }
  }
  // Levels h = 16 .. G: folds m and m + h / G of this lane.
#pragma unroll
  for (int w = folds / 2; w >= 1; w /= 2) {
#pragma unroll
    for (int m = 0; m < w; ++m) {
      if ((present >> (m + w)) & 1u) {
        part[m] = (present >> m) & 1u ? double(add{}(part[m], part[m + w])) : part[m + w];
        present |= 1u << m;
      }
    }
  }
  // Levels h = G / 2 .. 1: lane g takes lane g + h's fold.
  double v = (present & 1u) != 0 ? part[0] : 0.0;
  bool f = (present & 1u) != 0;
#pragma unroll
  for (int h = G / 2; h > 0; h /= 2) {
    const double other = __shfl_down_sync(0xffffffffu, v, h, G);
    const bool other_found = __shfl_down_sync(0xffffffffu, int(f), h, G) != 0;
    if (other_found) {
      v = f ? double(add{}(v, other)) : other;
      f = true;
    }
  }
  found = f;
  acc = v;
}

/// The pull: t[i] = ⊕ over the k stored in row i of `a` and in u of ⊗(a[i,k], u[k]) (or ⊗(u[k],
/// a[i,k]) with VectorFirst), folded in pull_fold's order; only where the mask allows i; every
/// entry of t is written (Out::put). A block takes a tile of mxv_pull_policy::tile_rows<Tiled>
/// consecutive rows (out.take_tile). Not Tiled: a warp per row. Tiled (short rows): a warp takes
/// 32 / short_group consecutive rows, a group of lanes each, and then folds the step's rows
/// longer than 32 as a warp, one after the other. With `bad` (nullptr: `a` and u are known to be
/// valid) u is checked into bad[0] (u.check) and every row into bad[1], as spira::validate's
/// canonical level checks it, the rows the mask leaves out too: the first row found wrong is
/// kept (atomicMin) and its entries are not used.
template <bool Tiled, bool VectorFirst, class S, class U, class Out, class ValueT, class IndexT>
__global__ void mxv_pull_kernel(csr_view<ValueT, IndexT> a, S s, U u,
                                const unsigned char* mask_state, bool structural, bool complement,
                                Out out_all, unsigned long long* bad)
{
  if (bad != nullptr) {
    u.check(bad);
  }
  unsigned long long* bad_row = bad != nullptr ? bad + 1 : nullptr;
  const bool checked = bad_row != nullptr;
  constexpr int rows_per_tile = mxv_pull_policy::tile_rows<Tiled>;
  constexpr int warps = mxv_pull_policy::threads / 32;
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  __shared__ typename Out::template tile_storage<rows_per_tile> storage;
  const std::int64_t tile = out_all.take_tile(storage);
  const std::int64_t first = tile * rows_per_tile;
  if constexpr (Out::places_rows) {
    // G lanes a row: the tile's rows in the order of the block's threads.
    constexpr int g = mxv_pull_policy::threads / rows_per_tile;
    static_assert(g * rows_per_tile == mxv_pull_policy::threads && g <= 32);
    const int r = int(threadIdx.x) / g;
    const bool lead = threadIdx.x % g == 0;
    const auto extent =
        pull_row_of(a, first + r, mask_state, structural, complement, bad_row, lead);
    const bool has = pull_row_has_entry<g>(a, u, extent);
    out_all.place_rows(tile, r, lead, has, storage);
  }
  // t[i]: storage is the kernel's own shared variable (no pointer to it is kept).
  const auto put = [&](std::int64_t i, bool found, double v) {
    out_all.put(storage, first, i, found, v);
  };
  const std::int64_t last = first + rows_per_tile < a.rows ? first + rows_per_tile : a.rows;
  // Row i (extent r) by the whole warp.
  const auto by_warp = [&](std::int64_t i, const pull_row_extent& r) {
    bool found = false, wrong = false;
    double acc = 0.0;
    pull_fold_row<32, VectorFirst>(a, s, u, r.begin, r.end, r.in, checked, found, acc, wrong);
    if (wrong) {
      atomicMin(bad_row, (unsigned long long)i);
    }
    if (lane == 0) {
      put(i, found, acc);
    }
  };
  if constexpr (!Tiled) {
    for (std::int64_t i = first + warp; i < last; i += warps) {
      const auto r = pull_row_of(a, i, mask_state, structural, complement, bad_row, lane == 0);
      if (!r.skip) {  // the same for the whole warp
        by_warp(i, r);
      } else if (lane == 0) {
        put(i, false, 0.0);
      }
    }
  } else {
    constexpr int group = mxv_pull_policy::short_group;
    constexpr int step = 32 / group;
    for (std::int64_t t0 = first + warp * step; t0 < last; t0 += warps * step) {
      const std::int64_t i = t0 + lane / group;
      const auto r =
          pull_row_of(a, i, mask_state, structural, complement, bad_row, lane % group == 0);
      if (r.skip && i < a.rows && lane % group == 0) {
        put(i, false, 0.0);
      }
      const bool is_long = !r.skip && r.end - r.begin > 32;
      const bool is_short = !r.skip && !is_long;
      bool found = false, wrong = false;
      double acc = 0.0;
      pull_fold_row<group, VectorFirst>(a, s, u, is_short ? r.begin : 0, is_short ? r.end : 0, r.in,
                                        checked, found, acc, wrong);
      if (wrong) {
        atomicMin(bad_row, (unsigned long long)i);
      }
      if (is_short && lane % group == 0) {
        put(i, found, acc);
      }
      // The step's long rows, by the whole warp.
      for (unsigned longs = __ballot_sync(0xffffffffu, is_long && lane % group == 0); longs != 0;
           longs &= longs - 1) {
        const int from = __ffs(int(longs)) - 1;
        pull_row_extent lr;
        lr.in = __shfl_sync(0xffffffffu, r.in, from);
        lr.begin = __shfl_sync(0xffffffffu, r.begin, from);
        lr.end = __shfl_sync(0xffffffffu, r.end, from);
        by_warp(t0 + from / group, lr);
      }
    }
  }
}

#endif  // __CUDACC__

}  // namespace spira::detail
