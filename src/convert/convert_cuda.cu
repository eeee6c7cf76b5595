// CUDA backend: format conversions and copies to the device (validation: validate_cuda.cu).
//
// Every conversion produces exactly the bytes of its host twin (src/convert/convert.cpp):
//  - entries are ordered by (row, column) with a stable radix sort whose values are the entries'
//    input positions, so equal (row, column) pairs stay in input order;
//  - duplicates are summed by one thread per run, left to right in that order, which is the host's
//    order of floating-point additions;
// All work is queued on res.stream; temporaries come from spira::buffer (the stream-ordered pool).
// A few calls copy a count or a report back to the host and therefore synchronise the stream.

#include <spira/cuda/device.cuh>
#include <spira/detail/type_lists.hpp>
#include "../cuda/launch.cuh"
#include "../cuda/primitives.cuh"
#include "convert_cuda.cuh"

#include <spira/convert.hpp>
#include <spira/cuda/error.cuh>

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace spira {

namespace {

using detail::grid_stride;
using detail::grid_thread_index;
using detail::launch_elementwise;
using detail::read_back;
using detail::require_device;
using detail::row_of_entry;

// ---- sorting and merging kernels ---------------------------------------------------------------

/// The row of input entry k: read from a COO row array, or searched in CSR row pointers.
template <class IndexT>
struct coo_rows {
  const IndexT* row_idx;
  __device__ std::int64_t operator()(std::int64_t k) const { return row_idx[k]; }
};
struct csr_rows {
  const offset_t* row_ptr;
  std::int64_t rows;
  __device__ std::int64_t operator()(std::int64_t k) const
  {
    return row_of_entry(row_ptr, rows, k);
  }
};

/// Entries sorted by one packed key (row << col_bits | col); order[k] is the input position.
struct packed_entries {
  const std::uint64_t* keys;
  const offset_t* order;
  int col_bits;
  __device__ bool same(std::int64_t a, std::int64_t b) const { return keys[a] == keys[b]; }
  __device__ std::int64_t row(std::int64_t k) const { return std::int64_t(keys[k] >> col_bits); }
  __device__ std::int64_t col(std::int64_t k) const
  {
    return std::int64_t(keys[k] & ((std::uint64_t{1} << col_bits) - 1));
  }
};

/// Entries sorted by two passes (columns, then rows) when row and column bits exceed 64.
template <class IndexT>
struct split_entries {
  const std::uint64_t* rows_sorted;
  const IndexT* col_idx;  ///< input columns, read through order
  const offset_t* order;
  __device__ bool same(std::int64_t a, std::int64_t b) const
  {
    return rows_sorted[a] == rows_sorted[b] && col_idx[order[a]] == col_idx[order[b]];
  }
  __device__ std::int64_t row(std::int64_t k) const { return std::int64_t(rows_sorted[k]); }
  __device__ std::int64_t col(std::int64_t k) const { return col_idx[order[k]]; }
};

template <class Rows, class IndexT>
__global__ void make_packed_keys(Rows row_of, const IndexT* col_idx, int col_bits, std::int64_t n,
                                 std::uint64_t* keys, offset_t* order)
{
  for (std::int64_t k = grid_thread_index(); k < n; k += grid_stride()) {
    keys[k] = (std::uint64_t(row_of(k)) << col_bits) | std::uint64_t(col_idx[k]);
    order[k] = k;
  }
}

template <class IndexT, class K>
__global__ void make_column_keys(const IndexT* col_idx, std::int64_t n, K* keys, offset_t* order)
{
  for (std::int64_t k = grid_thread_index(); k < n; k += grid_stride()) {
    keys[k] = K(col_idx[k]);
    order[k] = k;
  }
}

template <class Rows>
__global__ void gather_row_keys(Rows row_of, const offset_t* order, std::int64_t n,
                                std::uint64_t* keys)
{
  for (std::int64_t k = grid_thread_index(); k < n; k += grid_stride()) {
    keys[k] = std::uint64_t(row_of(order[k]));
  }
}

/// Sets *found when some keys[k - 1] > keys[k]: one atomic per block at most.
__global__ void find_descent(const std::uint64_t* keys, std::int64_t n, int* found)
{
  bool descent = false;
  for (std::int64_t k = grid_thread_index() + 1; k < n && !descent; k += grid_stride()) {
    descent = keys[k - 1] > keys[k];
  }
  if (__syncthreads_or(descent) && threadIdx.x == 0) {
    atomicOr(found, 1);
  }
}

/// At the head of every run of equal (row, column), sums the run's values left to right (input
/// order, as the host does) into sums[k] and sets kept[k] to 1 unless the sum is a dropped zero;
/// kept[k] is 0 elsewhere, and kept[n] is 0 so that an exclusive sum gives the kept count there.
template <class Entries, class ValueT>
__global__ void sum_runs(Entries e, const ValueT* values, std::int64_t n, bool drop_zeros,
                         ValueT* sums, offset_t* kept)
{
  const std::int64_t first = grid_thread_index();
  if (first == 0) {
    kept[n] = 0;
  }
  for (std::int64_t k = first; k < n; k += grid_stride()) {
    offset_t keep = 0;
    if (k == 0 || !e.same(k - 1, k)) {
      ValueT sum = values[e.order[k]];
      for (std::int64_t j = k + 1; j < n && e.same(k, j); ++j) {
        sum += values[e.order[j]];
      }
      keep = !(drop_zeros && sum == ValueT(0));
      sums[k] = sum;
    }
    kept[k] = keep;
  }
}

/// Writes every kept run to its place pos[k] in the output (pos: exclusive sum of kept).
template <class Entries, class ValueT, class IndexT>
__global__ void scatter_runs(Entries e, const ValueT* sums, const offset_t* pos, std::int64_t n,
                             IndexT* col_idx, ValueT* values)
{
  for (std::int64_t k = grid_thread_index(); k < n; k += grid_stride()) {
    if (pos[k + 1] != pos[k]) {
      col_idx[pos[k]] = static_cast<IndexT>(e.col(k));
      values[pos[k]] = sums[k];
    }
  }
}

/// row_ptr[i] = number of kept runs in rows < i = pos[first sorted entry with row >= i].
template <class Entries>
__global__ void row_pointers_of_runs(Entries e, const offset_t* pos, std::int64_t n,
                                     std::int64_t rows, offset_t* row_ptr)
{
  for (std::int64_t i = grid_thread_index(); i <= rows; i += grid_stride()) {
    row_ptr[i] = pos[detail::partition_point(0, n, [&](std::int64_t k) { return e.row(k) < i; })];
  }
}

/// row_ptr[c] = number of sorted keys below c, for c in [0, extent].
template <class K>
__global__ void row_pointers_of_keys(const K* sorted, std::int64_t n, std::int64_t extent,
                                     offset_t* row_ptr)
{
  for (std::int64_t c = grid_thread_index(); c <= extent; c += grid_stride()) {
    row_ptr[c] =
        detail::partition_point(0, n, [&](std::int64_t k) { return std::int64_t(sorted[k]) < c; });
  }
}

/// Entry j of the transpose is input entry order[j]: its row becomes the column.
template <class ValueT, class IndexT>
__global__ void gather_transpose(const offset_t* row_ptr, std::int64_t rows, const offset_t* order,
                                 const ValueT* values, std::int64_t nnz, IndexT* col_idx_t,
                                 ValueT* values_t)
{
  for (std::int64_t j = grid_thread_index(); j < nnz; j += grid_stride()) {
    const offset_t p = order[j];
    col_idx_t[j] = static_cast<IndexT>(row_of_entry(row_ptr, rows, p));
    values_t[j] = values[p];
  }
}

template <class IndexT>
__global__ void expand_rows(const offset_t* row_ptr, std::int64_t rows, std::int64_t nnz,
                            IndexT* row_idx)
{
  for (std::int64_t k = grid_thread_index(); k < nnz; k += grid_stride()) {
    row_idx[k] = static_cast<IndexT>(row_of_entry(row_ptr, rows, k));
  }
}

// ---- host-side pieces
// ----------------------------------------------------------------------------

bool is_sorted(const cuda_resources& res, const std::uint64_t* keys, std::int64_t n)
{
  buffer<int> found(res, 1, "sortedness flag");
  SPIRA_CUDA_TRY(cudaMemsetAsync(found.data(), 0, sizeof(int), res.stream));
  launch_elementwise(res, n - 1, find_descent, keys, n, found.data());
  return read_back(found.data(), res) == 0;
}

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> empty_csr(const cuda_resources& res, std::int64_t rows,
                                     std::int64_t cols)
{
  csr_matrix<ValueT, IndexT> m(res, rows, cols, 0);
  detail::fill_zero_bytes(m.row_ptr(), memory_space::device,
                          (static_cast<std::size_t>(rows) + 1) * sizeof(offset_t), res);
  return m;
}

/// Sums each run of equal (row, column) of the sorted entries, drops zero sums on request and
/// assembles the CSR.
template <class ValueT, class IndexT, class Entries>
csr_matrix<ValueT, IndexT> merge_sorted(const cuda_resources& res, std::int64_t rows,
                                        std::int64_t cols, std::int64_t n, Entries entries,
                                        const ValueT* values, bool drop_zeros)
{
  buffer<ValueT> sums(res, static_cast<std::size_t>(n), "sums of duplicate entries");
  buffer<offset_t> pos(res, static_cast<std::size_t>(n) + 1, "positions of merged entries");
  launch_elementwise(res, n, sum_runs<Entries, ValueT>, entries, values, n, drop_zeros, sums.data(),
                     pos.data());
  detail::exclusive_sum_in_place(res, pos.data(), n + 1);
  const offset_t kept = read_back(pos.data() + n, res);
  csr_matrix<ValueT, IndexT> m(res, rows, cols, kept);
  launch_elementwise(res, n, scatter_runs<Entries, ValueT, IndexT>, entries, sums.data(),
                     pos.data(), n, m.col_idx(), m.values());
  launch_elementwise(res, rows + 1, row_pointers_of_runs<Entries>, entries, pos.data(), n, rows,
                     m.row_ptr());
  return m;
}

/// The canonical CSR of n entries given by their rows (`row_of`), columns and values: sorted by
/// (row, column) with a stable radix sort over the input positions, duplicates summed in input
/// order. One sort of packed (row, column) keys when both fit 64 bits, else two stable passes.
template <class ValueT, class IndexT, class Rows>
csr_matrix<ValueT, IndexT> sort_and_merge(const cuda_resources& res, std::int64_t rows,
                                          std::int64_t cols, std::int64_t n, Rows row_of,
                                          const IndexT* col_idx, const ValueT* values,
                                          bool drop_zeros)
{
  if (n == 0) {
    return empty_csr<ValueT, IndexT>(res, rows, cols);
  }
  const int row_bits = detail::bits_for_extent(rows);
  const int col_bits = detail::bits_for_extent(cols);
  const auto count = static_cast<std::size_t>(n);
  buffer<offset_t> order(res, count, "sort permutation");
  buffer<offset_t> order_alt;
  detail::ping_pong<offset_t> ord{order.data(), nullptr};

  if (row_bits + col_bits <= 64) {
    buffer<std::uint64_t> keys(res, count, "sort keys");
    buffer<std::uint64_t> keys_alt;
    launch_elementwise(res, n, make_packed_keys<Rows, IndexT>, row_of, col_idx, col_bits, n,
                       keys.data(), order.data());
    detail::ping_pong<std::uint64_t> kp{keys.data(), nullptr};
    if (!is_sorted(res, keys.data(), n)) {
      keys_alt = buffer<std::uint64_t>(res, count, "sort keys");
      order_alt = buffer<offset_t>(res, count, "sort permutation");
      kp.alternate = keys_alt.data();
      ord.alternate = order_alt.data();
      detail::stable_sort_pairs(res, kp, ord, n, row_bits + col_bits);
    }
    return merge_sorted<ValueT, IndexT>(
        res, rows, cols, n, packed_entries{kp.current, ord.current, col_bits}, values, drop_zeros);
  }

  // Wider than 64 bits (huge int64 column spaces): stable by column, then stable by row.
  using K = std::make_unsigned_t<IndexT>;
  order_alt = buffer<offset_t>(res, count, "sort permutation");
  ord.alternate = order_alt.data();
  buffer<K> col_keys(res, count, "column sort keys");
  buffer<K> col_keys_alt(res, count, "column sort keys");
  detail::ping_pong<K> ck{col_keys.data(), col_keys_alt.data()};
  launch_elementwise(res, n, make_column_keys<IndexT, K>, col_idx, n, ck.current, ord.current);
  detail::stable_sort_pairs(res, ck, ord, n, col_bits);
  buffer<std::uint64_t> row_keys(res, count, "row sort keys");
  buffer<std::uint64_t> row_keys_alt(res, count, "row sort keys");
  detail::ping_pong<std::uint64_t> rk{row_keys.data(), row_keys_alt.data()};
  launch_elementwise(res, n, gather_row_keys<Rows>, row_of, ord.current, n, rk.current);
  detail::stable_sort_pairs(res, rk, ord, n, row_bits);
  return merge_sorted<ValueT, IndexT>(res, rows, cols, n,
                                      split_entries<IndexT>{rk.current, col_idx, ord.current},
                                      values, drop_zeros);
}

}  // namespace

// ---- conversions
// -----------------------------------------------------------------------------------

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> coo_to_csr(const cuda_resources& res, coo_view<ValueT, IndexT> a)
{
  require_device(a.space, "spira::coo_to_csr", "input");
  validate(res, a, "coo_to_csr: input");
  detail::device_guard guard(res.device);
  return sort_and_merge<ValueT, IndexT>(res, a.rows, a.cols, a.nnz, coo_rows<IndexT>{a.row_idx},
                                        a.col_idx, a.values, /*drop_zeros=*/false);
}

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> canonicalize(const cuda_resources& res, csr_view<ValueT, IndexT> a,
                                        canonicalize_options opts)
{
  require_device(a.space, "spira::canonicalize", "input");
  validate(res, a, csr_check::valid, "canonicalize: input");
  detail::device_guard guard(res.device);
  return sort_and_merge<ValueT, IndexT>(res, a.rows, a.cols, a.nnz, csr_rows{a.row_ptr, a.rows},
                                        a.col_idx, a.values, opts.drop_zeros);
}

template <class ValueT, class IndexT>
coo_matrix<ValueT, IndexT> csr_to_coo(const cuda_resources& res, csr_view<ValueT, IndexT> a)
{
  require_device(a.space, "spira::csr_to_coo", "input");
  validate(res, a, csr_check::valid, "csr_to_coo: input");
  detail::device_guard guard(res.device);
  coo_matrix<ValueT, IndexT> m(res, a.rows, a.cols, a.nnz);
  launch_elementwise(res, a.nnz, expand_rows<IndexT>, a.row_ptr, a.rows, a.nnz, m.row_idx());
  copy(m.col_idx(), memory_space::device, a.col_idx, memory_space::device,
       static_cast<std::size_t>(a.nnz), res);
  copy(m.values(), memory_space::device, a.values, memory_space::device,
       static_cast<std::size_t>(a.nnz), res);
  return m;
}

namespace detail {

/// The transpose of a device CSR the caller has validated (the pairwise engine validates its
/// operands once; a second validation would cost a kernel and a device round trip).
template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> transpose_validated(const cuda_resources& res,
                                               csr_view<ValueT, IndexT> a)
{
  require_device(a.space, "spira::transpose", "input");
  detail::expects(detail::fits_index<IndexT>(a.rows), "transpose: ", a.rows,
                  " rows do not fit the column index type of the transpose");
  detail::device_guard guard(res.device);
  if (a.nnz == 0) {
    return empty_csr<ValueT, IndexT>(res, a.cols, a.rows);
  }
  csr_matrix<ValueT, IndexT> t(res, a.cols, a.rows, a.nnz);
  // Stable by column over the entry positions: within a column, entries keep their CSR order,
  // which is the host's row order.
  using K = std::make_unsigned_t<IndexT>;
  const auto count = static_cast<std::size_t>(a.nnz);
  buffer<K> keys(res, count, "column sort keys");
  buffer<K> keys_alt(res, count, "column sort keys");
  buffer<offset_t> order(res, count, "sort permutation");
  buffer<offset_t> order_alt(res, count, "sort permutation");
  detail::ping_pong<K> kp{keys.data(), keys_alt.data()};
  detail::ping_pong<offset_t> ord{order.data(), order_alt.data()};
  launch_elementwise(res, a.nnz, make_column_keys<IndexT, K>, a.col_idx, a.nnz, kp.current,
                     ord.current);
  detail::stable_sort_pairs(res, kp, ord, a.nnz, detail::bits_for_extent(a.cols));
  launch_elementwise(res, a.cols + 1, row_pointers_of_keys<K>, kp.current, a.nnz, a.cols,
                     t.row_ptr());
  launch_elementwise(res, a.nnz, gather_transpose<ValueT, IndexT>, a.row_ptr, a.rows, ord.current,
                     a.values, a.nnz, t.col_idx(), t.values());
  return t;
}

}  // namespace detail

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> transpose(const cuda_resources& res, csr_view<ValueT, IndexT> a)
{
  require_device(a.space, "spira::transpose", "input");
  validate(res, a, csr_check::valid, "transpose: input");
  return detail::transpose_validated(res, a);
}

// ---- copies to the device
// ---------------------------------------------------------------------------

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> to_device(const cuda_resources& res, csr_view<ValueT, IndexT> a)
{
  csr_matrix<ValueT, IndexT> m(res, a.rows, a.cols, a.nnz);
  copy(m.row_ptr(), memory_space::device, a.row_ptr, a.space, static_cast<std::size_t>(a.rows) + 1,
       res);
  copy(m.col_idx(), memory_space::device, a.col_idx, a.space, static_cast<std::size_t>(a.nnz), res);
  copy(m.values(), memory_space::device, a.values, a.space, static_cast<std::size_t>(a.nnz), res);
  return m;
}

template <class T>
dense_matrix<T> to_device(const cuda_resources& res, dense_view<const T> a)
{
  detail::expects(a.rows >= 0 && a.cols >= 0 && a.ld >= a.cols, "spira::to_device: dense input ",
                  a.rows, " x ", a.cols, " with leading dimension ", a.ld, " is malformed");
  dense_matrix<T> m(res, a.rows, a.cols);
  if (a.rows == 0 || a.cols == 0) {
    return m;
  }
  detail::device_guard guard(res.device);
  const std::size_t row_bytes = static_cast<std::size_t>(a.cols) * sizeof(T);
  SPIRA_CUDA_TRY(cudaMemcpy2DAsync(
      m.data(), row_bytes, a.data, static_cast<std::size_t>(a.ld) * sizeof(T), row_bytes,
      static_cast<std::size_t>(a.rows), cudaMemcpyDefault, res.stream));
  if (a.space == memory_space::host) {
    SPIRA_CUDA_TRY(cudaStreamSynchronize(res.stream));
  }
  return m;
}

#define SPIRA_INSTANTIATE(ValueT, IndexT)                                                          \
  template csr_matrix<ValueT, IndexT> coo_to_csr(const cuda_resources&, coo_view<ValueT, IndexT>); \
  template coo_matrix<ValueT, IndexT> csr_to_coo(const cuda_resources&, csr_view<ValueT, IndexT>); \
  template csr_matrix<ValueT, IndexT> transpose(const cuda_resources&, csr_view<ValueT, IndexT>);  \
  template csr_matrix<ValueT, IndexT> detail::transpose_validated(const cuda_resources&,           \
                                                                  csr_view<ValueT, IndexT>);       \
  template csr_matrix<ValueT, IndexT> canonicalize(                                                \
      const cuda_resources&, csr_view<ValueT, IndexT>, canonicalize_options);                      \
  template csr_matrix<ValueT, IndexT> to_device(const cuda_resources&, csr_view<ValueT, IndexT>);
SPIRA_FOR_EACH_VALUE_INDEX(SPIRA_INSTANTIATE)
#undef SPIRA_INSTANTIATE
template dense_matrix<float> to_device(const cuda_resources&, dense_view<const float>);
template dense_matrix<double> to_device(const cuda_resources&, dense_view<const double>);

}  // namespace spira
