// merge_knn's backend-independent parts, shared by the host entry (merge.cpp) and the CUDA entry
// (merge_cuda.cpp): the checks of the parts' shapes, and the merge of host-memory parts.
#pragma once

#include <spira/knn.hpp>

#include <cstdint>
#include <span>

namespace spira::detail {

/// Checks k, the number of parts and every part's shape, leading dimensions and pointers, and that
/// all parts lie in one memory space, which it returns. Throws invalid_argument or
/// dimension_mismatch naming the part.
memory_space check_merge_knn_parts(std::span<const knn_result_view> parts, std::int64_t k);

/// Checks every row's entries (index range, padding last, no index twice, sorted best first) and
/// merges; parts in host memory, already checked by check_merge_knn_parts. The result is in host
/// memory.
knn_result merge_knn_host(std::span<const knn_result_view> parts, std::int64_t k, bool largest,
                          int threads);

}  // namespace spira::detail
