// CUDA backend: validation, format conversions and copies to the device.
//
// Every conversion produces exactly the bytes of its host twin (src/convert/convert.cpp):
//  - entries are ordered by (row, column) with a stable radix sort whose values are the entries'
//    input positions, so equal (row, column) pairs stay in input order;
//  - duplicates are summed by one thread per run, left to right in that order, which is the host's
//    order of floating-point additions;
//  - validation reports the smallest offending row (or entry) with the host's message.
// All work is queued on res.stream; temporaries come from spira::buffer (the stream-ordered pool).
// A few calls copy a count or a report back to the host and therefore synchronise the stream.

#include <spira/cuda/device.cuh>
#include <spira/detail/type_lists.hpp>
#include "../cuda/launch.cuh"
#include "../cuda/primitives.cuh"

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
using detail::row_of_entry;

constexpr unsigned long long no_row = ~0ULL;  // "nothing found" for atomicMin reductions

// ---- validation kernels ------------------------------------------------------------------------

/// What check_csr found; the *_row members stay no_row when nothing is wrong.
struct csr_report {
  offset_t first;                     ///< row_ptr[0]
  offset_t last;                      ///< row_ptr[rows]
  unsigned long long decreasing_row;  ///< smallest i with row_ptr[i] > row_ptr[i + 1]
  unsigned long long bad_entry_row;   ///< smallest row with a column out of range (or out of order)
};

template <class IndexT>
__global__ void check_csr(const offset_t* row_ptr, const IndexT* col_idx, std::int64_t rows,
                          std::int64_t cols, std::int64_t nnz, bool canonical, csr_report* report)
{
  const std::int64_t first = grid_thread_index();
  const std::int64_t stride = grid_stride();
  if (first == 0) {
    report->first = row_ptr[0];
    report->last = row_ptr[rows];
  }
  // Each thread visits increasing indices, so its first hit is its smallest.
  for (std::int64_t i = first; i < rows; i += stride) {
    if (row_ptr[i] > row_ptr[i + 1]) {
      atomicMin(&report->decreasing_row, static_cast<unsigned long long>(i));
      break;
    }
  }
  if (rows == 0) {
    return;
  }
  // Rows found through possibly invalid pointers are only used once the pointers passed.
  unsigned long long bad = no_row;
  for (std::int64_t k = first; k < nnz; k += stride) {
    const std::int64_t c = col_idx[k];
    const std::int64_t row = row_of_entry(row_ptr, rows, k);
    bool ok = c >= 0 && c < cols;
    if (ok && canonical && k > 0 && k > row_ptr[row]) {
      ok = std::int64_t(col_idx[k - 1]) < c;
    }
    if (!ok && static_cast<unsigned long long>(row) < bad) {
      bad = row;
    }
  }
  if (bad != no_row) {
    atomicMin(&report->bad_entry_row, bad);
  }
}

template <class IndexT>
__global__ void check_coo(const IndexT* row_idx, const IndexT* col_idx, std::int64_t rows,
                          std::int64_t cols, std::int64_t nnz, unsigned long long* bad_entry)
{
  for (std::int64_t k = grid_thread_index(); k < nnz; k += grid_stride()) {
    const std::int64_t r = row_idx[k];
    const std::int64_t c = col_idx[k];
    if (r < 0 || r >= rows || c < 0 || c >= cols) {
      atomicMin(bad_entry, static_cast<unsigned long long>(k));
      break;
    }
  }
}

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

void require_device(memory_space s, const char* op, const char* name)
{
  detail::expects(s == memory_space::device, op, ": ", name,
                  " is in host memory; pass host_resources or copy it with spira::to_device");
}

template <class T>
T read_back(const T* device_ptr, const cuda_resources& res)
{
  T value{};
  copy(&value, memory_space::host, device_ptr, memory_space::device, 1, res);
  return value;
}

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

// ---- validation
// ----------------------------------------------------------------------------------

template <class ValueT, class IndexT>
void validate(const cuda_resources& res, csr_view<ValueT, IndexT> a, csr_check level,
              const char* name)
{
  if (a.space == memory_space::host) {
    validate(host_resources{}, a, level, name);
    return;
  }
  detail::expects(a.rows >= 0 && a.cols >= 0 && a.nnz >= 0, name,
                  ": negative extent (rows = ", a.rows, ", cols = ", a.cols, ", nnz = ", a.nnz,
                  ")");
  detail::expects(a.row_ptr != nullptr, name, ": row_ptr is null");
  detail::expects(a.nnz == 0 || (a.col_idx != nullptr && a.values != nullptr), name,
                  ": col_idx or values is null with nnz = ", a.nnz);
  detail::device_guard guard(res.device);
  buffer<csr_report> report(res, 1, "validation report");
  SPIRA_CUDA_TRY(cudaMemsetAsync(report.data(), 0xFF, sizeof(csr_report), res.stream));
  launch_elementwise(res, std::max({a.rows, a.nnz, std::int64_t{1}}), check_csr<IndexT>, a.row_ptr,
                     a.col_idx, a.rows, a.cols, a.nnz, level == csr_check::canonical,
                     report.data());
  const csr_report r = read_back(report.data(), res);

  detail::expects(r.first == 0, name, ": row_ptr[0] must be 0, got ", r.first);
  detail::expects(r.last == a.nnz, name, ": row_ptr[", a.rows, "] = ", r.last,
                  " differs from nnz = ", a.nnz);
  if (r.decreasing_row != no_row) {
    const auto i = static_cast<std::int64_t>(r.decreasing_row);
    offset_t p[2];
    copy(p, memory_space::host, a.row_ptr + i, memory_space::device, 2, res);
    throw invalid_argument(detail::concat(name, ": row pointers decrease at row ", i, " (row_ptr[",
                                          i, "] = ", p[0], " > row_ptr[", i + 1, "] = ", p[1],
                                          ")"));
  }
  if (r.bad_entry_row == no_row) {
    return;
  }
  const auto bad_row = static_cast<std::int64_t>(r.bad_entry_row);
  offset_t p[2];
  copy(p, memory_space::host, a.row_ptr + bad_row, memory_space::device, 2, res);
  std::vector<IndexT> row(static_cast<std::size_t>(p[1] - p[0]));
  copy(row.data(), memory_space::host, a.col_idx + p[0], memory_space::device, row.size(), res);
  for (offset_t k = p[0]; k < p[1]; ++k) {
    const std::int64_t c = row[k - p[0]];
    detail::expects(c >= 0 && c < a.cols, name, ": column index ", c, " at row ", bad_row,
                    " (entry ", k, ") is outside [0, ", a.cols, ")");
    detail::expects(k == p[0] || row[k - 1 - p[0]] < c, name, ": row ", bad_row,
                    " is not canonical: column ", c, " follows column ", row[k - 1 - p[0]],
                    " (unsorted or duplicate; see spira::canonicalize)");
  }
  throw cuda_error(detail::concat(name, ": device validation flagged row ", bad_row,
                                  " but its entries check out on the host"));
}

namespace {
/// Sets *flag to 0 (atomicMin) when the report of check_csr found anything wrong.
__global__ void flag_csr_report(const csr_report* r, offset_t nnz, unsigned long long* flag)
{
  if (r->first != 0 || r->last != nnz || r->decreasing_row != no_row ||
      r->bad_entry_row != no_row) {
    atomicMin(flag, 0ull);
  }
}
}  // namespace

namespace detail {

template <class ValueT, class IndexT>
void check_csr_async(const cuda_resources& res, csr_view<ValueT, IndexT> a, csr_check level,
                     unsigned long long* flag)
{
  device_guard guard(res.device);
  buffer<csr_report> report(res, 1, "validation report");
  SPIRA_CUDA_TRY(cudaMemsetAsync(report.data(), 0xFF, sizeof(csr_report), res.stream));
  launch_elementwise(res, std::max({a.rows, a.nnz, std::int64_t{1}}), check_csr<IndexT>, a.row_ptr,
                     a.col_idx, a.rows, a.cols, a.nnz, level == csr_check::canonical,
                     report.data());
  flag_csr_report<<<1, 1, 0, res.stream>>>(report.data(), a.nnz, flag);
  SPIRA_CUDA_TRY(cudaGetLastError());
}

}  // namespace detail

template <class ValueT, class IndexT>
void validate(const cuda_resources& res, coo_view<ValueT, IndexT> a, const char* name)
{
  if (a.space == memory_space::host) {
    validate(host_resources{}, a, name);
    return;
  }
  detail::expects(a.rows >= 0 && a.cols >= 0 && a.nnz >= 0, name,
                  ": negative extent (rows = ", a.rows, ", cols = ", a.cols, ", nnz = ", a.nnz,
                  ")");
  detail::expects(
      a.nnz == 0 || (a.row_idx != nullptr && a.col_idx != nullptr && a.values != nullptr), name,
      ": row_idx, col_idx or values is null with nnz = ", a.nnz);
  if (a.nnz == 0) {
    return;
  }
  detail::device_guard guard(res.device);
  buffer<unsigned long long> bad(res, 1, "validation report");
  SPIRA_CUDA_TRY(cudaMemsetAsync(bad.data(), 0xFF, sizeof(unsigned long long), res.stream));
  launch_elementwise(res, a.nnz, check_coo<IndexT>, a.row_idx, a.col_idx, a.rows, a.cols, a.nnz,
                     bad.data());
  const unsigned long long k = read_back(bad.data(), res);
  if (k == no_row) {
    return;
  }
  const IndexT r = read_back(a.row_idx + k, res);
  const IndexT c = read_back(a.col_idx + k, res);
  detail::expects(r >= 0 && r < a.rows, name, ": row index ", r, " of entry ", k,
                  " is outside [0, ", a.rows, ")");
  detail::expects(c >= 0 && c < a.cols, name, ": column index ", c, " of entry ", k,
                  " is outside [0, ", a.cols, ")");
  throw cuda_error(detail::concat(name, ": device validation flagged entry ", k,
                                  " but it checks out on the host"));
}

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
  template void validate(const cuda_resources&, csr_view<ValueT, IndexT>, csr_check, const char*); \
  template void detail::check_csr_async(const cuda_resources&, csr_view<ValueT, IndexT>,           \
                                        csr_check, unsigned long long*);                           \
  template void validate(const cuda_resources&, coo_view<ValueT, IndexT>, const char*);            \
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
