// spira: sparse and dense matrices and their views.
//
// Owning containers (csr_matrix, coo_matrix, dense_matrix) hold their arrays in host or device
// memory and hand out non-owning views. Operations take views: sparse views are read-only inputs;
// dense_view<T> is writable unless T is const. Every view carries its extents and memory space.
//
// Type matrix (kept small on purpose): ValueT in {float, double}, IndexT in {int32_t, int64_t};
// row pointers are always offset_t (int64), so nnz may exceed 2^31-1 with either index type.
//
// CSR invariants ("valid"): row_ptr[0] == 0, row_ptr non-decreasing, row_ptr[rows] == nnz,
// 0 <= col_idx < cols. "Canonical" additionally requires strictly increasing columns within a row
// (sorted, no duplicates). Operations that need canonical input say so and validate it.
#pragma once

#include <spira/config.hpp>
#include <spira/error.hpp>
#include <spira/memory.hpp>

#include <cstdint>
#include <limits>
#include <type_traits>

namespace spira {

template <class T>
inline constexpr bool is_value_type_v = std::is_same_v<T, float> || std::is_same_v<T, double>;
template <class T>
inline constexpr bool is_index_type_v =
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>;

namespace detail {
/// True when indices 0 .. extent-1 are representable in IndexT.
template <class IndexT>
constexpr bool fits_index(std::int64_t extent) noexcept
{
  return extent <= 0 || extent - 1 <= std::int64_t(std::numeric_limits<IndexT>::max());
}

/// Number of bits needed to write every value in [0, extent): 0 for extent <= 1 (the key widths
/// of the radix sorts).
constexpr int bits_for_extent(std::int64_t extent) noexcept
{
  int bits = 0;
  for (std::uint64_t v = extent > 1 ? std::uint64_t(extent - 1) : 0; v != 0; v >>= 1) {
    ++bits;
  }
  return bits;
}

/// True when the pairwise engines (host and CUDA) renumber the columns of their operands to the
/// columns in use before building per-column arrays (the CSC of B: cols + 1 row pointers, and
/// other arrays of one entry or bit per column): when the declared `cols` exceeds the stored
/// entries nnz_a + nnz_b, at least cols - nnz_a - nnz_b columns are empty and such arrays would
/// outgrow the operands. At or below it they are O(nnz_a + nnz_b) already and the renumbering
/// (a sort of the column indices) is skipped.
constexpr bool columns_worth_compressing(std::int64_t cols, std::int64_t nnz_a,
                                         std::int64_t nnz_b) noexcept
{
  return cols > nnz_a + nnz_b;
}
}  // namespace detail

/// Non-owning, read-only compressed sparse row matrix.
template <class ValueT, class IndexT>
struct csr_view {
  static_assert(is_value_type_v<ValueT>, "csr_view: ValueT must be float or double");
  static_assert(is_index_type_v<IndexT>, "csr_view: IndexT must be int32_t or int64_t");
  using value_type = ValueT;
  using index_type = IndexT;

  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  const offset_t* row_ptr = nullptr;  ///< rows + 1 entries
  const IndexT* col_idx = nullptr;    ///< nnz entries
  const ValueT* values = nullptr;     ///< nnz entries
  memory_space space = memory_space::host;

  /// Degree of row i (host views only).
  [[nodiscard]] std::int64_t degree(std::int64_t i) const { return row_ptr[i + 1] - row_ptr[i]; }
};

/// Non-owning, read-only coordinate matrix (entries in any order, duplicates allowed).
template <class ValueT, class IndexT>
struct coo_view {
  static_assert(is_value_type_v<ValueT>, "coo_view: ValueT must be float or double");
  static_assert(is_index_type_v<IndexT>, "coo_view: IndexT must be int32_t or int64_t");
  using value_type = ValueT;
  using index_type = IndexT;

  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  const IndexT* row_idx = nullptr;
  const IndexT* col_idx = nullptr;
  const ValueT* values = nullptr;
  memory_space space = memory_space::host;
};

/// Non-owning row-major dense matrix; element (i, j) is data[i * ld + j].
template <class T>
struct dense_view {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;  ///< leading dimension (>= cols)
  T* data = nullptr;
  memory_space space = memory_space::host;

  SPIRA_HD T& operator()(std::int64_t i, std::int64_t j) const { return data[i * ld + j]; }
  SPIRA_HD T* row(std::int64_t i) const { return data + i * ld; }

  /// Implicit conversion to a read-only view (for writable views only).
  template <class U = T, class = std::enable_if_t<!std::is_const_v<U>>>
  operator dense_view<const U>() const  // NOLINT(google-explicit-constructor)
  {
    return {rows, cols, ld, data, space};
  }
};

/// Owning CSR matrix in host or device memory.
template <class ValueT, class IndexT>
class csr_matrix {
 public:
  using value_type = ValueT;
  using index_type = IndexT;

  csr_matrix() = default;

  /// Allocates (uninitialised) arrays for a rows x cols matrix with nnz entries.
  template <class Resources>
  csr_matrix(const Resources& res, std::int64_t rows, std::int64_t cols, std::int64_t nnz)
      : rows_(rows), cols_(cols)
  {
    check_extents(rows, cols, nnz);
    row_ptr_ = buffer<offset_t>(res, static_cast<std::size_t>(rows) + 1, "CSR row pointers");
    col_idx_ = buffer<IndexT>(res, static_cast<std::size_t>(nnz), "CSR column indices");
    values_ = buffer<ValueT>(res, static_cast<std::size_t>(nnz), "CSR values");
  }

  [[nodiscard]] std::int64_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::int64_t cols() const noexcept { return cols_; }
  [[nodiscard]] std::int64_t nnz() const noexcept
  {
    return static_cast<std::int64_t>(values_.size());
  }
  [[nodiscard]] memory_space space() const noexcept { return row_ptr_.space(); }

  [[nodiscard]] offset_t* row_ptr() noexcept { return row_ptr_.data(); }
  [[nodiscard]] IndexT* col_idx() noexcept { return col_idx_.data(); }
  [[nodiscard]] ValueT* values() noexcept { return values_.data(); }
  [[nodiscard]] const offset_t* row_ptr() const noexcept { return row_ptr_.data(); }
  [[nodiscard]] const IndexT* col_idx() const noexcept { return col_idx_.data(); }
  [[nodiscard]] const ValueT* values() const noexcept { return values_.data(); }
  [[nodiscard]] const cuda_resources& cuda() const noexcept { return row_ptr_.cuda(); }

  [[nodiscard]] csr_view<ValueT, IndexT> view() const noexcept
  {
    return {rows_, cols_, nnz(), row_ptr_.data(), col_idx_.data(), values_.data(), space()};
  }
  operator csr_view<ValueT, IndexT>() const noexcept { return view(); }  // NOLINT

  /// Replaces the value array (same length), e.g. after an element-wise apply.
  buffer<ValueT>& value_buffer() noexcept { return values_; }
  buffer<IndexT>& col_idx_buffer() noexcept { return col_idx_; }
  buffer<offset_t>& row_ptr_buffer() noexcept { return row_ptr_; }

  /// Shrinks the stored nonzeros to `nnz` (used after merging duplicates); keeps the first entries.
  void resize_nnz(std::int64_t nnz);

 private:
  static void check_extents(std::int64_t rows, std::int64_t cols, std::int64_t nnz)
  {
    detail::expects(rows >= 0, "csr_matrix: rows must be >= 0, got ", rows);
    detail::expects(cols >= 0, "csr_matrix: cols must be >= 0, got ", cols);
    detail::expects(nnz >= 0, "csr_matrix: nnz must be >= 0, got ", nnz);
    detail::expects(detail::fits_index<IndexT>(cols), "csr_matrix: cols = ", cols,
                    " does not fit the ", sizeof(IndexT) * 8, "-bit column index type");
  }

  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  buffer<offset_t> row_ptr_;
  buffer<IndexT> col_idx_;
  buffer<ValueT> values_;
};

/// Owning COO matrix in host or device memory.
template <class ValueT, class IndexT>
class coo_matrix {
 public:
  using value_type = ValueT;
  using index_type = IndexT;

  coo_matrix() = default;

  template <class Resources>
  coo_matrix(const Resources& res, std::int64_t rows, std::int64_t cols, std::int64_t nnz)
      : rows_(rows), cols_(cols)
  {
    detail::expects(rows >= 0 && cols >= 0 && nnz >= 0,
                    "coo_matrix: negative extent (rows = ", rows, ", cols = ", cols,
                    ", nnz = ", nnz, ")");
    detail::expects(detail::fits_index<IndexT>(rows) && detail::fits_index<IndexT>(cols),
                    "coo_matrix: ", rows, " x ", cols, " does not fit the ", sizeof(IndexT) * 8,
                    "-bit index type");
    row_idx_ = buffer<IndexT>(res, static_cast<std::size_t>(nnz), "COO row indices");
    col_idx_ = buffer<IndexT>(res, static_cast<std::size_t>(nnz), "COO column indices");
    values_ = buffer<ValueT>(res, static_cast<std::size_t>(nnz), "COO values");
  }

  [[nodiscard]] std::int64_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::int64_t cols() const noexcept { return cols_; }
  [[nodiscard]] std::int64_t nnz() const noexcept
  {
    return static_cast<std::int64_t>(values_.size());
  }
  [[nodiscard]] memory_space space() const noexcept { return values_.space(); }

  [[nodiscard]] IndexT* row_idx() noexcept { return row_idx_.data(); }
  [[nodiscard]] IndexT* col_idx() noexcept { return col_idx_.data(); }
  [[nodiscard]] ValueT* values() noexcept { return values_.data(); }
  [[nodiscard]] const IndexT* row_idx() const noexcept { return row_idx_.data(); }
  [[nodiscard]] const IndexT* col_idx() const noexcept { return col_idx_.data(); }
  [[nodiscard]] const ValueT* values() const noexcept { return values_.data(); }
  [[nodiscard]] const cuda_resources& cuda() const noexcept { return values_.cuda(); }

  [[nodiscard]] coo_view<ValueT, IndexT> view() const noexcept
  {
    return {rows_, cols_, nnz(), row_idx_.data(), col_idx_.data(), values_.data(), space()};
  }
  operator coo_view<ValueT, IndexT>() const noexcept { return view(); }  // NOLINT

 private:
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  buffer<IndexT> row_idx_;
  buffer<IndexT> col_idx_;
  buffer<ValueT> values_;
};

/// Owning row-major dense matrix (ld == cols).
template <class T>
class dense_matrix {
 public:
  dense_matrix() = default;

  template <class Resources>
  dense_matrix(const Resources& res, std::int64_t rows, std::int64_t cols)
      : rows_(rows), cols_(cols)
  {
    detail::expects(rows >= 0 && cols >= 0, "dense_matrix: negative extent ", rows, " x ", cols);
    detail::expects<out_of_memory>(
        cols == 0 || rows <= std::numeric_limits<std::int64_t>::max() / cols,
        "dense_matrix: ", rows, " x ", cols, " elements overflow a 64-bit size");
    data_ = buffer<T>(res, static_cast<std::size_t>(rows * cols), "dense matrix");
  }

  [[nodiscard]] std::int64_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::int64_t cols() const noexcept { return cols_; }
  [[nodiscard]] memory_space space() const noexcept { return data_.space(); }
  [[nodiscard]] T* data() noexcept { return data_.data(); }
  [[nodiscard]] const T* data() const noexcept { return data_.data(); }
  [[nodiscard]] const cuda_resources& cuda() const noexcept { return data_.cuda(); }
  [[nodiscard]] buffer<T>& storage() noexcept { return data_; }

  [[nodiscard]] dense_view<T> view() noexcept
  {
    return {rows_, cols_, cols_, data_.data(), space()};
  }
  [[nodiscard]] dense_view<const T> view() const noexcept
  {
    return {rows_, cols_, cols_, data_.data(), space()};
  }

 private:
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  buffer<T> data_;
};

template <class ValueT, class IndexT>
void csr_matrix<ValueT, IndexT>::resize_nnz(std::int64_t nnz)
{
  detail::expects(nnz >= 0 && nnz <= this->nnz(), "csr_matrix::resize_nnz: ", nnz, " outside [0, ",
                  this->nnz(), "]");
  if (nnz == this->nnz()) {
    return;
  }
  auto shrink = [&](auto& b, const char* what) {
    using T = typename std::remove_reference_t<decltype(b)>::value_type;
    buffer<T> n = space() == memory_space::host
                      ? buffer<T>(host_resources{}, static_cast<std::size_t>(nnz), what)
                      : buffer<T>(b.cuda(), static_cast<std::size_t>(nnz), what);
    copy(n.data(), n.space(), b.data(), b.space(), static_cast<std::size_t>(nnz), b.cuda());
    b = std::move(n);
  };
  shrink(col_idx_, "CSR column indices");
  shrink(values_, "CSR values");
}

}  // namespace spira
