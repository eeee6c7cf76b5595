// select_k: argument validation and algorithm resolution, shared by both backends. Everything here
// runs on the host; the backends (select_k_host.cpp, select_k_cuda.cu) receive validated problems.
#include <spira/detail/type_lists.hpp>
#include <spira/select_k.hpp>

#include "selection/dispatch.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

namespace spira {

select_algo choose_select_algo(std::int64_t rows, std::int64_t length, std::int64_t k,
                               select_dtype dtype) noexcept
{
  // Measured basis: docs/selection.md ("auto"). binary_search whenever the row fits one warp's
  // registers (bench/select_k/select_k.py, group crossover). Longer rows: delegate for a few very
  // long rows with k small against the row (bench/select_k/select_vector.py, radix against
  // delegate; one row of 2^24 takes radix's one-row form, which wins from k = n / 256 there:
  // bench/results/select-one-row-2026-11-27), else radix.
  (void)dtype;
  if (length <= select_binary_search_max_length) {
    return select_algo::binary_search;
  }
  const std::int64_t per_k = rows == 1 && length < 2 * select_delegate_min_length
                                 ? select_delegate_one_row_min_length_per_k
                                 : select_delegate_min_length_per_k;
  if (rows <= select_delegate_max_rows && length >= select_delegate_min_length &&
      k <= length / per_k) {
    return select_algo::delegate;
  }
  return select_algo::radix;
}

std::int64_t selection::delegate_subrange_for(std::int64_t n, std::int64_t k) noexcept
{
  // Rule 4 of Dr. Top-k: the time is T(a) = c0 + c_d * n / a + c_c * k * a (sub-ranges of a
  // elements: per sub-range, its delegates to find, write and select; per candidate element of a
  // qualifying sub-range, a read and a compaction), convex in a, smallest at a = sqrt(C * n / k)
  // with C = c_d / c_c. C is measured on the H200 by bench/select_k/select_vector_tune.py
  // (bench/results/select_vector-tune-*.json, docs/selection.md "delegate"). Capped so that the
  // delegate vector keeps at least 4k entries (beta n / a >= 4 k): with fewer, nearly every
  // sub-range qualifies and the row is read twice.
  const double a = std::sqrt(selection::delegate_rule4_constant * double(n) / double(k));
  int e = std::clamp(static_cast<int>(std::lround(std::log2(std::max(a, 1.0)))), 5, 16);
  const double cap = double(selection::delegate_beta) * double(n) / (4.0 * double(k));
  while (e > 5 && double(std::int64_t{1} << e) > cap) {
    --e;
  }
  return std::int64_t{1} << e;
}

namespace {

template <class T>
constexpr select_dtype dtype_of()
{
  if constexpr (std::is_same_v<T, half>) {
    return select_dtype::f16;
  } else if constexpr (std::is_same_v<T, float>) {
    return select_dtype::f32;
  } else {
    return select_dtype::f64;
  }
}

constexpr memory_space space_of(const host_resources&)
{
  return memory_space::host;
}
constexpr memory_space space_of(const cuda_resources&)
{
  return memory_space::device;
}
constexpr const char* backend_name(const host_resources&)
{
  return "select_k(host_resources)";
}
constexpr const char* backend_name(const cuda_resources&)
{
  return "select_k(cuda_resources)";
}

template <class Resources, class T>
void check_output(const Resources& res, const char* name, dense_view<T> out, std::int64_t rows,
                  std::int64_t k)
{
  const char* fn = backend_name(res);
  detail::expects<dimension_mismatch>(out.rows == rows && out.cols == k, fn, ": ", name,
                                      " must be ", rows, " x ", k, " (rows x k), got ", out.rows,
                                      " x ", out.cols);
  detail::expects(out.ld >= out.cols, fn, ": ", name, ".ld = ", out.ld, " is smaller than its ",
                  out.cols, " columns");
  detail::expects(out.data != nullptr || rows == 0, fn, ": ", name, ".data is null");
  detail::expects(out.space == space_of(res), fn, ": ", name, " is in ", to_string(out.space),
                  " memory; this backend needs ", to_string(space_of(res)), " memory");
}

template <class Resources, class T>
selection::problem make_problem(const Resources& res, std::int64_t rows, std::int64_t max_length,
                                std::int64_t k, select_order order, const select_params& params,
                                bool dense)
{
  const char* fn = backend_name(res);
  detail::expects(order == select_order::smallest || order == select_order::largest, fn,
                  ": order must be select_order::smallest or select_order::largest");
  selection::problem p;
  p.k = k;
  p.largest = order == select_order::largest;
  p.max_length = max_length;
  p.sorted = params.sorted;
  if (params.max_iter) {
    detail::expects(*params.max_iter >= 1, fn, ": params.max_iter must be >= 1, got ",
                    *params.max_iter);
    detail::expects(params.algo != select_algo::radix && params.algo != select_algo::delegate, fn,
                    ": params.max_iter (approximate early stop) applies to the binary_search "
                    "algorithm only, but params.algo is ",
                    to_string(params.algo));
    detail::expects(max_length <= select_binary_search_max_length, fn,
                    ": params.max_iter needs the binary_search algorithm, whose rows hold at most ",
                    select_binary_search_max_length, " elements; the longest row has ", max_length);
    p.max_iter = *params.max_iter;
  }
  switch (params.algo) {
    case select_algo::automatic:
      p.algo = p.max_iter > 0 ? select_algo::binary_search
                              : choose_select_algo(rows, max_length, k, dtype_of<T>());
      if (p.algo == select_algo::delegate && !dense) {
        p.algo = select_algo::radix;
      }
      break;
    case select_algo::binary_search:
      detail::expects(max_length <= select_binary_search_max_length, fn,
                      ": params.algo = binary_search handles rows of at most ",
                      select_binary_search_max_length, " elements; the longest row has ",
                      max_length, " (use radix or automatic)");
      p.algo = select_algo::binary_search;
      break;
    case select_algo::radix:
      p.algo = select_algo::radix;
      break;
    case select_algo::delegate:
      detail::expects(dense, fn,
                      ": params.algo = delegate applies to dense rows only (use radix or "
                      "automatic for CSR rows)");
      p.algo = select_algo::delegate;
      break;
    default:
      detail::expects(false, fn, ": params.algo has an unknown value");
  }
  return p;
}

template <class Resources, class T, class IndexT>
void select_dense(const Resources& res, dense_view<const T> in, std::int64_t k, select_order order,
                  dense_view<T> out_values, dense_view<IndexT> out_indices,
                  const select_params& params)
{
  const char* fn = backend_name(res);
  detail::expects(in.rows >= 0 && in.cols >= 0, fn, ": in has a negative extent ", in.rows, " x ",
                  in.cols);
  detail::expects(in.ld >= in.cols, fn, ": in.ld = ", in.ld, " is smaller than its ", in.cols,
                  " columns");
  detail::expects(in.space == space_of(res), fn, ": in is in ", to_string(in.space),
                  " memory; this backend needs ", to_string(space_of(res)), " memory");
  detail::expects(k >= 1 && k <= in.cols, fn, ": k must be in [1, ", in.cols,
                  "] (1 to the row length), got ", k);
  detail::expects(in.data != nullptr || in.rows == 0, fn, ": in.data is null");
  detail::expects(detail::fits_index<IndexT>(in.cols), fn, ": rows of ", in.cols,
                  " elements do not fit the ", sizeof(IndexT) * 8, "-bit index type");
  check_output(res, "out_values", out_values, in.rows, k);
  check_output(res, "out_indices", out_indices, in.rows, k);
  const auto p = make_problem<Resources, T>(res, in.rows, in.cols, k, order, params, true);
  if (in.rows == 0) {
    return;
  }
  selection::row_source<T, IndexT> src{in.data, in.rows, in.cols, in.ld, nullptr, nullptr};
  selection::row_sink<T, IndexT> dst{out_values.data, out_indices.data, out_values.ld,
                                     out_indices.ld};
  if constexpr (std::is_same_v<Resources, cuda_resources>) {
    if (p.algo == select_algo::delegate) {
      selection::select_vector(res, src, dst, p);
      return;
    }
  }
  // The host backend computes the same unique result with its one algorithm.
  selection::select_rows(res, src, dst, p);
}

template <class Resources, class ValueT, class IndexT>
void select_csr(const Resources& res, csr_view<ValueT, IndexT> rows, std::int64_t k,
                select_order order, dense_view<ValueT> out_values, dense_view<IndexT> out_indices,
                const select_params& params)
{
  const char* fn = backend_name(res);
  detail::expects(rows.rows >= 0 && rows.nnz >= 0, fn,
                  ": rows has a negative extent (rows = ", rows.rows, ", nnz = ", rows.nnz, ")");
  detail::expects(rows.space == space_of(res), fn, ": rows is in ", to_string(rows.space),
                  " memory; this backend needs ", to_string(space_of(res)), " memory");
  detail::expects(k >= 1, fn, ": k must be >= 1, got ", k);
  detail::expects(rows.row_ptr != nullptr, fn, ": rows.row_ptr is null");
  detail::expects(rows.nnz == 0 || (rows.values != nullptr && rows.col_idx != nullptr), fn,
                  ": rows.values or rows.col_idx is null");
  check_output(res, "out_values", out_values, rows.rows, k);
  check_output(res, "out_indices", out_indices, rows.rows, k);
  if (rows.rows == 0) {
    return;
  }
  const std::int64_t max_length = selection::max_row_length(res, rows.row_ptr, rows.rows);
  const auto p =
      make_problem<Resources, ValueT>(res, rows.rows, max_length, k, order, params, false);
  selection::row_source<ValueT, IndexT> src{rows.values, rows.rows,    0,
                                            0,           rows.row_ptr, rows.col_idx};
  selection::row_sink<ValueT, IndexT> dst{out_values.data, out_indices.data, out_values.ld,
                                          out_indices.ld};
  selection::select_rows(res, src, dst, p);
}

template <class Resources, class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> select_csr_to_csr(const Resources& res, csr_view<ValueT, IndexT> rows,
                                             std::int64_t k, select_order order,
                                             const select_params& params)
{
  dense_matrix<ValueT> values(res, rows.rows, k);
  dense_matrix<IndexT> indices(res, rows.rows, k);
  select_csr(res, rows, k, order, values.view(), indices.view(), params);
  return selection::compact_rows(res, rows, values, indices, k);
}

}  // namespace

template <select_value_type T, select_index_type IndexT>
void select_k(const host_resources& res, std::type_identity_t<dense_view<const T>> in,
              std::int64_t k, select_order order, dense_view<T> out_values,
              dense_view<IndexT> out_indices, const select_params& params)
{
  select_dense<host_resources, T, IndexT>(res, in, k, order, out_values, out_indices, params);
}
template <select_value_type T, select_index_type IndexT>
void select_k(const cuda_resources& res, std::type_identity_t<dense_view<const T>> in,
              std::int64_t k, select_order order, dense_view<T> out_values,
              dense_view<IndexT> out_indices, const select_params& params)
{
  select_dense<cuda_resources, T, IndexT>(res, in, k, order, out_values, out_indices, params);
}
template <class ValueT, class IndexT>
  requires is_value_type_v<ValueT>
void select_k(const host_resources& res, csr_view<ValueT, IndexT> rows, std::int64_t k,
              select_order order, dense_view<ValueT> out_values, dense_view<IndexT> out_indices,
              const select_params& params)
{
  select_csr(res, rows, k, order, out_values, out_indices, params);
}
template <class ValueT, class IndexT>
  requires is_value_type_v<ValueT>
void select_k(const cuda_resources& res, csr_view<ValueT, IndexT> rows, std::int64_t k,
              select_order order, dense_view<ValueT> out_values, dense_view<IndexT> out_indices,
              const select_params& params)
{
  select_csr(res, rows, k, order, out_values, out_indices, params);
}
template <class ValueT, class IndexT>
  requires is_value_type_v<ValueT>
csr_matrix<ValueT, IndexT> select_k(const host_resources& res, csr_view<ValueT, IndexT> rows,
                                    std::int64_t k, select_order order, const select_params& params)
{
  return select_csr_to_csr(res, rows, k, order, params);
}
template <class ValueT, class IndexT>
  requires is_value_type_v<ValueT>
csr_matrix<ValueT, IndexT> select_k(const cuda_resources& res, csr_view<ValueT, IndexT> rows,
                                    std::int64_t k, select_order order, const select_params& params)
{
  return select_csr_to_csr(res, rows, k, order, params);
}

#define SPIRA_SELECT_DENSE(T, IndexT)                                                 \
  template void select_k<T, IndexT>(                                                  \
      const host_resources&, std::type_identity_t<dense_view<const T>>, std::int64_t, \
      select_order, dense_view<T>, dense_view<IndexT>, const select_params&);         \
  template void select_k<T, IndexT>(                                                  \
      const cuda_resources&, std::type_identity_t<dense_view<const T>>, std::int64_t, \
      select_order, dense_view<T>, dense_view<IndexT>, const select_params&);
#define SPIRA_SELECT_CSR(ValueT, IndexT)                                                          \
  template void select_k(const host_resources&, csr_view<ValueT, IndexT>, std::int64_t,           \
                         select_order, dense_view<ValueT>, dense_view<IndexT>,                    \
                         const select_params&);                                                   \
  template void select_k(const cuda_resources&, csr_view<ValueT, IndexT>, std::int64_t,           \
                         select_order, dense_view<ValueT>, dense_view<IndexT>,                    \
                         const select_params&);                                                   \
  template csr_matrix<ValueT, IndexT> select_k(const host_resources&, csr_view<ValueT, IndexT>,   \
                                               std::int64_t, select_order, const select_params&); \
  template csr_matrix<ValueT, IndexT> select_k(const cuda_resources&, csr_view<ValueT, IndexT>,   \
                                               std::int64_t, select_order, const select_params&);
SPIRA_FOR_EACH_SELECT_VALUE_INDEX(SPIRA_SELECT_DENSE)
SPIRA_FOR_EACH_VALUE_INDEX(SPIRA_SELECT_CSR)
#undef SPIRA_SELECT_DENSE
#undef SPIRA_SELECT_CSR

}  // namespace spira
