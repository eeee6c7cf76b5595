// spira internals shared by the host GraphBLAS-style operations: C⟨M⟩ = accum(C, T), the
// write-back every one of them ends with (spira/descriptor.hpp says what it means: the checks of C
// and the mask, the merge of one row, the whole update from a computed T); csr_by_rows, the
// two-pass (count, then fill at known offsets) construction of a CSR result row by row; and the
// checked, possibly transposed operand of the unary operations with filter_map over its entries.
#pragma once

#include <spira/convert.hpp>
#include <spira/descriptor.hpp>
#include <spira/detail/host_pairwise_common.hpp>
#include <spira/detail/host_threads.hpp>
#include <spira/error.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace spira::detail {

/// C and the mask: host memory, canonical, rows x cols (`shape` names the result's operands, as
/// "A B" or "Aᵀ"). `op` is the operation's name in messages.
template <class ValueT, class IndexT>
void check_output_operands(const host_resources& res,
                           const std::optional<csr_view<ValueT, IndexT>>& c,
                           const std::optional<csr_view<ValueT, IndexT>>& mask, std::int64_t rows,
                           std::int64_t cols, const char* op, const char* shape)
{
  const auto check = [&](const std::optional<csr_view<ValueT, IndexT>>& m, const char* name) {
    if (m) {
      const std::string what = std::string(op) + ": " + name;
      require_host_space(m->space, op, name);
      validate(res, *m, csr_check::canonical, what.c_str());
      expects<dimension_mismatch>(m->rows == rows && m->cols == cols, what, " is ", m->rows, " x ",
                                  m->cols, " but ", shape, " is ", rows, " x ", cols);
    }
  };
  check(c, "C");
  check(mask, "mask");
}

/// Merges row i of T (sorted columns t_cols[0, n), values t_vals) with row i of C under row i of
/// the mask, calling out(column, value) for each entry of the new C in increasing column order.
/// Without `values` only the pattern counts (t_vals may be null; out gets 0).
template <class Accum, class ValueT, class IndexT, class TCol, class TVal, class Out>
void masked_merge_row(std::int64_t i, const TCol* t_cols, const TVal* t_vals, std::size_t n,
                      const std::optional<csr_view<ValueT, IndexT>>& c,
                      const std::optional<csr_view<ValueT, IndexT>>& mask, const Accum& accum,
                      const descriptor& o, bool values, Out&& out)
{
  using T = host_compute_t;
  constexpr bool accumulate = !std::is_same_v<Accum, no_accumulator>;
  static_assert(!accumulate || std::is_invocable_r_v<T, const Accum&, T, T>,
                "accum must be spira::no_accumulator or callable as accum(c, t)");
  constexpr std::int64_t end = std::numeric_limits<std::int64_t>::max();
  offset_t pc = c ? c->row_ptr[i] : 0;
  const offset_t c_end = c ? c->row_ptr[i + 1] : 0;
  offset_t pm = mask ? mask->row_ptr[i] : 0;
  const offset_t m_end = mask ? mask->row_ptr[i + 1] : 0;
  std::size_t pt = 0;
  const auto allowed = [&](std::int64_t j) {
    bool in = !mask.has_value();
    if (mask) {
      while (pm < m_end && std::int64_t(mask->col_idx[pm]) < j) {
        ++pm;
      }
      in = pm < m_end && std::int64_t(mask->col_idx[pm]) == j &&
           (o.structural_mask || mask->values[pm] != ValueT(0));
    }
    return in != o.complement_mask;
  };
  while (pt < n || pc < c_end) {
    const std::int64_t jt = pt < n ? std::int64_t(t_cols[pt]) : end;
    const std::int64_t jc = pc < c_end ? std::int64_t(c->col_idx[pc]) : end;
    const std::int64_t j = std::min(jt, jc);
    const bool has_t = jt == j;
    const bool has_c = jc == j;
    if (allowed(j)) {
      // Z = T, or C ∪ T with accum where both hold an entry.
      if (has_t && (!accumulate || !has_c)) {
        out(j, values ? T(t_vals[pt]) : T(0));
      } else if (has_c && accumulate) {
        if constexpr (accumulate) {
          const T cv = values ? T(c->values[pc]) : T(0);
          // T holds the value type (spira/descriptor.hpp): a row computed in double is rounded
          // before the accumulator reads it, as a T stored in a matrix is.
          out(j, !values ? T(0) : has_t ? T(accum(cv, T(ValueT(t_vals[pt])))) : cv);
        }
      }
    } else if (has_c && !o.replace) {
      out(j, values ? T(c->values[pc]) : T(0));
    }
    pt += has_t ? 1 : 0;
    pc += has_c ? 1 : 0;
  }
}

/// A canonical CSR matrix of rows x cols built row by row in two passes over the rows, in parallel
/// on res's threads: emit(state, i, values, out) calls out(column, value) for each entry of row i
/// in increasing column order, first to count them (`values` false: the value is not used), then
/// to write them at their offsets. make_state() gives each thread the scratch state emit uses.
/// `work`: what one pass reads and forms over all rows (entries, products), which sets how many
/// threads run it (threads_for).
template <class ValueT, class IndexT, class MakeState, class Emit>
csr_matrix<ValueT, IndexT> csr_by_rows(const host_resources& res, std::int64_t rows,
                                       std::int64_t cols, std::int64_t work,
                                       const MakeState& make_state, const Emit& emit)
{
  using T = host_compute_t;
  std::vector<offset_t> ptr(std::size_t(rows) + 1, 0);
  // No more threads than rows: each thread makes its own state (e.g. a dense accumulator as wide as
  // the result), which a thread without rows would make for nothing.
  const int threads = int(std::clamp<std::int64_t>(rows, 1, threads_for(res, rows + work)));
#pragma omp parallel num_threads(threads)
  {
    auto state = make_state();
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t i = 0; i < rows; ++i) {
      offset_t n = 0;
      emit(state, i, false, [&](std::int64_t, T) { ++n; });
      ptr[std::size_t(i) + 1] = n;
    }
  }
  for (std::int64_t i = 0; i < rows; ++i) {
    ptr[std::size_t(i) + 1] += ptr[std::size_t(i)];
  }
  csr_matrix<ValueT, IndexT> out(res, rows, cols, ptr[std::size_t(rows)]);
  std::copy(ptr.begin(), ptr.end(), out.row_ptr());
#pragma omp parallel num_threads(threads)
  {
    auto state = make_state();
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t i = 0; i < rows; ++i) {
      offset_t p = ptr[std::size_t(i)];
      emit(state, i, true, [&](std::int64_t j, T v) {
        out.col_idx()[p] = IndexT(j);
        out.values()[p] = ValueT(v);
        ++p;
      });
    }
  }
  return out;
}

/// No per-thread state (for csr_by_rows).
struct no_row_state {};

/// The new C from the old one (nullopt: empty), the mask (nullopt: none), the accumulator and the
/// computed result T (canonical, the shape of C): C⟨M⟩ = accum(C, T), canonical.
template <class Accum, class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> masked_update(const host_resources& res,
                                         const std::optional<csr_view<ValueT, IndexT>>& c,
                                         const std::optional<csr_view<ValueT, IndexT>>& mask,
                                         const Accum& accum, csr_view<ValueT, IndexT> t,
                                         const descriptor& o)
{
  const std::int64_t work = t.nnz + (c ? c->nnz : 0) + (mask ? mask->nnz : 0);
  return csr_by_rows<ValueT, IndexT>(
      res, t.rows, t.cols, work, [] { return no_row_state{}; },
      [&](no_row_state, std::int64_t i, bool values, auto&& out) {
        const offset_t b = t.row_ptr[i];
        masked_merge_row(i, t.col_idx + b, t.values + b, std::size_t(t.row_ptr[i + 1] - b), c, mask,
                         accum, o, values, out);
      });
}

/// `a` as given, or its transpose (kept in `store`) when `transpose` is set.
template <class ValueT, class IndexT>
csr_view<ValueT, IndexT> maybe_transposed(const host_resources& res, csr_view<ValueT, IndexT> a,
                                          bool transpose,
                                          std::optional<csr_matrix<ValueT, IndexT>>& store)
{
  if (!transpose) {
    return a;
  }
  store = spira::transpose(res, a);
  return store->view();
}

/// op(A) checked, with C and the mask; `store` keeps a transpose.
template <class ValueT, class IndexT>
csr_view<ValueT, IndexT> unary_operand(const host_resources& res, const char* op,
                                       csr_view<ValueT, IndexT> a,
                                       const std::optional<csr_view<ValueT, IndexT>>& c,
                                       const std::optional<csr_view<ValueT, IndexT>>& mask,
                                       const descriptor& o,
                                       std::optional<csr_matrix<ValueT, IndexT>>& store)
{
  require_host_space(a.space, op, "A");
  validate(res, a, csr_check::canonical, (std::string(op) + ": A").c_str());
  a = maybe_transposed(res, a, o.transpose_a, store);
  check_output_operands(res, c, mask, a.rows, a.cols, op, o.transpose_a ? "Aᵀ" : "A");
  return a;
}

/// The entries (i, j, x) of `a` for which keep(x, i, j) holds, as a canonical CSR matrix, with
/// value(x, i, j) in place of x.
template <class ValueT, class IndexT, class Keep, class Value>
csr_matrix<ValueT, IndexT> filter_map(const host_resources& res, csr_view<ValueT, IndexT> a,
                                      const Keep& keep, const Value& value)
{
  using T = host_compute_t;
  return csr_by_rows<ValueT, IndexT>(
      res, a.rows, a.cols, a.nnz, [] { return no_row_state{}; },
      [&](no_row_state, std::int64_t i, bool values, auto&& out) {
        for (offset_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
          const T x = T(a.values[p]);
          const auto j = std::int64_t(a.col_idx[p]);
          if (keep(x, i, j)) {
            out(j, values ? T(value(x, i, j)) : T(0));
          }
        }
      });
}

}  // namespace spira::detail
