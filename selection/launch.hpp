// Launch helpers of select_k's CUDA translation units (select_k_cuda.cuh, select_k_csr_cuda.cu).
#pragma once

#include <spira/error.hpp>
#include <spira/resources.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

namespace spira::selection {

inline cudaStream_t stream_of(const cuda_resources& res)
{
  return reinterpret_cast<cudaStream_t>(res.stream);
}

inline std::int64_t blocks_for(std::int64_t items, int per_block)
{
  return (items + per_block - 1) / per_block;
}

/// Throws when a launch of `blocks` blocks does not fit one grid.
inline void check_grid(std::int64_t blocks, const char* what)
{
  detail::expects(blocks <= std::numeric_limits<int>::max(), "select_k(cuda_resources): ", what,
                  " needs ", blocks, " blocks, more than one launch holds");
}

}  // namespace spira::selection
