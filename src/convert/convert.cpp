// Host backend: validation and format conversions (OpenMP over rows where it pays).
#include <spira/convert.hpp>
#include <spira/detail/host_threads.hpp>
#include <spira/detail/type_lists.hpp>
#include "view_checks.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace spira {

namespace {

void require_host(memory_space s, const char* op, const char* name)
{
  detail::expects(s == memory_space::host, op, ": ", name,
                  " is in device memory; pass cuda_resources or copy it with spira::to_host");
}

// Sorts the entries [begin, end) of one row by column, stable (so duplicates keep stored order),
// and merges duplicates by summing. Returns the number of entries kept, written in place from
// begin.
template <class ValueT, class IndexT>
std::int64_t sort_merge_row(IndexT* cols, ValueT* vals, std::int64_t begin, std::int64_t end,
                            std::vector<std::int64_t>& perm, std::vector<IndexT>& ctmp,
                            std::vector<ValueT>& vtmp, bool drop_zeros)
{
  const std::int64_t n = end - begin;
  bool sorted = true;
  for (std::int64_t k = begin + 1; k < end && sorted; ++k) {
    sorted = cols[k - 1] < cols[k];
  }
  if (!sorted) {
    perm.resize(n);
    std::iota(perm.begin(), perm.end(), begin);
    std::stable_sort(perm.begin(), perm.end(),
                     [&](std::int64_t a, std::int64_t b) { return cols[a] < cols[b]; });
    ctmp.resize(n);
    vtmp.resize(n);
    for (std::int64_t k = 0; k < n; ++k) {
      ctmp[k] = cols[perm[k]];
      vtmp[k] = vals[perm[k]];
    }
    std::copy(ctmp.begin(), ctmp.end(), cols + begin);
    std::copy(vtmp.begin(), vtmp.end(), vals + begin);
  }
  std::int64_t out = begin;
  for (std::int64_t k = begin; k < end;) {
    IndexT c = cols[k];
    ValueT sum = vals[k];
    std::int64_t j = k + 1;
    for (; j < end && cols[j] == c; ++j) {
      sum += vals[j];
    }
    if (!(drop_zeros && sum == ValueT(0))) {
      cols[out] = c;
      vals[out] = sum;
      ++out;
    }
    k = j;
  }
  return out - begin;
}

// Rows that sort_merge_rows sorts before compacting them: the count of kept entries per row is
// held for one block at a time, so its memory does not grow with the rows of the matrix.
constexpr std::int64_t sort_merge_block_rows = std::int64_t(1) << 16;

// Sorts and merges every row of `m` in place, then compacts the arrays, a block of rows at a time.
// Shared by coo_to_csr and canonicalize so that both produce exactly the same bytes. Extra memory:
// O(sort_merge_block_rows + longest row), whatever the number of rows.
template <class ValueT, class IndexT>
void sort_merge_rows(const host_resources& res, csr_matrix<ValueT, IndexT>& m, bool drop_zeros)
{
  const std::int64_t rows = m.rows();
  offset_t* rp = m.row_ptr();
  std::vector<std::int64_t> kept(static_cast<std::size_t>(std::min(rows, sort_merge_block_rows)));
  offset_t out = 0;
  for (std::int64_t r0 = 0; r0 < rows; r0 += sort_merge_block_rows) {
    const std::int64_t r1 = std::min(rows, r0 + sort_merge_block_rows);
#pragma omp parallel num_threads(detail::threads_for(res, (r1 - r0) + (rp[r1] - rp[r0])))
    {
      std::vector<std::int64_t> perm;
      std::vector<IndexT> ctmp;
      std::vector<ValueT> vtmp;
#pragma omp for schedule(dynamic, 256)
      for (std::int64_t i = r0; i < r1; ++i) {
        kept[i - r0] =
            sort_merge_row(m.col_idx(), m.values(), rp[i], rp[i + 1], perm, ctmp, vtmp, drop_zeros);
      }
    }
    // Compact: rows move left only, so a sequential forward pass is safe, and the rows of the
    // next block (from rp[r1] on) are not touched.
    for (std::int64_t i = r0; i < r1; ++i) {
      const offset_t begin = rp[i];
      const std::int64_t n = kept[i - r0];
      if (out != begin) {
        std::copy_n(m.col_idx() + begin, n, m.col_idx() + out);
        std::copy_n(m.values() + begin, n, m.values() + out);
      }
      rp[i] = out;
      out += n;
    }
  }
  rp[rows] = out;
  m.resize_nnz(out);
}

}  // namespace

template <class ValueT, class IndexT>
void validate(const host_resources& res, csr_view<ValueT, IndexT> a, csr_check level,
              const char* name)
{
  require_host(a.space, "spira::validate", name);
  detail::check_view_arrays(a, name);
  detail::expects(a.row_ptr[0] == 0, name, ": row_ptr[0] must be 0, got ", a.row_ptr[0]);
  detail::expects(a.row_ptr[a.rows] == a.nnz, name, ": row_ptr[", a.rows, "] = ", a.row_ptr[a.rows],
                  " differs from nnz = ", a.nnz);
  for (std::int64_t i = 0; i < a.rows; ++i) {
    detail::expects(a.row_ptr[i] <= a.row_ptr[i + 1], name, ": row pointers decrease at row ", i,
                    " (row_ptr[", i, "] = ", a.row_ptr[i], " > row_ptr[", i + 1,
                    "] = ", a.row_ptr[i + 1], ")");
  }
  // First offending row per thread; report the smallest so the message is deterministic.
  std::int64_t bad_row = a.rows;
#pragma omp parallel for num_threads(detail::threads_for(res, a.rows + a.nnz)) \
    reduction(min : bad_row) schedule(static)
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const std::int64_t c = a.col_idx[k];
      const bool in_range = c >= 0 && c < a.cols;
      const bool ordered = level == csr_check::valid || k == a.row_ptr[i] || a.col_idx[k - 1] < c;
      if (!in_range || !ordered) {
        bad_row = std::min(bad_row, i);
        break;
      }
    }
  }
  if (bad_row == a.rows) {
    return;
  }
  for (offset_t k = a.row_ptr[bad_row]; k < a.row_ptr[bad_row + 1]; ++k) {
    const std::int64_t c = a.col_idx[k];
    detail::expects(c >= 0 && c < a.cols, name, ": column index ", c, " at row ", bad_row,
                    " (entry ", k, ") is outside [0, ", a.cols, ")");
    detail::expects(k == a.row_ptr[bad_row] || a.col_idx[k - 1] < c, name, ": row ", bad_row,
                    " is not canonical: column ", c, " follows column ", a.col_idx[k - 1],
                    " (unsorted or duplicate; see spira::canonicalize)");
  }
}

template <class ValueT, class IndexT>
void validate(const host_resources&, coo_view<ValueT, IndexT> a, const char* name)
{
  require_host(a.space, "spira::validate", name);
  detail::check_view_arrays(a, name);
  for (std::int64_t k = 0; k < a.nnz; ++k) {
    detail::expects(a.row_idx[k] >= 0 && a.row_idx[k] < a.rows, name, ": row index ", a.row_idx[k],
                    " of entry ", k, " is outside [0, ", a.rows, ")");
    detail::expects(a.col_idx[k] >= 0 && a.col_idx[k] < a.cols, name, ": column index ",
                    a.col_idx[k], " of entry ", k, " is outside [0, ", a.cols, ")");
  }
}

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> coo_to_csr(const host_resources& res, coo_view<ValueT, IndexT> a)
{
  validate(res, a, "coo_to_csr: input");
  csr_matrix<ValueT, IndexT> m(res, a.rows, a.cols, a.nnz);
  offset_t* rp = m.row_ptr();
  std::fill_n(rp, a.rows + 1, offset_t{0});
  for (std::int64_t k = 0; k < a.nnz; ++k) {
    ++rp[a.row_idx[k] + 1];
  }
  std::partial_sum(rp, rp + a.rows + 1, rp);
  // Counting sort by row keeps input order within a row: duplicates are later summed in input
  // order. rp[i] serves as the insertion point of row i (no second array of rows entries):
  // afterwards it holds the end of row i, which is the start of row i + 1, and one shift restores
  // the pointers.
  for (std::int64_t k = 0; k < a.nnz; ++k) {
    const offset_t dst = rp[a.row_idx[k]]++;
    m.col_idx()[dst] = a.col_idx[k];
    m.values()[dst] = a.values[k];
  }
  std::copy_backward(rp, rp + a.rows, rp + a.rows + 1);
  rp[0] = 0;
  sort_merge_rows(res, m, /*drop_zeros=*/false);
  return m;
}

template <class ValueT, class IndexT>
coo_matrix<ValueT, IndexT> csr_to_coo(const host_resources& res, csr_view<ValueT, IndexT> a)
{
  validate(res, a, csr_check::valid, "csr_to_coo: input");
  coo_matrix<ValueT, IndexT> m(res, a.rows, a.cols, a.nnz);
#pragma omp parallel for num_threads(detail::threads_for(res, a.rows + a.nnz)) \
    schedule(dynamic, 1024)
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      m.row_idx()[k] = IndexT(i);
    }
  }
  std::copy_n(a.col_idx, a.nnz, m.col_idx());
  std::copy_n(a.values, a.nnz, m.values());
  return m;
}

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> transpose(const host_resources& res, csr_view<ValueT, IndexT> a)
{
  validate(res, a, csr_check::valid, "transpose: input");
  detail::expects(detail::fits_index<IndexT>(a.rows), "transpose: ", a.rows,
                  " rows do not fit the column index type of the transpose");
  csr_matrix<ValueT, IndexT> t(res, a.cols, a.rows, a.nnz);
  offset_t* rp = t.row_ptr();
  std::fill_n(rp, a.cols + 1, offset_t{0});
  for (std::int64_t k = 0; k < a.nnz; ++k) {
    ++rp[a.col_idx[k] + 1];
  }
  std::partial_sum(rp, rp + a.cols + 1, rp);
  // rp[c] is the insertion point of column c (as in coo_to_csr): one array of cols + 1 entries.
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const offset_t dst = rp[a.col_idx[k]]++;
      t.col_idx()[dst] = IndexT(i);
      t.values()[dst] = a.values[k];
    }
  }
  std::copy_backward(rp, rp + a.cols, rp + a.cols + 1);
  rp[0] = 0;
  return t;
}

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> canonicalize(const host_resources& res, csr_view<ValueT, IndexT> a,
                                        canonicalize_options opts)
{
  validate(res, a, csr_check::valid, "canonicalize: input");
  csr_matrix<ValueT, IndexT> m(res, a.rows, a.cols, a.nnz);
  std::copy_n(a.row_ptr, a.rows + 1, m.row_ptr());
  std::copy_n(a.col_idx, a.nnz, m.col_idx());
  std::copy_n(a.values, a.nnz, m.values());
  sort_merge_rows(res, m, opts.drop_zeros);
  return m;
}

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> make_csr(const host_resources& res, std::int64_t rows, std::int64_t cols,
                                    std::span<const offset_t> row_ptr,
                                    std::span<const IndexT> col_idx, std::span<const ValueT> values,
                                    csr_check level)
{
  detail::expects(rows >= 0 && cols >= 0, "make_csr: negative extent ", rows, " x ", cols);
  detail::expects(row_ptr.size() == static_cast<std::size_t>(rows) + 1, "make_csr: row_ptr has ",
                  row_ptr.size(), " entries, expected rows + 1 = ", rows + 1);
  detail::expects(col_idx.size() == values.size(), "make_csr: col_idx has ", col_idx.size(),
                  " entries but values has ", values.size());
  csr_matrix<ValueT, IndexT> m(res, rows, cols, static_cast<std::int64_t>(values.size()));
  std::copy(row_ptr.begin(), row_ptr.end(), m.row_ptr());
  std::copy(col_idx.begin(), col_idx.end(), m.col_idx());
  std::copy(values.begin(), values.end(), m.values());
  validate(res, m.view(), level, "make_csr: matrix");
  return m;
}

template <class ToI, class ValueT, class IndexT>
csr_matrix<ValueT, ToI> cast_indices(const host_resources& res, csr_view<ValueT, IndexT> a)
{
  require_host(a.space, "spira::cast_indices", "input");
  csr_matrix<ValueT, ToI> m(res, a.rows, a.cols, a.nnz);  // checks that cols fit ToI
  std::copy_n(a.row_ptr, a.rows + 1, m.row_ptr());
  std::transform(a.col_idx, a.col_idx + a.nnz, m.col_idx(), [](IndexT c) { return ToI(c); });
  std::copy_n(a.values, a.nnz, m.values());
  return m;
}

template <class ToV, class ValueT, class IndexT>
csr_matrix<ToV, IndexT> cast_values(const host_resources& res, csr_view<ValueT, IndexT> a)
{
  require_host(a.space, "spira::cast_values", "input");
  csr_matrix<ToV, IndexT> m(res, a.rows, a.cols, a.nnz);
  std::copy_n(a.row_ptr, a.rows + 1, m.row_ptr());
  std::copy_n(a.col_idx, a.nnz, m.col_idx());
  std::transform(a.values, a.values + a.nnz, m.values(), [](ValueT v) { return ToV(v); });
  return m;
}

#define SPIRA_INSTANTIATE(ValueT, IndexT)                                                          \
  template void validate(const host_resources&, csr_view<ValueT, IndexT>, csr_check, const char*); \
  template void validate(const host_resources&, coo_view<ValueT, IndexT>, const char*);            \
  template csr_matrix<ValueT, IndexT> coo_to_csr(const host_resources&, coo_view<ValueT, IndexT>); \
  template coo_matrix<ValueT, IndexT> csr_to_coo(const host_resources&, csr_view<ValueT, IndexT>); \
  template csr_matrix<ValueT, IndexT> transpose(const host_resources&, csr_view<ValueT, IndexT>);  \
  template csr_matrix<ValueT, IndexT> canonicalize(                                                \
      const host_resources&, csr_view<ValueT, IndexT>, canonicalize_options);                      \
  template csr_matrix<ValueT, IndexT> make_csr(const host_resources&, std::int64_t, std::int64_t,  \
                                               std::span<const offset_t>, std::span<const IndexT>, \
                                               std::span<const ValueT>, csr_check);                \
  template csr_matrix<ValueT, std::int32_t> cast_indices<std::int32_t>(const host_resources&,      \
                                                                       csr_view<ValueT, IndexT>);  \
  template csr_matrix<ValueT, std::int64_t> cast_indices<std::int64_t>(const host_resources&,      \
                                                                       csr_view<ValueT, IndexT>);  \
  template csr_matrix<float, IndexT> cast_values<float>(const host_resources&,                     \
                                                        csr_view<ValueT, IndexT>);                 \
  template csr_matrix<double, IndexT> cast_values<double>(const host_resources&,                   \
                                                          csr_view<ValueT, IndexT>);
SPIRA_FOR_EACH_VALUE_INDEX(SPIRA_INSTANTIATE)
#undef SPIRA_INSTANTIATE

}  // namespace spira
