// merge_knn's backend-independent parts, shared by the host entry (merge.cpp) and the CUDA entry
// (merge_cuda.cpp): the checks of the parts' shapes and rows, and the merge of host-memory parts.
#pragma once

#include <spira/knn.hpp>

#include <cstdint>
#include <span>
#include <string>

namespace spira::detail {

/// Checks k, the number of parts and every part's shape, leading dimensions and pointers, and that
/// all parts lie in one memory space, which it returns. Throws invalid_argument or
/// dimension_mismatch naming the part.
memory_space check_merge_knn_parts(std::span<const knn_result_view> parts, std::int64_t k);

/// Checks every row's entries (index range, padding last, no index twice, sorted best first) and
/// merges; parts in host memory, already checked by check_merge_knn_parts. The result is in host
/// memory. `check_rows` = false skips the rows' checks, for parts that the library itself made
/// (a distributed run's partial k-NN lists): a part that breaks the contract then gives an
/// unspecified merge instead of an error.
knn_result merge_knn_host(std::span<const knn_result_view> parts, std::int64_t k, bool largest,
                          int threads, bool check_rows = true);

/// The message merge_knn_host gives for row r of parts in host memory (index range, padding last,
/// no index twice, sorted best first), naming the row as `named`; empty when the row is well
/// formed. The CUDA merge, which finds the first bad row on the device, reports it with this.
std::string merge_knn_row_error(std::span<const knn_result_view> parts, std::int64_t r,
                                std::int64_t named, bool largest);

}  // namespace spira::detail
