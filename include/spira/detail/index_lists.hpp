// spira internals: extract's row and column lists checked against op(A), on the host for both
// backends (GrB_extract takes its index lists in host memory).
#pragma once

#include <spira/error.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace spira::detail {

/// Every index of `rows` in [0, n_rows) and of `cols` in [0, n_cols) (nullopt: all, in order);
/// throws invalid_argument naming the list and the position ("spira::extract: rows[1] = 10 is
/// outside [0, 10)").
inline void check_index_lists(const char* op, std::optional<std::span<const std::int64_t>> rows,
                              std::int64_t n_rows,
                              std::optional<std::span<const std::int64_t>> cols,
                              std::int64_t n_cols)
{
  const auto check = [&](std::span<const std::int64_t> list, std::int64_t n, const char* name) {
    for (std::size_t p = 0; p < list.size(); ++p) {
      expects(list[p] >= 0 && list[p] < n, op, ": ", name, "[", p, "] = ", list[p],
              " is outside [0, ", n, ")");
    }
  };
  if (rows) {
    check(*rows, n_rows, "rows");
  }
  if (cols) {
    check(*cols, n_cols, "cols");
  }
}

}  // namespace spira::detail
