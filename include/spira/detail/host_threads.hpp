// spira internals: how many of a host_resources' threads a parallel loop of the host backend uses.
#pragma once

#include <spira/resources.hpp>

#include <algorithm>
#include <cstdint>

namespace spira::detail {

/// The work (entries read, products formed) that makes a further host thread worth starting: a
/// loop with less runs on the calling thread alone. Starting or waking a team of threads costs
/// microseconds, tens of them under OMP_WAIT_POLICY=passive, which is more than a small operation
/// takes (a breadth-first level of a small graph: several calls, each a few parallel loops). The
/// same rule as SuiteSparse:GraphBLAS's chunk (GB_nthreads): one thread per this much work.
inline constexpr std::int64_t host_work_per_thread = std::int64_t(1) << 16;

/// Threads for a parallel loop over `work` units: one per host_work_per_thread, at least one, at
/// most res.num_threads(). The thread count never changes a result (every host loop writes the
/// same bytes on any number of threads).
inline int threads_for(const host_resources& res, std::int64_t work)
{
  return int(std::clamp<std::int64_t>(work / host_work_per_thread, 1, res.num_threads()));
}

}  // namespace spira::detail
