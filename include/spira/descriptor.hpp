// spira: the descriptor and accumulator arguments shared by the GraphBLAS-style operations (mxm,
// the element-wise operations, apply, select, transpose, extract): what GrB_Descriptor and the
// accum argument say in the GraphBLAS C API, by name.
//
// Every such operation computes a result T and writes it into C under the mask M:
//   Z = T without an accumulator; with one, Z = C ∪ T where (i, j) in both is accum(C[i,j],
//   T[i,j]); where the mask allows (i, j), C[i,j] = Z[i,j] (deleted where Z has no entry);
//   elsewhere C keeps its entry, or loses it with `replace`. The mask allows (i, j) where M stores
//   a nonzero value (any stored value with `structural_mask`), or the opposite with
//   `complement_mask`; without a mask every position is allowed (none with `complement_mask`).
// T holds the value type, as GraphBLAS's T does: each of its values is computed in double and
// rounded to the value type once, and an accumulator reads that rounded value (accum runs in
// double, and Z is rounded once more), whichever backend and path computed T.
#pragma once

namespace spira {

/// The descriptor of a GraphBLAS-style operation (GrB_Descriptor's fields, by name).
struct descriptor {
  bool transpose_a = false;      ///< use Aᵀ, the first input (GrB_INP0 = GrB_TRAN)
  bool transpose_b = false;      ///< use Bᵀ, the second input (GrB_INP1 = GrB_TRAN)
  bool structural_mask = false;  ///< the mask allows where it stores any value (GrB_STRUCTURE)
  bool complement_mask = false;  ///< the mask allows where it would not (GrB_COMP)
  bool replace = false;          ///< C's entries outside the mask are deleted (GrB_REPLACE)
};

/// The accumulator argument when there is none: the result replaces C where the mask allows.
struct no_accumulator {};

}  // namespace spira
