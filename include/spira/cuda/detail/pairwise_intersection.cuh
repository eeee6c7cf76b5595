// spira: the intersection strategy of the CUDA pairwise engine: one block per row of A walks the
// CSC of B and accumulates the products that exist in a shared-memory tile of output columns.
#pragma once

#include <spira/cuda/detail/pairwise_common.cuh>
#include <spira/cuda/detail/pairwise_selection.cuh>

#include <memory>
#include <optional>

namespace spira::detail {

#if defined(__CUDACC__)

// ---- intersection through the CSC of B
// -------------------------------------------------------------

/// A pair of a selection NAMM whose fix-up needs a full row scan (all K candidates of a row are
/// stored by the other row): sides bit 0 = row i of A against row j of B, bit 1 = row j of B
/// against row i of A. Meanwhile the output holds the pair's raw ⊕ without the scanned sides.
struct selection_fallback {
  std::int64_t i, j;
  int sides;
};

/// Arguments of the intersection kernel (device pointers).
template <class D, class V, class I>
struct intersection_args {
  using traits = distance_traits<D, double>;
  using norm_values = typename traits::norm_values;
  static constexpr int N = distance_traits<D, V>::num_terms;
  D d;
  std::int64_t rows_a, rows_b;
  std::int64_t cols;  ///< columns of the operands as the kernels see them (renumbered)
  std::int64_t dim;   ///< the declared column count, for finalize
  const offset_t* a_ptr;
  const I* a_col;
  const V* a_val;
  const offset_t* bt_ptr;  ///< CSC of B: column c holds the rows j of B (sorted) with their values
  const I* bt_row;
  const V* bt_val;
  const norm_values* norms_a;
  const norm_values* norms_b;
  const terms<double, N>* corr_a;  ///< NAMM corrections (nullptr for annihilating semirings)
  const terms<double, N>* corr_b;
  /// Sum NAMMs: ⊗(0, b) in double for every entry of the CSC of B (nullptr otherwise).
  const terms<double, N>* bt_side;
  const offset_t* b_ptr;  ///< B's rows (CSR)
  const I* b_col;
  const V* b_val;
  // Selection NAMMs only (nullptr otherwise): K candidates per row of A and of B.
  const I* top_a_col;
  const V* top_a_val;
  const I* top_b_col;
  const V* top_b_val;
  V* out;
  std::int64_t ld;
  std::int64_t tile_cols;  ///< output columns per shared-memory tile
  // Selection NAMMs in spira::pairwise (nullptr otherwise): pairs left to the fallback kernel.
  selection_fallback* fallback;
  unsigned long long* fallback_count;
  std::int64_t fallback_capacity;
};

/// The accumulator of the intersection kernel: double for sum ⊕ (intersection_sums_in_double),
/// V for selections (min, max, custom) and for dot products whose finalize does not cancel.
/// Sums feed cancelling finalizes: a NAMM's union is intersection + per-row corrections, and the
/// expansions (euclidean, hellinger, correlation...) subtract the dot from the norms, which are
/// computed in double. For dot-product-form distances the products are formed in the accumulator
/// type (double: exact for float inputs), so for two equal rows the expansion cancels to rounding
/// of the double sums and, e.g., euclidean(x, x) is 0 to about 1e-8 instead of the square root of
/// float rounding (about 1e-3).
template <class D, class V>
using intersection_accumulator_t =
    std::conditional_t<intersection_sums_in_double<D>::value, double, V>;

/// One product of the intersection kernel, before a NAMM's subtraction of the one-sided terms:
/// for a dot-product form, ⊗ in the accumulator type A (double: exact for float inputs);
/// otherwise ⊗ in V, widened to A (a transcendental ⊗ such as jensenshannon's costs several
/// times more in double, and its rounding in V is relative to the term, not to the cancelling
/// one-sided terms, which stay in double).
template <class D, class V, class A>
__device__ inline terms<A, distance_traits<D, V>::num_terms> intersection_multiply_d(const D& d,
                                                                                     V a, V b)
{
  constexpr int N = distance_traits<D, V>::num_terms;
  terms<A, N> r;
  if constexpr (dot_product_form<D>::value) {
    const auto p = as_terms(d.template multiply<A>(A(a), A(b)));
#pragma unroll
    for (int t = 0; t < N; ++t) {
      r[t] = A(p[t]);
    }
  } else {
    const auto p = as_terms(d.template multiply<V>(a, b));
#pragma unroll
    for (int t = 0; t < N; ++t) {
      r[t] = A(p[t]);
    }
  }
  return r;
}

/// Accumulates ⊕ over the shared columns of row i of A and rows [j0, j0 + width) of B into the
/// block's shared accumulator acc (width x N terms), which the caller has set to e⊕: each warp
/// takes nonzeros (c, a) of row i and its lanes walk the part of column c of B that falls in the
/// tile (its start found by binary search when j0 > 0; the walk stops at the tile's end), loading
/// intersection_unroll entries per lane before combining ⊗ into acc with the monoid's
/// shared-memory atomic. For a NAMM with a sum ⊕ the combined term is ⊗(a, b) - ⊗(a, 0) - ⊗(0, b)
/// (the one-sided terms in double: ⊗(a, 0) once per nonzero of A, ⊗(0, b) from bt_side). The
/// whole block calls it; the caller synchronises before reading acc.
template <class D, class V, class I>
__device__ void intersection_accumulate(const intersection_args<D, V, I>& p, std::int64_t i,
                                        std::int64_t j0, std::int64_t width,
                                        intersection_accumulator_t<D, V>* acc)
{
  using add = typename D::add_monoid;
  using A = intersection_accumulator_t<D, V>;
  constexpr int N = intersection_args<D, V, I>::N;
  constexpr int U = cuda_pairwise_policy::intersection_unroll;
  constexpr bool sum_namm = sum_namm_v<D, V>;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  const offset_t a_begin = p.a_ptr[i], a_end = p.a_ptr[i + 1];
  for (offset_t k = a_begin + warp; k < a_end; k += warps) {
    const std::int64_t c = p.a_col[k];
    const V x = p.a_val[k];
    offset_t lo = p.bt_ptr[c];
    const offset_t hi = p.bt_ptr[c + 1];
    if (lo == hi) {
      continue;
    }
    if (j0 > 0) {
      // The first entry of column c with a row >= j0 (rows are sorted within a column).
      offset_t h = hi;
      while (lo < h) {
        const offset_t m = lo + (h - lo) / 2;
        if (std::int64_t(p.bt_row[m]) < j0) {
          lo = m + 1;
        } else {
          h = m;
        }
      }
    }
    [[maybe_unused]] terms<double, N> side_a;
    if constexpr (sum_namm) {
      side_a = one_sided_d<D, true>(p.d, x);
    }
    for (offset_t q0 = lo; q0 < hi; q0 += offset_t(32) * U) {
      I row[U];
      V val[U];
      [[maybe_unused]] terms<double, N> side_b[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const offset_t q = q0 + u * 32 + lane;
        const bool in = q < hi;
        row[u] = in ? p.bt_row[q] : I(0);
        val[u] = in ? p.bt_val[q] : V(0);
        if constexpr (sum_namm) {
          if (in) {
            side_b[u] = p.bt_side[q];
          }
        }
      }
      bool past = false;  // this lane reached the end of the column or of the tile
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const offset_t q = q0 + u * 32 + lane;
        const std::int64_t j = std::int64_t(row[u]) - j0;
        if (q >= hi || j >= width) {
          past = true;
          continue;
        }
        auto prod = intersection_multiply_d<D, V, A>(p.d, x, val[u]);
        if constexpr (sum_namm) {
#pragma unroll
          for (int t = 0; t < N; ++t) {
            prod[t] = A((double(prod[t]) - side_a[t]) - side_b[u][t]);
          }
        }
#pragma unroll
        for (int t = 0; t < N; ++t) {
          atomic_combine<add>(&acc[j * N + t], prod[t]);
        }
      }
      // Entries are sorted by row: once a lane is past the tile, every later round is too.
      if (__any_sync(full_warp, past)) {
        break;
      }
    }
  }
}

/// The value of pair (i, j) from its accumulated terms `a`: the finalize of D, with the NAMM
/// corrections of a sum ⊕ or, for a selection ⊕, each row's best entry outside the other row.
template <class D, class V, class I>
__device__ V
intersection_finalize(const intersection_args<D, V, I>& p, std::int64_t i, std::int64_t j,
                      terms<intersection_accumulator_t<D, V>, intersection_args<D, V, I>::N> a)
{
  using add = typename D::add_monoid;
  constexpr int N = intersection_args<D, V, I>::N;
  if constexpr (sum_namm_v<D, V> || accuracy_traits<D, double>::guarded) {
    const bool corrected = sum_namm_v<D, V>;
    return V(finalize_pair_device(
        p.d, a, p.norms_a[i], p.norms_b[j], p.dim, corrected ? &p.corr_a[i] : nullptr,
        corrected ? &p.corr_b[j] : nullptr, csr_rows<V, I>{p.a_ptr, p.a_col, p.a_val}, i,
        csr_rows<V, I>{p.b_ptr, p.b_col, p.b_val}, j));
  } else {
    if constexpr (selection_namm_v<D, V>) {
      // The union: the intersection's ⊕ and each row's best entry outside the other row.
      constexpr int K = selection_candidates;
      const offset_t a_begin = p.a_ptr[i], a_n = p.a_ptr[i + 1] - a_begin;
      const offset_t b_begin = p.b_ptr[j], b_n = p.b_ptr[j + 1] - b_begin;
      const V from_a = best_outside<D, V, I, true>(p.d, p.top_a_col + i * K, p.top_a_val + i * K,
                                                   p.a_col + a_begin, p.a_val + a_begin, a_n,
                                                   p.b_col + b_begin, b_n);
      const V from_b = best_outside<D, V, I, false>(p.d, p.top_b_col + j * K, p.top_b_val + j * K,
                                                    p.b_col + b_begin, p.b_val + b_begin, b_n,
                                                    p.a_col + a_begin, a_n);
      a[0] = add{}(add{}(a[0], from_a), from_b);
    }
    return V(finalize_device(p.d, a, p.norms_a[i], p.norms_b[j], p.dim,
                             static_cast<const terms<double, N>*>(nullptr)));
  }
}

/// intersection_finalize for a caller that evaluates untrusted pairs itself (the fused k-NN):
/// for a guarded D the fast value and whether the guard trusts it (trusted_pair_device), so the
/// kernel holds no direct evaluation; for other distances intersection_finalize, always trusted.
template <class D, class V, class I>
__device__ double intersection_fast_value(
    const intersection_args<D, V, I>& p, std::int64_t i, std::int64_t j,
    terms<intersection_accumulator_t<D, V>, intersection_args<D, V, I>::N> a, bool& trusted)
{
  if constexpr (accuracy_traits<D, double>::guarded) {
    const bool corrected = sum_namm_v<D, V>;
    return trusted_pair_device(p.d, a, p.norms_a[i], p.norms_b[j], p.dim,
                               corrected ? &p.corr_a[i] : nullptr,
                               corrected ? &p.corr_b[j] : nullptr, trusted);
  } else {
    trusted = true;
    return double(intersection_finalize(p, i, j, a));
  }
}

/// The direct value of pair (i, j) of the operands of p (detail::direct_value in double).
template <class D, class V, class I>
__device__ double intersection_direct_value(const intersection_args<D, V, I>& p, std::int64_t i,
                                            std::int64_t j)
{
  return detail::direct_value<D, double>(p.d, csr_rows<V, I>{p.a_ptr, p.a_col, p.a_val}[i],
                                         csr_rows<V, I>{p.b_ptr, p.b_col, p.b_val}[j], p.norms_a[i],
                                         p.norms_b[j], p.dim);
}

/// Writes pair (i, j) to *dst: intersection_finalize, except for a selection NAMM with a fallback
/// list (spira::pairwise), where a pair whose fix-up needs a row scan stores its raw ⊕ and is
/// queued for selection_fallback_kernel (one warp per pair instead of one thread scanning a long
/// row); when the list is full the thread scans itself.
template <class D, class V, class I>
__device__ inline void intersection_store(
    const intersection_args<D, V, I>& p, std::int64_t i, std::int64_t j,
    terms<intersection_accumulator_t<D, V>, intersection_args<D, V, I>::N> a, V* dst)
{
  if constexpr (selection_namm_v<D, V>) {
    if (p.fallback != nullptr) {
      using add = typename D::add_monoid;
      constexpr int K = selection_candidates;
      const offset_t a_begin = p.a_ptr[i], a_n = p.a_ptr[i + 1] - a_begin;
      const offset_t b_begin = p.b_ptr[j], b_n = p.b_ptr[j + 1] - b_begin;
      V from_a, from_b;
      const bool done_a = candidates_outside<D, V, I>(p.top_a_col + i * K, p.top_a_val + i * K, a_n,
                                                      p.b_col + b_begin, b_n, from_a);
      const bool done_b = candidates_outside<D, V, I>(p.top_b_col + j * K, p.top_b_val + j * K, b_n,
                                                      p.a_col + a_begin, a_n, from_b);
      a[0] = add{}(add{}(a[0], from_a), from_b);
      if (!(done_a && done_b)) {
        const unsigned long long slot = atomicAdd(p.fallback_count, 1ull);
        if (slot < (unsigned long long)p.fallback_capacity) {
          p.fallback[slot] = selection_fallback{i, j, (done_a ? 0 : 1) | (done_b ? 0 : 2)};
          *dst = V(a[0]);
          return;
        }
        if (!done_a) {
          a[0] = add{}(a[0], scan_outside<D, V, I, true>(p.d, p.a_col + a_begin, p.a_val + a_begin,
                                                         0, a_n, 1, p.b_col + b_begin, b_n));
        }
        if (!done_b) {
          a[0] = add{}(a[0], scan_outside<D, V, I, false>(p.d, p.b_col + b_begin, p.b_val + b_begin,
                                                          0, b_n, 1, p.a_col + a_begin, a_n));
        }
      }
      *dst = V(finalize_device(p.d, a, p.norms_a[i], p.norms_b[j], p.dim,
                               static_cast<const terms<double, 1>*>(nullptr)));
      return;
    }
  }
  *dst = intersection_finalize(p, i, j, a);
}

/// Block (x: rows of A, grid-stride; y: tiles of tile_cols output columns, grid-stride). For row i
/// and the tile [j0, j1): the shared accumulator starts at e⊕, intersection_accumulate fills it and
/// the tile is finalized straight into the output (intersection_store).
template <class D, class V, class I>
__global__ void intersection_kernel(intersection_args<D, V, I> p)
{
  using add = typename D::add_monoid;
  using A = intersection_accumulator_t<D, V>;
  constexpr int N = intersection_args<D, V, I>::N;
  extern __shared__ unsigned char smem_raw[];
  A* acc = reinterpret_cast<A*>(smem_raw);
  const std::int64_t tiles = (p.rows_b + p.tile_cols - 1) / p.tile_cols;
  for (std::int64_t tile = blockIdx.y; tile < tiles; tile += gridDim.y) {
    const std::int64_t j0 = tile * p.tile_cols;
    const std::int64_t width = p.tile_cols < p.rows_b - j0 ? p.tile_cols : p.rows_b - j0;
    for (std::int64_t i = blockIdx.x; i < p.rows_a; i += gridDim.x) {
      for (std::int64_t e = threadIdx.x; e < width * N; e += blockDim.x) {
        acc[e] = add::template identity<A>();
      }
      __syncthreads();
      intersection_accumulate(p, i, j0, width, acc);
      __syncthreads();
      V* out_row = p.out + i * p.ld + j0;
      for (std::int64_t jj = threadIdx.x; jj < width; jj += blockDim.x) {
        terms<A, N> a;
#pragma unroll
        for (int t = 0; t < N; ++t) {
          a[t] = acc[jj * N + t];
        }
        intersection_store(p, i, j0 + jj, a, out_row + jj);
      }
      __syncthreads();
    }
  }
}

/// The pairs the intersection kernel left to it (selection NAMMs): one warp per pair scans the
/// row(s) whose K candidates were all shared, reduces with ⊕, combines with the raw ⊕ stored in
/// the output and writes the finalized value.
template <class D, class V, class I>
__global__ void selection_fallback_kernel(intersection_args<D, V, I> p)
{
  using add = typename D::add_monoid;
  const unsigned long long stored = *p.fallback_count;
  const std::int64_t n =
      stored < (unsigned long long)p.fallback_capacity ? std::int64_t(stored) : p.fallback_capacity;
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t e = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; e < n;
       e += warps) {
    const selection_fallback f = p.fallback[e];
    const offset_t a_begin = p.a_ptr[f.i], a_n = p.a_ptr[f.i + 1] - a_begin;
    const offset_t b_begin = p.b_ptr[f.j], b_n = p.b_ptr[f.j + 1] - b_begin;
    V best = add::template identity<V>();
    if (f.sides & 1) {
      best = add{}(best, scan_outside<D, V, I, true>(p.d, p.a_col + a_begin, p.a_val + a_begin,
                                                     lane, a_n, 32, p.b_col + b_begin, b_n));
    }
    if (f.sides & 2) {
      best = add{}(best, scan_outside<D, V, I, false>(p.d, p.b_col + b_begin, p.b_val + b_begin,
                                                      lane, b_n, 32, p.a_col + a_begin, a_n));
    }
    best = warp_reduce<add, V, 1>(terms<V, 1>{{best}})[0];
    if (lane == 0) {
      V* dst = p.out + f.i * p.ld + f.j;
      const terms<V, 1> a{{add{}(*dst, best)}};
      *dst = V(finalize_device(p.d, a, p.norms_a[f.i], p.norms_b[f.j], p.dim,
                               static_cast<const terms<double, 1>*>(nullptr)));
    }
  }
}

// ---- setup and driver ---------------------------------------------------------------------------

/// side[q] = ⊗(0, values[q]) in double, for every entry of the CSC of B (sum NAMMs).
template <class D, class V, int N>
__global__ void right_sides_kernel(D d, const V* values, std::int64_t n, terms<double, N>* side)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t q = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; q < n; q += stride) {
    side[q] = one_sided_d<D, false>(d, values[q]);
  }
}

/// counts[c] += 1 for every stored column c (the caller zeroes counts).
template <class I>
__global__ void column_counts_kernel(const I* col_idx, std::int64_t nnz, unsigned long long* counts)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < nnz; k += stride) {
    atomicAdd(&counts[col_idx[k]], 1ull);
  }
}

/// stats[0] += Σ_c nnz(A[:,c]) nnz(B[:,c]) (counts_a == nullptr: A is B) and stats[1] += the
/// search steps of the selection fix-up over `samples` pairs: all pairs in order when there are
/// at most `samples`, else pairs drawn by a fixed hash of the sample index (deterministic). A row
/// whose K candidates are all stored by the other row costs deg x log2(2 + other degree).
template <class D, class V, class I>
__global__ void selection_statistics_kernel(intersection_args<D, V, I> p,
                                            const unsigned long long* counts_a,
                                            std::int64_t samples, double* stats)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t tid = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  double products = 0, steps = 0;
  for (std::int64_t c = tid; c < p.cols; c += stride) {
    const double nb = double(p.bt_ptr[c + 1] - p.bt_ptr[c]);
    products += (counts_a == nullptr ? nb : double(counts_a[c])) * nb;
  }
  constexpr int K = selection_candidates;
  const bool all_pairs = double(p.rows_a) * double(p.rows_b) <= double(samples);
  for (std::int64_t s = tid; s < samples; s += stride) {
    std::int64_t i, j;
    if (all_pairs) {
      if (s >= p.rows_a * p.rows_b) {
        break;
      }
      i = s / p.rows_b;
      j = s % p.rows_b;
    } else {
      i = std::int64_t(murmur_mix(std::uint64_t(2 * s + 1)) % std::uint64_t(p.rows_a));
      j = std::int64_t(murmur_mix(std::uint64_t(2 * s + 2)) % std::uint64_t(p.rows_b));
    }
    const offset_t a_begin = p.a_ptr[i], a_n = p.a_ptr[i + 1] - a_begin;
    const offset_t b_begin = p.b_ptr[j], b_n = p.b_ptr[j + 1] - b_begin;
    V unused;
    if (!candidates_outside<D, V, I>(p.top_a_col + i * K, p.top_a_val + i * K, a_n,
                                     p.b_col + b_begin, b_n, unused)) {
      steps += double(a_n) * log2(2.0 + double(b_n));
    }
    if (!candidates_outside<D, V, I>(p.top_b_col + j * K, p.top_b_val + j * K, b_n,
                                     p.a_col + a_begin, a_n, unused)) {
      steps += double(b_n) * log2(2.0 + double(a_n));
    }
  }
  auto r = warp_reduce<plus_monoid, double, 2>(terms<double, 2>{{products, steps}});
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&stats[0], r[0]);
    atomicAdd(&stats[1], r[1]);
  }
}

/// col, val = the K selection candidates of every row of m (row_candidates_kernel; Left: m is A).
template <class D, class V, class I, bool Left>
void selection_candidates_of(pairwise_context<D, V, I>& ctx, csr_view<V, I> m, buffer<I>& col,
                             buffer<V>& val)
{
  const std::size_t n = std::size_t(std::max<std::int64_t>(m.rows, 1)) * selection_candidates;
  col = buffer<I>(ctx.res, n, "selection candidates (columns)");
  val = buffer<V>(ctx.res, n, "selection candidates (values)");
  row_candidates_kernel<D, V, I, Left>
      <<<row_grid(m.rows, ctx.sms), cuda_pairwise_policy::row_threads, 0, ctx.res.stream>>>(
          ctx.d, m.row_ptr, m.col_idx, m.values, m.rows, col.data(), val.data());
  SPIRA_CHECK_LAUNCH();
}

/// What the intersection kernels read of B alone: its CSC, and its NAMM corrections and one-sided
/// terms (sum ⊕) or selection candidates (min / max ⊕). Built from ctx.b (B as ⊗ sees it, over the
/// context's columns) for one call, or once for a prepared B (pairwise_prepared), which keeps it
/// for every call on B's declared columns.
template <class D, class V, class I>
struct intersection_b_side {
  static constexpr int N = pairwise_context<D, V, I>::N;
  csr_matrix<V, I> bt;
  buffer<terms<double, N>> corr_b, bt_side;
  buffer<I> top_b_col;
  buffer<V> top_b_val;

  // B was validated by the caller: its transpose skips the second validation (a device round
  // trip).
  explicit intersection_b_side(pairwise_context<D, V, I>& ctx)
      : bt(transpose_validated(ctx.res, ctx.b))
  {
    if constexpr (sum_namm_v<D, V>) {
      corr_b = ctx.template corrections<false>(ctx.b);
      bt_side = buffer<terms<double, N>>(ctx.res, std::size_t(std::max<std::int64_t>(bt.nnz(), 1)),
                                         "one-sided terms of B");
      if (bt.nnz() > 0) {
        right_sides_kernel<D, V, N>
            <<<elementwise_grid(bt.nnz(), ctx.sms), cuda_pairwise_policy::row_threads, 0,
               ctx.res.stream>>>(ctx.d, bt.values(), bt.nnz(), bt_side.data());
        SPIRA_CHECK_LAUNCH();
      }
    }
    if constexpr (selection_namm_v<D, V>) {
      selection_candidates_of<D, V, I, false>(ctx, ctx.b, top_b_col, top_b_val);
    }
  }

  /// Bytes of device memory held.
  [[nodiscard]] std::size_t device_bytes() const
  {
    return std::size_t(bt.nnz()) * (sizeof(V) + sizeof(I)) +
           std::size_t(bt.rows() + 1) * sizeof(offset_t) +
           (corr_b.size() + bt_side.size()) * sizeof(terms<double, N>) +
           top_b_col.size() * sizeof(I) + top_b_val.size() * sizeof(V);
  }
};

/// What the intersection kernels read besides A and B: B's part (intersection_b_side: its own, or
/// the prepared B's where ctx.b_side_cache points to it, built there on first use) and A's NAMM
/// corrections or selection candidates, gathered in `args` (out and ld left for the caller). Built
/// once per (A, B) pair; the buffers live as long as the setup (a prepared B's, as long as it).
template <class D, class V, class I>
struct intersection_setup {
  static constexpr int N = pairwise_context<D, V, I>::N;
  std::optional<intersection_b_side<D, V, I>> own_b;  ///< B's part when B is not prepared
  buffer<terms<double, N>> corr_a;
  buffer<I> top_a_col;
  buffer<V> top_a_val;
  intersection_args<D, V, I> args{};

  explicit intersection_setup(pairwise_context<D, V, I>& ctx)
  {
    using policy = cuda_pairwise_policy;
    const intersection_b_side<D, V, I>& side = b_side(ctx);
    intersection_args<D, V, I>& p = args;
    p.d = ctx.d;
    p.rows_a = ctx.a.rows;
    p.rows_b = ctx.b.rows;
    p.cols = ctx.a.cols;
    p.dim = ctx.dim;
    p.a_ptr = ctx.a.row_ptr;
    p.a_col = ctx.a.col_idx;
    p.a_val = ctx.a.values;
    p.bt_ptr = side.bt.row_ptr();
    p.bt_row = side.bt.col_idx();
    p.bt_val = side.bt.values();
    p.norms_a = ctx.norms_a.data();
    p.norms_b = ctx.b_norms();
    p.b_ptr = ctx.b.row_ptr;  // B's rows: the selection fix-up and the accuracy guard read them
    p.b_col = ctx.b.col_idx;
    p.b_val = ctx.b.values;
    if constexpr (sum_namm_v<D, V>) {
      corr_a = ctx.template corrections<true>(ctx.a);
      p.corr_a = corr_a.data();
      p.corr_b = side.corr_b.data();
      p.bt_side = side.bt_side.data();
    }
    if constexpr (selection_namm_v<D, V>) {
      selection_candidates_of<D, V, I, true>(ctx, ctx.a, top_a_col, top_a_val);
      p.top_a_col = top_a_col.data();
      p.top_a_val = top_a_val.data();
      p.top_b_col = side.top_b_col.data();
      p.top_b_val = side.top_b_val.data();
    }
    using A = intersection_accumulator_t<D, V>;
    p.tile_cols = std::int64_t(policy::intersection_shared_bytes / (sizeof(A) * N));
    p.tile_cols = std::max<std::int64_t>(std::min(p.tile_cols, ctx.b.rows), 1);
  }
  /// Shared memory of the accumulator tile.
  [[nodiscard]] std::size_t accumulator_bytes() const
  {
    return std::size_t(args.tile_cols) * N * sizeof(intersection_accumulator_t<D, V>);
  }

 private:
  const intersection_b_side<D, V, I>& b_side(pairwise_context<D, V, I>& ctx)
  {
    if (ctx.b_side_cache == nullptr) {
      return own_b.emplace(ctx);
    }
    if (*ctx.b_side_cache == nullptr) {
      *ctx.b_side_cache = std::make_unique<intersection_b_side<D, V, I>>(ctx);
    }
    return **ctx.b_side_cache;
  }
};

/// Fills prob.products and prob.selection_scan (see pairwise_problem) for a selection NAMM from
/// its intersection setup: one column count of A (unless A is B), one statistics kernel over the
/// columns and a sample of pairs, and one read of 16 bytes.
template <class D, class V, class I>
void measure_selection(pairwise_context<D, V, I>& ctx, const intersection_setup<D, V, I>& setup,
                       pairwise_problem& prob)
{
  using policy = cuda_pairwise_policy;
  const auto& res = ctx.res;
  buffer<unsigned long long> counts_a;
  if (!same_matrix(ctx.a, ctx.b)) {
    counts_a = buffer<unsigned long long>(res, std::size_t(std::max<std::int64_t>(ctx.a.cols, 1)),
                                          "column counts of A");
    SPIRA_CUDA_TRY(cudaMemsetAsync(counts_a.data(), 0, counts_a.size() * sizeof(unsigned long long),
                                   res.stream));
    if (ctx.a.nnz > 0) {
      column_counts_kernel<I>
          <<<elementwise_grid(ctx.a.nnz, ctx.sms), policy::row_threads, 0, res.stream>>>(
              ctx.a.col_idx, ctx.a.nnz, counts_a.data());
      SPIRA_CHECK_LAUNCH();
    }
  }
  buffer<double> stats(res, 2, "selection statistics");
  SPIRA_CUDA_TRY(cudaMemsetAsync(stats.data(), 0, 2 * sizeof(double), res.stream));
  const std::int64_t samples = policy::selection_samples;
  selection_statistics_kernel<D, V, I><<<elementwise_grid(std::max(samples, ctx.a.cols), ctx.sms),
                                         policy::row_threads, 0, res.stream>>>(
      setup.args, counts_a.size() > 0 ? counts_a.data() : nullptr, samples, stats.data());
  SPIRA_CHECK_LAUNCH();
  double host[2] = {0, 0};
  copy(host, memory_space::host, stats.data(), memory_space::device, 2, res);
  const double pairs = double(ctx.a.rows) * double(ctx.b.rows);
  prob.products = host[0];
  prob.selection_scan = host[1] * (pairs / std::min(pairs, double(samples)));
}

/// The intersection strategy with a prepared setup: the kernel over (rows of A) x (tiles of B's
/// rows), then for selection NAMMs the warp-per-pair fallback of the pairs it queued.
template <class D, class V, class I>
void run_intersection(pairwise_context<D, V, I>& ctx, const intersection_setup<D, V, I>& setup)
{
  using policy = cuda_pairwise_policy;
  const auto& res = ctx.res;
  intersection_args<D, V, I> p = setup.args;
  p.out = ctx.out.data;
  p.ld = ctx.out.ld;
  buffer<selection_fallback> fallback;
  buffer<unsigned long long> fallback_count;
  if constexpr (selection_namm_v<D, V>) {
    const double pairs = double(ctx.a.rows) * double(ctx.b.rows);
    p.fallback_capacity = std::int64_t(std::min(
        pairs, double(std::max(ctx.a.nnz + ctx.b.nnz, policy::selection_fallback_min_capacity))));
    fallback =
        buffer<selection_fallback>(res, std::size_t(std::max<std::int64_t>(p.fallback_capacity, 1)),
                                   "selection fallback pairs");
    fallback_count = buffer<unsigned long long>(res, 1, "selection fallback count");
    SPIRA_CUDA_TRY(
        cudaMemsetAsync(fallback_count.data(), 0, sizeof(unsigned long long), res.stream));
    p.fallback = fallback.data();
    p.fallback_count = fallback_count.data();
  }
  const std::int64_t tiles = (ctx.b.rows + p.tile_cols - 1) / p.tile_cols;
  const dim3 grid(unsigned(std::min<std::int64_t>(ctx.a.rows, std::numeric_limits<int>::max())),
                  unsigned(std::min<std::int64_t>(tiles, 65535)));
  intersection_kernel<D, V, I>
      <<<grid, policy::intersection_threads, setup.accumulator_bytes(), res.stream>>>(p);
  SPIRA_CHECK_LAUNCH();
  if constexpr (selection_namm_v<D, V>) {
    // At most the list's capacity; the kernel reads the count on the device (no host round trip).
    const std::int64_t most = p.fallback_capacity;
    selection_fallback_kernel<D, V, I>
        <<<row_grid(most, ctx.sms), policy::row_threads, 0, res.stream>>>(p);
    SPIRA_CHECK_LAUNCH();
  }
}

template <class D, class V, class I>
void run_intersection(pairwise_context<D, V, I>& ctx)
{
  const intersection_setup<D, V, I> setup(ctx);
  run_intersection(ctx, setup);
}

#endif  // __CUDACC__

}  // namespace spira::detail
