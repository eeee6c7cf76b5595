// spira internals: the fused k-NN kernel of spira/cuda/knn.cuh - one block a query row, by a walk
// over the index in accumulator tiles or, where the pairs without a shared column may be skipped,
// by its products (knn_fused_by_products.cuh); the selection is in knn_fused_select.cuh. See
// knn.cuh for the design.
#pragma once

#include <spira/cuda/detail/knn_fused_by_products.cuh>
#include <spira/cuda/detail/knn_fused_select.cuh>
#include <spira/cuda/detail/launch_progress.cuh>
#include <spira/cuda/pairwise.cuh>

#include <cstdint>

namespace spira::detail {

#if defined(__CUDACC__)

/// Whether a row stores no nonzero value (empty, or explicit zeros only; a NaN is not zero).
template <class ValueT>
__device__ inline bool knn_all_zero(const ValueT* values, offset_t n)
{
  bool zero = true;
  for (offset_t e = 0; e < n && zero; ++e) {
    zero = values[e] == ValueT(0);
  }
  return zero;
}

/// Index rows for which D's pairs without a shared column take D::disjoint_distance: sets *blocked
/// when some row fails D::disjoint_index (spira/accuracy.hpp). With zero_queries / zero_index
/// (D declares zero_rows_distance), also marks the query and index rows that store no nonzero
/// value.
template <class D, class ValueT, class IndexT>
__global__ void knn_disjoint_index_kernel(intersection_args<D, ValueT, IndexT> p, unsigned* blocked,
                                          unsigned char* zero_queries, unsigned char* zero_index)
{
  using A = intersection_accumulator_t<D, ValueT>;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < p.rows_b;
       j += stride) {
    const offset_t b0 = p.b_ptr[j];
    const sparse_row<ValueT, IndexT> y{p.b_col + b0, p.b_val + b0, p.b_ptr[j + 1] - b0};
    if (!p.d.template disjoint_index<double>(y, p.norms_b[j], accumulator_bounds_of<A>())) {
      atomicOr(blocked, 1u);
    }
    if (zero_index != nullptr) {
      zero_index[j] = knn_all_zero(y.values, y.size) ? 1 : 0;
    }
  }
  if (zero_queries != nullptr) {
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < p.rows_a;
         i += stride) {
      const offset_t a0 = p.a_ptr[i];
      zero_queries[i] = knn_all_zero(p.a_val + a0, p.a_ptr[i + 1] - a0) ? 1 : 0;
    }
  }
}

/// Query row i by a walk over the index: for each tile of tile_cols index rows, the accumulation
/// of the intersection strategy (spira/cuda/detail/pairwise_intersection.cuh), then every
/// finalized pair ranked (knn_rank_pair); the buffer is merged into the list by knn_end_round.
///
/// The tile is read in rounds of E entries a thread, each entry put back to ⊕'s identity as it is
/// read where it is not (the tile is cleared once per block, not once per tile; a NaN sum is put
/// back too: it is not the identity). `Skipping` (a D with a disjoint value, accuracy_traits::
/// disjoint, and rows its predicates accept): once k pairs at the identity (no shared column) were
/// ranked, the others are skipped - they tie with those k at D::disjoint_distance and come later in
/// the index order, so they cannot enter the list - in rounds of knn_round_entries entries, a
/// round without another pair costing one barrier. Whole block.
template <bool Skipping, class D, class ValueT, class IndexT>
__device__ void knn_walk_row(const intersection_args<D, ValueT, IndexT>& p,
                             const knn_fused_select& s, std::int64_t i,
                             intersection_accumulator_t<D, ValueT>* acc, ValueT* vals,
                             std::int64_t* idx, int* slots, int& have, int& count)
{
  using add = typename D::add_monoid;
  using A = intersection_accumulator_t<D, ValueT>;
  constexpr int N = intersection_args<D, ValueT, IndexT>::N;
  constexpr int E = Skipping ? cuda_pairwise_policy::knn_round_entries : 1;
  int disjoint_ranked = 0;  // pairs at the identity ranked (at least; uniform)
  for (std::int64_t j0 = 0; j0 < p.rows_b; j0 += p.tile_cols) {
    const std::int64_t width = p.tile_cols < p.rows_b - j0 ? p.tile_cols : p.rows_b - j0;
    intersection_accumulate(p, i, j0, width, acc);
    __syncthreads();
    for (std::int64_t base = 0; base < width; base += E * std::int64_t(blockDim.x)) {
      // This thread's entries of the round (base + q blockDim + thread), read and cleared.
      const bool skip = Skipping && disjoint_ranked >= s.k;
      terms<A, N> a[E];
      bool live[E];
      bool any = false;
      int at_identity = 0;
#pragma unroll
      for (int q = 0; q < E; ++q) {
        const std::int64_t jj = base + q * std::int64_t(blockDim.x) + threadIdx.x;
        live[q] = false;
        if (jj < width) {
          bool identity = true;
#pragma unroll
          for (int t = 0; t < N; ++t) {
            a[q][t] = acc[jj * N + t];
            identity = identity && a[q][t] == add::template identity<A>();
          }
          if (!identity) {
#pragma unroll
            for (int t = 0; t < N; ++t) {
              acc[jj * N + t] = add::template identity<A>();
            }
          }
          const bool self = s.exclude_self && j0 + jj == i;
          live[q] = !skip || !identity || self;
          at_identity += identity && !self ? 1 : 0;
          any = any || live[q];
        }
      }
      if constexpr (Skipping) {
        if (skip) {
          if (__syncthreads_or(any) == 0) {
            continue;  // uniform: nothing in this round but pairs at the identity
          }
        } else {
          // A lower bound of the pairs at the identity ranked in this round (threads with one).
          disjoint_ranked += __syncthreads_count(at_identity > 0);
        }
      }
#pragma unroll
      for (int q = 0; q < E; ++q) {
        if (base + q * std::int64_t(blockDim.x) >= width) {
          break;  // uniform
        }
        const std::int64_t jj = base + q * std::int64_t(blockDim.x) + threadIdx.x;
        const bool candidate =
            jj < width && live[q] && knn_rank_pair(p, s, i, j0 + jj, a[q], vals, idx, slots, have);
        knn_end_round(vals, idx, s, have, count, slots, candidate);
      }
    }
  }
}

/// The value of pair (i, j) where query row i stores no nonzero value (knn_zero_query_row): the
/// declared one (knn_declared_value) of a pair at ⊕'s identity. One thread.
template <class D, class ValueT, class IndexT>
__device__ inline ValueT knn_zero_query_value(const intersection_args<D, ValueT, IndexT>& p,
                                              const knn_fused_select& s, std::int64_t i,
                                              std::int64_t j)
{
  using A = intersection_accumulator_t<D, ValueT>;
  constexpr int N = intersection_args<D, ValueT, IndexT>::N;
  terms<A, N> a;
#pragma unroll
  for (int t = 0; t < N; ++t) {
    a[t] = D::add_monoid::template identity<A>();
  }
  ValueT v{};
  knn_declared_value(p, s, i, j, a, v);  // gives one: the row is all-zero, the index disjoint
  return v;
}

/// Query row i that stores no nonzero value, for a D that declares zero_rows_distance and an index
/// whose rows all pass D::disjoint_index: every pair's value is the declared one
/// (knn_zero_query_value, the value the walk's knn_declared_value gives each such pair, which the
/// guard never trusts), so the list comes from the index's all-zero flags without the walk's
/// accumulation or finalize - each index row ranked in rounds of one a thread, until the list is
/// full of the best value a pair can take (later rows tie and lose on the index). Whole block.
template <class D, class ValueT, class IndexT>
__device__ void knn_zero_query_row(const intersection_args<D, ValueT, IndexT>& p,
                                   const knn_fused_select& s, std::int64_t i, ValueT* vals,
                                   std::int64_t* idx, int* slots, int& have, int& count)
{
  const auto better = [&](ValueT a, ValueT b) { return s.largest ? a > b : a < b; };
  ValueT best = ValueT(float(D::zero_rows_distance));
  if (better(ValueT(float(D::disjoint_distance)), best)) {
    best = ValueT(float(D::disjoint_distance));
  }
  if (accuracy_traits<D, double>::zero_self && better(ValueT(0), best)) {
    best = ValueT(0);
  }
  if (s.exclude_self && s.self_values != nullptr && threadIdx.x == 0) {
    static_cast<ValueT*>(s.self_values)[i] = knn_zero_query_value(p, s, i, i);
  }
  for (std::int64_t j0 = 0; j0 < p.rows_b; j0 += blockDim.x) {
    if (have == s.k && vals[s.k - 1] == best) {
      break;  // uniform: have is, and the list is read after the barrier that last changed it
    }
    const std::int64_t j = j0 + threadIdx.x;
    bool candidate = false;
    if (j < p.rows_b && !(s.exclude_self && j == i)) {
      const ValueT v = knn_zero_query_value(p, s, i, j);
      candidate = knn_beats_list(vals, idx, s, have, v, j);
      if (candidate) {
        knn_append(vals, idx, s, slots, v, j);
      }
    }
    knn_end_round(vals, idx, s, have, count, slots, candidate);
  }
}

/// One block per query row (grid-stride), by the walk (knn_walk_row) or, for a D with a disjoint
/// value whose pairs without a shared column may be skipped (its predicates accept the query row
/// and every index row), by the gates of s.gates: by its products (knn_row_by_products) when they
/// are few beside the index's rows, else a walk that skips those pairs when they are many; an
/// all-zero query row of a D that declares zero_rows_distance, from the index's flags
/// (knn_zero_query_row).
template <class D, class ValueT, class IndexT>
__global__ void __launch_bounds__(cuda_pairwise_policy::intersection_threads)
    knn_fused_kernel(intersection_args<D, ValueT, IndexT> p, knn_fused_select s)
{
  using add = typename D::add_monoid;
  using A = intersection_accumulator_t<D, ValueT>;
  constexpr int N = intersection_args<D, ValueT, IndexT>::N;
  constexpr bool disjoint = accuracy_traits<D, double>::disjoint;
  extern __shared__ unsigned char smem_raw[];
  A* acc = reinterpret_cast<A*>(smem_raw);
  ValueT* vals = reinterpret_cast<ValueT*>(smem_raw + s.acc_bytes);
  std::int64_t* idx = reinterpret_cast<std::int64_t*>(
      smem_raw + s.acc_bytes + ((std::size_t(s.sort_size) * sizeof(ValueT) + 15) / 16) * 16);
  // The slot counter of the candidate buffer. The list length (have) and the number of buffered
  // candidates (count) are kept in registers, identical in every thread: each chunk's candidates
  // are counted by the barrier that ends it (__syncthreads_count), so every flush decision is
  // uniform across the block.
  __shared__ int slots;
  if (threadIdx.x == 0) {
    slots = 0;
  }
  for (std::int64_t e = threadIdx.x; e < p.tile_cols * N; e += blockDim.x) {
    acc[e] = add::template identity<A>();
  }
  [[maybe_unused]] bool index_disjoint = false;
  // Rows by their products: the pairs the tile's memory holds (keys are 32-bit index rows).
  [[maybe_unused]] int by_products_capacity = 0;
  if constexpr (disjoint) {
    index_disjoint = s.disjoint_blocked != nullptr && *s.disjoint_blocked == 0u;
    if (N == 1 && p.rows_b < std::int64_t(0xffffffffu)) {
      by_products_capacity = knn_by_products_capacity<A>(s.acc_bytes);
    }
  }
  __syncthreads();

  for (std::int64_t i = s.row_begin + blockIdx.x; i < s.row_end; i += gridDim.x) {
    if (s.only != nullptr && !s.only[i - s.row_begin]) {
      continue;  // uniform across the block
    }
    if (!launch_progress_row_begins(s.watch)) {
      return;
    }
    int have = 0;
    int count = 0;
    if constexpr (accuracy_traits<D, double>::zero_rows) {
      if (index_disjoint && s.gates.zero_rows && s.zero_queries != nullptr &&
          s.zero_queries[i] != 0) {
        knn_zero_query_row(p, s, i, vals, idx, &slots, have, count);
        knn_count_path(s, &knn_fused_paths::zero_rows);
        knn_finish_row(vals, idx, s, i, have, count, &slots);
        if (threadIdx.x == 0) {
          launch_progress_row_done(s.watch);
        }
        continue;
      }
    }
    bool skipping = false;
    if constexpr (disjoint) {
      if (index_disjoint &&
          p.d.template disjoint_query<double>(p.norms_a[i], accumulator_bounds_of<A>())) {
        __shared__ int offsets[cuda_pairwise_policy::intersection_threads];
        const std::int64_t products = knn_row_products(p, i, offsets);  // uniform
        if constexpr (N == 1) {  // (by_products_capacity is 0 otherwise)
          if (products <= by_products_capacity &&
              p.a_ptr[i + 1] - p.a_ptr[i] <= offset_t(blockDim.x) &&
              knn_fused_gates::passes(s.gates.by_products, products, p.rows_b)) {
            int n = 2;  // a power of two for the sort
            while (n < products) {
              n *= 2;
            }
            knn_row_by_products(p, s, i, int(products), n, offsets, smem_raw, vals, idx, &slots,
                                have, count);
            knn_count_path(s, &knn_fused_paths::by_products);
            knn_finish_row(vals, idx, s, i, have, count, &slots);
            if (threadIdx.x == 0) {
              launch_progress_row_done(s.watch);
            }
            continue;
          }
        }
        skipping = knn_fused_gates::passes(s.gates.walk_skipping, products, p.rows_b);
      }
    }
    if constexpr (disjoint) {
      if (skipping) {
        knn_walk_row<true>(p, s, i, acc, vals, idx, &slots, have, count);
        knn_count_path(s, &knn_fused_paths::walk_skipping);
      }
    }
    if (!skipping) {
      knn_walk_row<false>(p, s, i, acc, vals, idx, &slots, have, count);
      knn_count_path(s, &knn_fused_paths::walk);
    }
    knn_finish_row(vals, idx, s, i, have, count, &slots);
    if (threadIdx.x == 0) {
      launch_progress_row_done(s.watch);
    }
  }
}

#endif  // __CUDACC__

}  // namespace spira::detail
