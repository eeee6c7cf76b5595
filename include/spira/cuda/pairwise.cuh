// spira: the CUDA pairwise engine, out = finalize(A ⊕.⊗ Bᵀ), for any semiring or distance struct.
//
// Include this header from a .cu file to run a user-defined semiring on the GPU; the kernels are
// templates and are instantiated for the user's struct in the user's translation unit:
//
//   #include <spira/cuda/pairwise.cuh>
//   struct my_namm { ... };                                // as for the host engine
//   (spira/ops.hpp) spira::pairwise(cuda_res, a_dev, b_dev, out_dev, my_namm{});
//   spira::pairwise(cuda_res, a_dev, b_dev, out_dev, my_namm{}, spira::pairwise_strategy::hybrid);
//   spira::pairwise(cuda_res, a_dev, b_dev, out_dev, my_namm{}, spira::pairwise_strategy::dense,
//                   std::size_t(64) << 20);  // densified tiles of at most 64 MiB
//
// The built-in metrics are compiled into the library (spira::pairwise_distance with
// cuda_resources, spira/distance.hpp) and need no CUDA compiler in the user's build.
//
// ---- Semantics ---------------------------------------------------------------------------------
// Exactly those of the host engine (spira/ops.hpp, docs/semirings.md): the intersection of the
// stored columns for annihilating semirings, the union for NAMMs; norms from the raw rows, the
// product on the prepared rows (D::prepare); finalize(acc, norms(A_i), norms(B_j), cols).
// Arithmetic: the intersection strategy accumulates sum-kind ⊕ in double where the finalize
// cancels (intersection_sums_in_double, intersection_accumulator_t), forms dot products in double
// and other ⊗ in ValueT with their one-sided NAMM terms in double (intersection_multiply_d); hybrid
// and dense run in the value type ValueT; row norms, NAMM corrections and finalize run in double
// everywhere. Sum-kind ⊕ is accumulated with atomics, whose order varies: float results may differ
// from the host engine (which accumulates in double) in the last bits, and the hybrid and dense
// strategies also between runs; the double accumulators of the intersection strategy make such
// differences rare after rounding but do not exclude them. min / max / or / any results are exact.
//
// ---- Strategies (spira::pairwise_strategy; docs/cuda-engine.md) --------------------------------
//   intersection  the CSC of B (spira::transpose, built once) is walked from the nonzeros of each
//                 row of A; products accumulate with the add monoid's atomic in a shared-memory
//                 tile of output columns, and finalize is fused into the tile's write-out. Work
//                 follows the products that exist: Σ_c nnz(A[:,c]) nnz(B[:,c]). NAMMs with a
//                 sum-kind ⊕ use ⊗(a,b) - ⊗(a,0) - ⊗(0,b) plus per-row corrections (one pass).
//                 One-term NAMMs with a min / max ⊕ (chebyshev) combine the intersection with,
//                 per pair, each row's best one-sided term outside the other row (from 4
//                 precomputed candidates per row and a binary search in the other row; pairs
//                 whose candidates are all shared are finished by one warp per pair).
//                 Not available for NAMMs with another ⊕ (those take `hybrid`).
//   hybrid        the seed paper's load-balanced hybrid CSR+COO kernel (Nolet et al., section 3.3):
//                 a block holds one row (or a column range of a long row) of A in shared memory,
//                 dense when the dimension fits, else in a Murmur-hashed linear-probing table at
//                 <= 50% load; its threads stride over B's nonzeros in COO order with a warp
//                 segmented reduction keyed on B's row and one atomic ⊕ per segment. NAMMs add
//                 the second pass with A and B swapped that skips the columns the first counted.
//                 Works for every semiring; work rows(A) x nnz(B) (+ rows(B) x nnz(A)).
//   dense         for distances whose ⊗ is a product of per-element maps (dot_product_form):
//                 densified row tiles of A and B, one cuBLAS GEMM per tile pair (float32 or
//                 float64, never TF32), finalize over the output tile.
//   automatic     choose_strategy() below, from the shapes, the densities and D's traits, and
//                 for min / max NAMMs from two statistics measured on the device.
//
// Many A against one B (the index tiles of the tiled k-NN graph): detail::pairwise_prepared holds
// what depends on B alone - its norms, prepared values and, for the intersection strategy, its CSC
// with B's NAMM terms or candidates - built once and passed to every call (pairwise_cuda's
// prepared_b); the results are those of calls without it, bit for bit.
//
// Memory: the output, plus O(nnz(A) + nnz(B) + rows) workspace whatever number of columns A and B
// declare (when it exceeds nnz(A) + nnz(B), the columns are first renumbered to the ones either
// operand stores, by a radix sort of the column indices, and finalize still receives the declared
// count: pairwise_context::compress_columns), plus for `hybrid` an accumulator tile of at most
// cuda_pairwise_policy::workspace_bytes when a distance has several accumulator terms, plus for
// `dense` densified tiles (of the used columns) of at most cuda_pairwise_policy::dense_tile_bytes.
// The last argument of spira::pairwise (distance_params::workspace_bytes for the built-in metrics)
// caps both tiles: 0 keeps the defaults, a cap takes min(default, cap), and a cap below one
// minimal tile (workspace_minimum) throws spira::invalid_argument. Every output index is 64-bit:
// outputs beyond 2^31 elements are fine.
#pragma once

#include <spira/cuda/detail/pairwise_context.cuh>
#include <spira/cuda/detail/pairwise_dense.cuh>
#include <spira/cuda/detail/pairwise_hybrid.cuh>
#include <spira/cuda/detail/pairwise_intersection.cuh>
#include <spira/cuda/pairwise_strategy.hpp>

namespace spira {

#if defined(__CUDACC__)

namespace detail {

/// spira::pairwise on the GPU; `cap_name` is the caller's name of the workspace cap, for messages
/// ("workspace_bytes", "params.workspace_bytes"). `check_operands` = false skips the validation of
/// A and B (callers that checked them once for many tiles: the k-NN driver). `prepared_b`, when
/// given, is B prepared once (pairwise_prepared of this b and an equal d) for calls with many A:
/// the call takes what depends on B alone from it instead of computing it again, with the same
/// results bit for bit (see pairwise_prepared).
template <class D, class ValueT, class IndexT>
void pairwise_cuda(const cuda_resources& res, csr_view<ValueT, IndexT> a,
                   csr_view<ValueT, IndexT> b, dense_view<ValueT> out, const D& d,
                   pairwise_strategy strategy, std::size_t workspace_bytes, const char* cap_name,
                   bool check_operands = true,
                   detail::pairwise_prepared<D, ValueT, IndexT>* prepared_b = nullptr)
{
  static_assert(semiring<D, ValueT>,
                "spira::pairwise: D must model spira::semiring (add_monoid, "
                "annihilating, multiply<T>(a, b))");
  detail::require_device_space(a.space, "spira::pairwise", "A");
  detail::require_device_space(b.space, "spira::pairwise", "B");
  detail::require_device_space(out.space, "spira::pairwise", "out");
  detail::expects<dimension_mismatch>(a.cols == b.cols, "spira::pairwise: A has ", a.cols,
                                      " columns but B has ", b.cols);
  detail::expects<dimension_mismatch>(out.rows == a.rows && out.cols == b.rows,
                                      "spira::pairwise: out is ", out.rows, " x ", out.cols,
                                      " but must be rows(A) x rows(B) = ", a.rows, " x ", b.rows);
  detail::expects(out.ld >= out.cols, "spira::pairwise: out.ld = ", out.ld,
                  " is smaller than out.cols = ", out.cols);
  detail::expects(out.data != nullptr || a.rows == 0 || b.rows == 0,
                  "spira::pairwise: out.data is null");
  const pairwise_strategy s = resolve_strategy<D>(a, b, strategy, workspace_bytes);
  detail::check_workspace_cap<D>(a, b, s, workspace_bytes, cap_name);
  detail::device_guard scope(res.device);
  if (check_operands) {
    validate(res, a, csr_check::canonical, "spira::pairwise: A");
    if (!detail::same_matrix(a, b)) {
      validate(res, b, csr_check::canonical, "spira::pairwise: B");
    }
  }
  detail::expects(prepared_b == nullptr || detail::same_matrix(prepared_b->b, b),
                  "spira::pairwise: the prepared B is not the operand B of this call");
  if (a.rows == 0 || b.rows == 0) {
    return;
  }
  detail::pairwise_context<D, ValueT, IndexT> ctx(res, d, a, b, out, prepared_b);
  if constexpr (detail::selection_namm_v<D, ValueT>) {
    if (strategy == pairwise_strategy::automatic) {
      // The fix-up's cost depends on the values: measure it on the intersection setup, which the
      // intersection strategy then reuses (choose_strategy).
      const detail::intersection_setup<D, ValueT, IndexT> setup(ctx);
      pairwise_problem prob{a.rows, b.rows, a.cols, a.nnz, b.nnz, false, false, false};
      prob.selection = true;
      detail::measure_selection(ctx, setup, prob);
      if (choose_strategy(prob) == pairwise_strategy::intersection) {
        detail::run_intersection(ctx, setup);
        return;
      }
    }
  }
  switch (s) {
    case pairwise_strategy::intersection:
      if constexpr (detail::intersection_capable_v<D, ValueT>) {
        detail::run_intersection(ctx);
      }
      break;
    case pairwise_strategy::hybrid:
      detail::run_hybrid(ctx, workspace_bytes);
      break;
    case pairwise_strategy::dense:
      if constexpr (dot_product_form<D>::value) {
        detail::run_dense(ctx, workspace_bytes);
      }
      break;
    case pairwise_strategy::automatic:
      break;  // resolved above
  }
  // Workspace buffers are freed stream-ordered as ctx goes out of scope.
}

}  // namespace detail

/// out(i, j) = finalize(⊕_c ⊗(A[i,c], B[j,c]), norms(A_i), norms(B_j), A.cols) on the GPU, with
/// the semantics of the host spira::pairwise (spira/ops.hpp). A and B: canonical CSR in device
/// memory of res.device with the same number of columns; out: rows(A) x rows(B) in device memory.
/// `strategy` forces a strategy; `workspace_bytes` caps the tiled temporaries (the hybrid
/// accumulator tile of a distance with several terms, the dense strategy's densified tiles) at
/// min(policy default, cap), 0 = the defaults, with the meaning of
/// distance_params::workspace_bytes; a cap below workspace_minimum throws
/// spira::invalid_argument. Queued on res.stream; returns without synchronising except for small
/// host reads of sizes.
template <class D, class ValueT, class IndexT>
void pairwise(const cuda_resources& res, csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b,
              dense_view<ValueT> out, const D& d = {},
              pairwise_strategy strategy = pairwise_strategy::automatic,
              std::size_t workspace_bytes = 0)
{
  detail::pairwise_cuda(res, a, b, out, d, strategy, workspace_bytes, "workspace_bytes");
}

#endif  // __CUDACC__

}  // namespace spira
