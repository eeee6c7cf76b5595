// spira: the hybrid strategy of the CUDA pairwise engine, the seed paper's load-balanced CSR+COO
// kernel: one row part of the held matrix per block in shared memory (dense or a hash table), the
// other matrix streamed in COO order; two passes for NAMMs.
#pragma once

#include <spira/cuda/detail/pairwise_context.cuh>

namespace spira::detail {

#if defined(__CUDACC__)

// ---- the seed paper's load-balanced hybrid CSR+COO kernel
// -------------------------------------------

/// Arguments of one hybrid pass. The held matrix H has one row (part) per block in shared memory;
/// the streamed matrix S is read in COO order, entries [s_begin, s_end). Pass 1: H = A, S = B;
/// pass 2 (NAMMs): H = B, S = A, skipping the columns H stores.
template <class D, class ValueT, class IndexT>
struct hybrid_args {
  static constexpr int N = distance_traits<D, ValueT>::num_terms;
  D d;
  std::int64_t cols;
  const hybrid_part* parts;
  std::int64_t num_parts;
  const IndexT* h_col;
  const ValueT* h_val;
  const IndexT* s_row;
  const IndexT* s_col;
  const ValueT* s_val;
  std::int64_t s_begin, s_end;
  std::int64_t chunk;  ///< streamed entries per block
  ValueT* acc;         ///< accumulator: element (i, j), term t at acc[(i - row0) * ld + j * N + t]
  std::int64_t ld;
  std::int64_t row0;  ///< first row of A in this accumulator tile
  int table_slots;    ///< hash-table slots (a power of two); 0 = the dense layout
};

/// Shared-memory layout of the held row: dense (values[cols], presence bits[cols / 32]) or a hash
/// table (keys[slots] (-1 = empty), values[slots]).
template <class ValueT, class IndexT>
struct held_row {
  IndexT* keys;
  ValueT* values;
  unsigned* bits;
  int slots;

  __device__ void clear(std::int64_t cols, int tid, int threads) const
  {
    if (slots == 0) {
      for (std::int64_t w = tid; w < (cols + 31) / 32; w += threads) {
        bits[w] = 0u;
      }
    } else {
      for (int s = tid; s < slots; s += threads) {
        keys[s] = IndexT(-1);
      }
    }
  }
  __device__ void insert(IndexT c, ValueT v) const
  {
    if (slots == 0) {
      values[c] = v;
      atomicOr(&bits[c / 32], 1u << (c % 32));
      return;
    }
    using W = std::conditional_t<sizeof(IndexT) == 4, unsigned int, unsigned long long>;
    const W empty = W(IndexT(-1)), key = W(c);
    unsigned s = unsigned(murmur_mix(std::uint64_t(c))) & unsigned(slots - 1);
    while (atomicCAS(reinterpret_cast<W*>(&keys[s]), empty, key) != empty) {
      s = (s + 1) & unsigned(slots - 1);
    }
    values[s] = v;
  }
  /// True and the value when column c is stored in the held row.
  __device__ bool find(IndexT c, ValueT& v) const
  {
    if (slots == 0) {
      if (((bits[c / 32] >> (c % 32)) & 1u) == 0u) {
        return false;
      }
      v = values[c];
      return true;
    }
    unsigned s = unsigned(murmur_mix(std::uint64_t(c))) & unsigned(slots - 1);
    while (true) {
      const IndexT k = keys[s];
      if (k == c) {
        v = values[s];
        return true;
      }
      if (k == IndexT(-1)) {
        return false;
      }
      s = (s + 1) & unsigned(slots - 1);
    }
  }
};

/// Grid: x = parts of the held matrix (grid-stride), y = chunks of the streamed entries
/// (grid-stride). Each warp reads 32 consecutive streamed entries at a time; their keys (the
/// streamed rows) are sorted, so a warp-segmented reduction leaves one value per row segment and
/// the segment's first lane applies one atomic ⊕ to the accumulator.
template <class D, class ValueT, class IndexT, bool SecondPass>
__global__ void hybrid_kernel(hybrid_args<D, ValueT, IndexT> p)
{
  using add = typename D::add_monoid;
  constexpr int N = hybrid_args<D, ValueT, IndexT>::N;
  extern __shared__ unsigned char smem_raw[];
  held_row<ValueT, IndexT> h;
  h.slots = p.table_slots;
  if (p.table_slots == 0) {
    h.values = reinterpret_cast<ValueT*>(smem_raw);
    h.bits = reinterpret_cast<unsigned*>(smem_raw + ((p.cols * sizeof(ValueT) + 15) / 16) * 16);
    h.keys = nullptr;
  } else {
    h.values = reinterpret_cast<ValueT*>(smem_raw);
    h.keys = reinterpret_cast<IndexT*>(smem_raw + std::size_t(p.table_slots) * sizeof(ValueT));
    h.bits = nullptr;
  }
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  const std::int64_t chunks = (p.s_end - p.s_begin + p.chunk - 1) / p.chunk;
  const auto none = identity_terms_d<add, ValueT, N>();

  for (std::int64_t pi = blockIdx.x; pi < p.num_parts; pi += gridDim.x) {
    const hybrid_part part = p.parts[pi];
    h.clear(p.cols, threadIdx.x, blockDim.x);
    __syncthreads();
    for (std::int64_t k = part.begin + threadIdx.x; k < part.end; k += blockDim.x) {
      h.insert(p.h_col[k], p.h_val[k]);
    }
    __syncthreads();
    for (std::int64_t ch = blockIdx.y; ch < chunks; ch += gridDim.y) {
      const std::int64_t c_begin = p.s_begin + ch * p.chunk;
      const std::int64_t c_end = c_begin + p.chunk < p.s_end ? c_begin + p.chunk : p.s_end;
      for (std::int64_t base = c_begin + std::int64_t(warp) * 32; base < c_end;
           base += std::int64_t(warps) * 32) {
        const std::int64_t e = base + lane;
        const bool valid = e < c_end;
        std::int64_t key = INT64_MAX;  // past the end: a segment of its own
        terms<ValueT, N> v = none;
        bool contributes = false;
        if (valid) {
          key = p.s_row[e];
          const IndexT c = p.s_col[e];
          if (std::int64_t(c) >= part.col_lo && std::int64_t(c) < part.col_hi) {
            const ValueT s = p.s_val[e];
            ValueT x;
            const bool found = h.find(c, x);
            if constexpr (!SecondPass) {
              // held = A_i, streamed = B: ⊗(a, b) on the intersection, ⊗(0, b) on B's side.
              if (found) {
                v = as_terms(p.d.template multiply<ValueT>(x, s));
                contributes = true;
              } else if constexpr (!D::annihilating) {
                v = as_terms(p.d.template multiply<ValueT>(ValueT(0), s));
                contributes = true;
              }
            } else {
              // held = B_j, streamed = A: ⊗(a, 0) on the columns B_j does not store.
              if (!found) {
                v = as_terms(p.d.template multiply<ValueT>(s, ValueT(0)));
                contributes = true;
              }
            }
          }
        }
        // Segmented reduction: lane l accumulates the lanes l+1.. with its key (keys sorted).
        unsigned any = __ballot_sync(full_warp, contributes);
        if (any == 0u) {
          continue;
        }
        bool has = contributes;
        for (int off = 1; off < 32; off <<= 1) {
          const std::int64_t k2 = __shfl_down_sync(full_warp, key, off);
          const bool h2 = __shfl_down_sync(full_warp, has, off);
          terms<ValueT, N> o;
#pragma unroll
          for (int t = 0; t < N; ++t) {
            o[t] = __shfl_down_sync(full_warp, v[t], off);
          }
          if (lane + off < 32 && k2 == key && h2) {
#pragma unroll
            for (int t = 0; t < N; ++t) {
              v[t] = has ? add{}(v[t], o[t]) : o[t];
            }
            has = true;
          }
        }
        const std::int64_t prev = __shfl_up_sync(full_warp, key, 1);
        const bool leader = valid && (lane == 0 || prev != key);
        if (leader && has) {
          const std::int64_t i = SecondPass ? key : part.row;
          const std::int64_t j = SecondPass ? part.row : key;
          ValueT* dst = p.acc + (i - p.row0) * p.ld + j * N;
#pragma unroll
          for (int t = 0; t < N; ++t) {
            atomic_combine<add>(&dst[t], v[t]);
          }
        }
      }
    }
    __syncthreads();
  }
}

// ---- driver -------------------------------------------------------------------------------------

/// Shared-memory layout of the hybrid kernel for a dimension: dense slots = 0, else the table size.
template <class ValueT, class IndexT>
int hybrid_table_slots(std::int64_t cols)
{
  using policy = cuda_pairwise_policy;
  const std::size_t dense_bytes = ((std::size_t(cols) * sizeof(ValueT) + 15) / 16) * 16 +
                                  std::size_t((cols + 31) / 32) * sizeof(unsigned);
  if (dense_bytes <= policy::hybrid_shared_bytes) {
    return 0;
  }
  int slots = 1;
  while (std::size_t(slots) * 2 * (sizeof(ValueT) + sizeof(IndexT)) <=
         policy::hybrid_shared_bytes) {
    slots *= 2;
  }
  return slots;
}
template <class ValueT, class IndexT>
std::size_t hybrid_shared_bytes(std::int64_t cols, int slots)
{
  if (slots == 0) {
    return ((std::size_t(cols) * sizeof(ValueT) + 15) / 16) * 16 +
           std::size_t((cols + 31) / 32) * sizeof(unsigned);
  }
  return std::size_t(slots) * (sizeof(ValueT) + sizeof(IndexT));
}

/// The hybrid strategy. `workspace_cap` (0 = none) bounds the accumulator tile of a distance with
/// several terms; pairwise() has checked that it holds at least one row of the tile.
template <class D, class ValueT, class IndexT>
void run_hybrid(pairwise_context<D, ValueT, IndexT>& ctx, std::size_t workspace_cap)
{
  using policy = cuda_pairwise_policy;
  using add = typename D::add_monoid;
  constexpr int N = pairwise_context<D, ValueT, IndexT>::N;
  const auto& res = ctx.res;
  const auto& a = ctx.a;
  const auto& b = ctx.b;

  const int slots = hybrid_table_slots<ValueT, IndexT>(a.cols);
  const std::size_t shared = hybrid_shared_bytes<ValueT, IndexT>(a.cols, slots);
  const std::int64_t max_part = slots == 0 ? 0 : slots / 2;  // at most 50% load
  hybrid_partition parts_a =
      partition_rows<IndexT>(res, a.row_ptr, a.col_idx, a.rows, a.cols, max_part);
  hybrid_partition parts_b;
  if constexpr (!D::annihilating) {
    parts_b = partition_rows<IndexT>(res, b.row_ptr, b.col_idx, b.rows, b.cols, max_part);
  }
  // COO row indices of the streamed operands (B in pass 1, A in pass 2).
  buffer<IndexT> rows_b(res, std::size_t(std::max<std::int64_t>(b.nnz, 1)), "COO rows of B");
  expand_row_indices<IndexT><<<row_grid(b.rows, ctx.sms), policy::row_threads, 0, res.stream>>>(
      b.row_ptr, b.rows, rows_b.data());
  SPIRA_CHECK_LAUNCH();
  buffer<IndexT> rows_a;
  if constexpr (!D::annihilating) {
    rows_a = buffer<IndexT>(res, std::size_t(std::max<std::int64_t>(a.nnz, 1)), "COO rows of A");
    expand_row_indices<IndexT><<<row_grid(a.rows, ctx.sms), policy::row_threads, 0, res.stream>>>(
        a.row_ptr, a.rows, rows_a.data());
    SPIRA_CHECK_LAUNCH();
  }
  std::vector<offset_t> a_ptr_host(std::size_t(a.rows) + 1);
  copy(a_ptr_host.data(), memory_space::host, a.row_ptr, memory_space::device, a_ptr_host.size(),
       res);

  // The accumulator: the output itself when it can hold one term in ValueT, else a tile of rows of
  // at most min(policy::workspace_bytes, cap) bytes (at least one row: within a cap, checked by
  // pairwise()).
  const bool in_place = N == 1;
  std::int64_t tile_rows = a.rows;
  buffer<ValueT> workspace;
  if (!in_place) {
    const std::size_t per_row = std::size_t(b.rows) * N * sizeof(ValueT);
    const std::size_t budget = tile_budget(policy::workspace_bytes, workspace_cap);
    tile_rows = std::clamp<std::int64_t>(
        std::int64_t(
            std::min<std::size_t>(budget / std::max<std::size_t>(per_row, 1), std::size_t(a.rows))),
        1, a.rows);
    workspace = buffer<ValueT>(res, std::size_t(tile_rows * b.rows * N), "hybrid accumulator tile");
  }

  const auto launch = [&](auto kernel, const hybrid_args<D, ValueT, IndexT>& args) {
    const std::int64_t stream_n = args.s_end - args.s_begin;
    if (args.num_parts == 0 || stream_n == 0) {
      return;
    }
    const std::int64_t target = std::int64_t(ctx.sms) * policy::hybrid_blocks_per_sm;
    const std::int64_t chunks_wanted =
        std::clamp<std::int64_t>((target + args.num_parts - 1) / args.num_parts, 1, 65535);
    hybrid_args<D, ValueT, IndexT> q = args;
    q.chunk = std::max<std::int64_t>((stream_n + chunks_wanted - 1) / chunks_wanted, 32);
    const std::int64_t chunks = (stream_n + q.chunk - 1) / q.chunk;
    const dim3 grid(unsigned(std::min<std::int64_t>(q.num_parts, std::numeric_limits<int>::max())),
                    unsigned(std::min<std::int64_t>(chunks, 65535)));
    kernel<<<grid, policy::hybrid_threads, shared, res.stream>>>(q);
    SPIRA_CHECK_LAUNCH();
  };

  for (std::int64_t row0 = 0; row0 < a.rows; row0 += tile_rows) {
    const std::int64_t rows = std::min(tile_rows, a.rows - row0);
    ValueT* acc = in_place ? ctx.out.data + row0 * ctx.out.ld : workspace.data();
    const std::int64_t acc_ld = in_place ? ctx.out.ld : b.rows * N;
    fill_identity_kernel<add, ValueT>
        <<<elementwise_grid(rows * b.rows * N, ctx.sms), policy::row_threads, 0, res.stream>>>(
            acc, rows, b.rows * N, acc_ld);
    SPIRA_CHECK_LAUNCH();

    hybrid_args<D, ValueT, IndexT> p{};
    p.d = ctx.d;
    p.cols = a.cols;
    p.acc = acc;
    p.ld = acc_ld;
    p.row0 = row0;
    p.table_slots = slots;
    // Pass 1: the parts of rows [row0, row0 + rows) of A against every nonzero of B.
    const std::int64_t part0 = parts_a.row_part_offset[std::size_t(row0)];
    p.parts = parts_a.parts.data() + part0;
    p.num_parts = parts_a.row_part_offset[std::size_t(row0 + rows)] - part0;
    p.h_col = a.col_idx;
    p.h_val = a.values;
    p.s_row = rows_b.data();
    p.s_col = b.col_idx;
    p.s_val = b.values;
    p.s_begin = 0;
    p.s_end = b.nnz;
    launch(hybrid_kernel<D, ValueT, IndexT, false>, p);
    if constexpr (!D::annihilating) {
      // Pass 2: every part of B against the nonzeros of rows [row0, row0 + rows) of A.
      p.parts = parts_b.parts.data();
      p.num_parts = parts_b.row_part_offset.back();
      p.h_col = b.col_idx;
      p.h_val = b.values;
      p.s_row = rows_a.data();
      p.s_col = a.col_idx;
      p.s_val = a.values;
      p.s_begin = a_ptr_host[std::size_t(row0)];
      p.s_end = a_ptr_host[std::size_t(row0 + rows)];
      launch(hybrid_kernel<D, ValueT, IndexT, true>, p);
    }
    // A one-term semiring without finalize or guard already holds its result in the output.
    if (!(in_place && !distance_traits<D, double>::has_finalize &&
          !accuracy_traits<D, double>::guarded)) {
      ctx.finalize_tile(acc, acc_ld, row0, rows);
    }
  }
  // The workspace and the partitions are released stream-ordered when they go out of scope.
}

#endif  // __CUDACC__

}  // namespace spira::detail
