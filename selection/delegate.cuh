// spira selection: delegate-centric top-k of very long rows (Dr. Top-k, Gaihre et al., SC'21:
// ../shared/papers/002_4b99e314b8542618.txt). The kernels of select_algo::delegate; the host side
// that sequences them and runs both top-k steps with the radix select is select_vector_cuda.cu.
//
// Everything works on the order-preserving keys of selection/keys.hpp and on the total order
// (key, position) of a row, so every rule below is exact, ties and NaN included:
//  * the row is cut into sub-ranges of `alpha` elements; the delegates of a sub-range are its
//    beta best elements (Rule 1 with beta = 1, the "beta delegate" of section 4.3 otherwise),
//    written to the delegate vector D in position order, sub-range after sub-range, so D is sorted
//    by position and the rank order inside D is the rank order inside the row;
//  * the first top-k selects the k best elements of D; its worst element t is the threshold. The k
//    best elements of D are elements of the row, so the row's k-th element is no worse than t and
//    only elements <= t can be selected (Rule 2: delegate top-k filtering);
//  * a sub-range whose beta-th delegate is worse than t contributes exactly its delegates <= t:
//    every other element of it is worse than its beta-th delegate (Rule 3). Only the sub-ranges
//    whose beta delegates are all <= t ("full" sub-ranges, at most k / beta of them) are read
//    again (in pieces of at most 1024 elements, a warp each), and only their elements <= t kept;
//  * the candidates (delegates <= t of the other sub-ranges, elements <= t of the full ones) are
//    written in position order, at offsets from a prefix sum over sub-ranges (no atomic order),
//    and the second top-k selects the k best of them (the host sequence in select_vector_cuda.cu
//    sizes the candidate vector before the count is known and redoes a row that overflows it).
//
// Delegate construction reads the row once, coalesced, in one of two forms (section 5.3):
//  * sub-ranges up to delegate_policy::tile_max_subrange: a block loads a tile of whole
//    sub-ranges into shared memory with 16-byte loads, each thread scans a run of consecutive
//    elements of it (strided computing), dismissing a whole vector with one value comparison,
//    and the runs of a sub-range merge by shuffles and shared memory (delegate_tile_kernel);
//  * longer sub-ranges: a warp per sub-range, lanes reading consecutive 16-byte vectors with the
//    next ones in flight, dismissing a vector with one value comparison against a bound the warp
//    shares, then a butterfly merge of the lanes' best lists (delegate_warp_kernel).
//
// Files, one per phase: the policy, the threshold type and the sub-range layout
// (delegate_policy.cuh); construction, tile form (delegate_build_tile.cuh) and warp form
// (delegate_build_warp.cuh); the threshold (delegate_threshold.cuh); the candidates
// (delegate_candidates.cuh). The (key, position) order is ranks_before of selection/keys.hpp.
#pragma once

#include "selection/delegate_build_tile.cuh"
#include "selection/delegate_build_warp.cuh"
#include "selection/delegate_candidates.cuh"
#include "selection/delegate_policy.cuh"
#include "selection/delegate_threshold.cuh"
