// spira: GraphBLAS apply, transpose and extract on the host, with a mask and an accumulator:
//
//   apply(res, C, M, accum, op, A, desc)          T(i,j) = op(A(i,j))         (GrB_apply, unary;
//                                                  a bound binary operator is a lambda capture)
//   apply_index(res, C, M, accum, op, A, desc)    T(i,j) = op(A(i,j), i, j)   (GrB_apply,
//   index-unary) transpose(res, C, M, accum, A, desc)          T = Aᵀ (GrB_transpose) extract(res,
//   C, M, accum, A, rows, cols, desc) T(i,j) = A(rows[i], cols[j]) (GrB_extract)
//
// then C⟨M⟩ = accum(C, T) (spira/descriptor.hpp). transpose_a of the descriptor applies to A first
// (so transpose with it set gives T = A, as GrB_transpose does). T has an entry where A does;
// extract's index lists may repeat and come in any order (nullopt: all rows or columns, in order).
// Operands: canonical CSR in host memory; results canonical, computed in double and rounded to
// the value type once, the same for any number of threads. Work O(nnz(A) + nnz(C) + nnz(M)), plus
// O(entries x log(len(cols))) for extract.
#pragma once

#include <spira/convert.hpp>
#include <spira/descriptor.hpp>
#include <spira/detail/index_lists.hpp>
#include <spira/detail/masked_update.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace spira {

/// C⟨M⟩ = accum(C, T), T(i,j) = op(op(A)(i,j)) where op(A) stores (i, j).
template <class Accum, class Op, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> apply(
    const host_resources& res, std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> c,
    std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> mask, const Accum& accum,
    const Op& op, csr_view<ValueT, IndexT> a, const descriptor& options = {})
{
  using T = detail::host_compute_t;
  static_assert(std::is_invocable_r_v<T, const Op&, T>, "spira::apply: op must be op(value)");
  std::optional<csr_matrix<ValueT, IndexT>> at;
  a = detail::unary_operand(res, "spira::apply", a, c, mask, options, at);
  const auto t = detail::filter_map(
      res, a, [](T, std::int64_t, std::int64_t) { return true; },
      [&](T x, std::int64_t, std::int64_t) { return T(op(x)); });
  return detail::masked_update(res, c, mask, accum, t.view(), options);
}

/// C⟨M⟩ = accum(C, T), T(i,j) = op(op(A)(i,j), i, j) where op(A) stores (i, j).
template <class Accum, class Op, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> apply_index(
    const host_resources& res, std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> c,
    std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> mask, const Accum& accum,
    const Op& op, csr_view<ValueT, IndexT> a, const descriptor& options = {})
{
  using T = detail::host_compute_t;
  static_assert(std::is_invocable_r_v<T, const Op&, T, std::int64_t, std::int64_t>,
                "spira::apply_index: op must be op(value, row, col)");
  std::optional<csr_matrix<ValueT, IndexT>> at;
  a = detail::unary_operand(res, "spira::apply_index", a, c, mask, options, at);
  const auto t = detail::filter_map(
      res, a, [](T, std::int64_t, std::int64_t) { return true; },
      [&](T x, std::int64_t i, std::int64_t j) { return T(op(x, i, j)); });
  return detail::masked_update(res, c, mask, accum, t.view(), options);
}

/// C⟨M⟩ = accum(C, Aᵀ) (A itself when the descriptor's transpose_a is set).
template <class Accum, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> transpose(
    const host_resources& res, std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> c,
    std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> mask, const Accum& accum,
    csr_view<ValueT, IndexT> a, const descriptor& options = {})
{
  descriptor o = options;
  o.transpose_a = !o.transpose_a;  // T = op(A)ᵀ
  std::optional<csr_matrix<ValueT, IndexT>> at;
  a = detail::unary_operand(res, "spira::transpose", a, c, mask, o, at);
  return detail::masked_update(res, c, mask, accum, a, options);
}

/// C⟨M⟩ = accum(C, T), T(i,j) = op(A)(rows[i], cols[j]) where op(A) stores it; `rows` / `cols`
/// (nullopt: all, in order) may repeat indices and come in any order. C and the mask are
/// len(rows) x len(cols).
template <class Accum, class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> extract(
    const host_resources& res, std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> c,
    std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> mask, const Accum& accum,
    csr_view<ValueT, IndexT> a, std::optional<std::span<const std::int64_t>> rows,
    std::optional<std::span<const std::int64_t>> cols, const descriptor& options = {})
{
  const char* op = "spira::extract";
  detail::require_host_space(a.space, op, "A");
  validate(res, a, csr_check::canonical, "spira::extract: A");
  std::optional<csr_matrix<ValueT, IndexT>> at;
  a = detail::maybe_transposed(res, a, options.transpose_a, at);
  detail::check_index_lists(op, rows, a.rows, cols, a.cols);
  const std::int64_t n_rows = rows ? std::int64_t(rows->size()) : a.rows;
  const std::int64_t n_cols = cols ? std::int64_t(cols->size()) : a.cols;
  detail::check_output_operands(res, c, mask, n_rows, n_cols, op, "A(rows, cols)");
  // (source column, output column), sorted: the output columns each source column goes to.
  std::vector<std::pair<std::int64_t, std::int64_t>> targets;
  if (cols) {
    for (std::size_t j = 0; j < cols->size(); ++j) {
      targets.emplace_back((*cols)[j], std::int64_t(j));
    }
    std::sort(targets.begin(), targets.end());
  }
  const auto source_row = [&](std::int64_t i) { return rows ? (*rows)[std::size_t(i)] : i; };
  // Row i of T: (output column, value) for each stored entry of the source row and each output
  // column it goes to, sorted by output column.
  const auto row_entries = [&](std::int64_t i, std::vector<std::pair<std::int64_t, ValueT>>& e) {
    e.clear();
    const std::int64_t r = source_row(i);
    for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
      const auto s = std::int64_t(a.col_idx[p]);
      if (!cols) {
        e.emplace_back(s, a.values[p]);
        continue;
      }
      auto it = std::lower_bound(targets.begin(), targets.end(), std::pair{s, std::int64_t{-1}});
      for (; it != targets.end() && it->first == s; ++it) {
        e.emplace_back(it->second, a.values[p]);
      }
    }
    if (cols) {
      std::sort(e.begin(), e.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    }
  };
  using entries = std::vector<std::pair<std::int64_t, ValueT>>;
  std::int64_t work = std::int64_t(targets.size());  // the entries the selected rows hold
  for (std::int64_t i = 0; i < n_rows; ++i) {
    work += a.row_ptr[source_row(i) + 1] - a.row_ptr[source_row(i)];
  }
  const auto t = detail::csr_by_rows<ValueT, IndexT>(
      res, n_rows, n_cols, work, [] { return entries{}; },
      [&](entries& e, std::int64_t i, bool, auto&& out) {
        row_entries(i, e);
        for (const auto& [j, v] : e) {
          out(j, detail::host_compute_t(v));
        }
      });
  return detail::masked_update(res, c, mask, accum, t.view(), options);
}

}  // namespace spira
