// spira: reading and writing matrices (host memory only).
//
// Formats (see docs/io.md for the full rules):
//   Matrix Market  .mtx / .mtx.gz   coordinate and array; real, integer, pattern;
//                                   general, symmetric, skew-symmetric (expanded on read)
//   svmlight       .svm / .svmlight / .libsvm (optionally .gz): "label idx:val ..." per line
//   NumPy          .npy             1-D and 2-D arrays, read and write
//   scipy sparse   .npz             scipy.sparse.save_npz CSR (or CSC, transposed) read;
//                                   named arrays written as an uncompressed .npz
//   edge list      .txt / .txt.gz / .edges / .el   "src dst [weight]" per line, '#' comments
//
// Entry points:
//   read_matrix<ValueT, IndexT>(path)   any format above (by extension, else by content) as a
//                                       canonical host CSR (sorted columns, duplicates summed)
//   describe(path)                      format, extents and stored entries without building a CSR
//
// Every reader reads a gzip-compressed file transparently when the file starts with the gzip magic
// bytes (whatever its extension). Every failure - missing file, directory, truncated or malformed
// content, an extent that does not fit IndexT - throws spira::io_error whose message starts with
// "<file>:" and, for text formats, "<file>:<line>:". No reader allocates from a declared count
// before the data backing it has been seen: memory is bounded by the size of the input (plus
// read_options::max_rows row pointers).
//
// Instantiated for ValueT in {float, double} and IndexT in {int32_t, int64_t}.
#pragma once

#include <spira/error.hpp>
#include <spira/matrix.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace spira::io {

// ---- common -------------------------------------------------------------------------------------

/// File formats the readers understand.
enum class file_format { matrix_market, svmlight, npy, npz, edge_list };

/// "matrix-market", "svmlight", "npy", "npz" or "edge-list".
[[nodiscard]] const char* to_string(file_format f) noexcept;

/// The format implied by the file name: .mtx, .svm/.svmlight/.libsvm, .npy, .npz,
/// .txt/.edges/.el (a trailing .gz is ignored). Throws io_error for any other extension.
[[nodiscard]] file_format format_from_extension(const std::filesystem::path& path);

/// format_from_extension, or - when the extension is not one of those - the format recognised from
/// the content: a %%MatrixMarket banner, the .npy magic, or a zip archive (.npz). Throws io_error
/// when neither tells.
[[nodiscard]] file_format detect_format(const std::filesystem::path& path);

/// How indices in an svmlight file are numbered.
enum class index_base {
  automatic,  ///< zero-based if any feature index 0 appears in the file, else one-based
  zero,
  one
};

struct read_options {
  /// Largest row count a reader accepts. A CSR needs rows + 1 row pointers whatever its nnz, so
  /// this bounds the memory a small file declaring a huge extent can claim (default: 2^27 rows,
  /// 1 GiB of row pointers). Raise it for larger matrices.
  std::int64_t max_rows = std::int64_t{1} << 27;
  /// svmlight only: feature numbering.
  index_base svmlight_index_base = index_base::automatic;
  /// svmlight only: number of columns (0: one past the largest feature index seen).
  std::int64_t svmlight_features = 0;
};

/// Reads any supported file (format chosen by detect_format) into a canonical host CSR.
/// svmlight labels are dropped (use read_svmlight to keep them); a dense .npy becomes the CSR of
/// its nonzero entries; an edge list becomes an n x n matrix, n = largest node id + 1.
template <class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> read_matrix(const std::filesystem::path& path,
                                                     const read_options& opts = {});

/// What describe() reports about a file.
struct matrix_file_info {
  file_format format;
  std::string format_name;  ///< to_string(format), plus " (gzip)" when the file was compressed
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  /// Entries stored in the file: the declared count of a Matrix Market file (before symmetric
  /// expansion; the values the layout lists for the array format), the nonzeros of an .npy, and
  /// for .npz, svmlight and edge lists the entries of the canonical CSR (duplicates summed).
  std::int64_t nnz = 0;
  std::string field;     ///< Matrix Market field, the dtype of .npy/.npz data ("<f8"), else "real"
  std::string symmetry;  ///< "general", "symmetric", "skew-symmetric"
};

/// Format, extents and stored entries of a file. Matrix Market files are described from their
/// header (the body is not parsed); .npy is read to count its nonzeros; .npz, svmlight and edge
/// lists are read completely. Throws io_error like the readers.
[[nodiscard]] matrix_file_info describe(const std::filesystem::path& path,
                                        const read_options& opts = {});

// ---- Matrix Market ------------------------------------------------------------------------------

enum class mm_format { coordinate, array };
enum class mm_field { real, integer, pattern };
enum class mm_symmetry { general, symmetric, skew_symmetric };

[[nodiscard]] const char* to_string(mm_format f) noexcept;
[[nodiscard]] const char* to_string(mm_field f) noexcept;
[[nodiscard]] const char* to_string(mm_symmetry s) noexcept;

/// The banner and size line of a Matrix Market file. complex and hermitian files are rejected with
/// io_error (spira's values are real).
struct mm_header {
  mm_format format = mm_format::coordinate;
  mm_field field = mm_field::real;
  mm_symmetry symmetry = mm_symmetry::general;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t entries = 0;  ///< declared stored entries (array format: those the layout lists)
};

[[nodiscard]] mm_header read_mm_header(const std::filesystem::path& path);

/// Reads a Matrix Market file into a canonical CSR. Symmetric files are expanded ((i,j) also stored
/// as (j,i); skew-symmetric as -v), pattern entries are 1, duplicates are summed, explicit zeros of
/// the coordinate format are kept. The array format keeps only its nonzero entries.
template <class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> read_mm(const std::filesystem::path& path,
                                                 const read_options& opts = {});

/// Writes `a` (host) as "coordinate real general" with 1-based indices; values use the shortest
/// decimal form that reads back to the same ValueT.
template <class ValueT, class IndexT>
void write_mm(const std::filesystem::path& path, csr_view<ValueT, IndexT> a);

/// Writes `a` (host) as "array real general" (column-major, as the format prescribes).
template <class ValueT>
void write_mm(const std::filesystem::path& path, dense_view<const ValueT> a);

// ---- svmlight / libsvm --------------------------------------------------------------------------

template <class ValueT, class IndexT>
struct svmlight_data {
  csr_matrix<ValueT, IndexT> x;  ///< one row per sample
  std::vector<double> labels;    ///< one per row
};

/// Reads "label [qid:q] idx:val idx:val ... [# comment]" lines. Blank and comment-only lines are
/// skipped; qid is ignored; duplicate indices in a line are summed. Columns:
/// opts.svmlight_features, or one past the largest (base-adjusted) index.
template <class ValueT, class IndexT>
[[nodiscard]] svmlight_data<ValueT, IndexT> read_svmlight(const std::filesystem::path& path,
                                                          const read_options& opts = {});

// ---- edge list ----------------------------------------------------------------------------------

/// Reads "src dst" or "src dst weight" lines (0-based node ids, '#' or '%' comment lines) into an
/// n x n CSR, n = largest id + 1; a missing weight is 1 and repeated edges are summed. Edges are
/// stored as given (no symmetrisation).
template <class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> read_edge_list(const std::filesystem::path& path,
                                                        const read_options& opts = {});

// ---- NumPy .npy ---------------------------------------------------------------------------------

/// Element types of .npy arrays spira reads (f4, f8, i4, i8 also written; bytes as an .npz member).
enum class npy_dtype { b1, i1, u1, i2, u2, i4, u4, i8, u8, f4, f8, bytes, unicode };

/// A parsed .npy header.
struct npy_header {
  npy_dtype dtype = npy_dtype::f8;
  std::string descr;  ///< as written in the file, e.g. "<f8"
  bool big_endian = false;
  std::size_t itemsize = 0;  ///< bytes per element
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
  int version_major = 1;
};

[[nodiscard]] npy_header read_npy_header(const std::filesystem::path& path);

/// Reads a 1-D (as n x 1) or 2-D .npy array; fortran_order arrays are transposed into row-major
/// order. T in {float, double, int32_t, int64_t}. Booleans and integers convert to any T; floating
/// point arrays only to float or double (io_error otherwise).
template <class T>
[[nodiscard]] dense_matrix<T> read_npy(const std::filesystem::path& path);

/// A 1-D .npy array (also accepts n x 1 and 1 x n).
template <class T>
[[nodiscard]] std::vector<T> read_npy_vector(const std::filesystem::path& path);

/// Writes a 2-D host array (dtype <f4, <f8, <i4 or <i8 from T), version 1.0 header, C order.
template <class T>
void write_npy(const std::filesystem::path& path, dense_view<const T> a);
/// Writes a 1-D array.
template <class T>
void write_npy(const std::filesystem::path& path, std::span<const T> v);

/// Writes a rows x cols .npy array block of rows after block of rows, so that the whole array is
/// never held: the header first (the shape is known), then append() the rows in order, then
/// commit(). Like every writer it writes a temporary file in the target's directory and renames it
/// onto `path` on commit(); destroyed before commit() (an error on the way) it removes the
/// temporary and leaves nothing behind.
template <class T>
class npy_row_writer {
 public:
  npy_row_writer(const std::filesystem::path& path, std::int64_t rows, std::int64_t cols);
  npy_row_writer(npy_row_writer&&) noexcept;
  npy_row_writer& operator=(npy_row_writer&&) noexcept;
  ~npy_row_writer();

  /// Appends the next block.rows rows (block.cols == cols, host memory).
  void append(dense_view<const T> block);
  /// Requires all rows appended; makes the file appear at `path`.
  void commit();

 private:
  struct state;
  std::unique_ptr<state> state_;
};

// ---- .npz ---------------------------------------------------------------------------------------

/// Reads a scipy.sparse.save_npz file (compressed or not). format "csr" is read directly, "csc" is
/// transposed into CSR; other sparse formats are rejected. The result is canonicalised.
template <class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> read_npz(const std::filesystem::path& path,
                                                  const read_options& opts = {});

/// Names of the arrays in an .npz (member names without ".npy"), in archive order.
[[nodiscard]] std::vector<std::string> npz_names(const std::filesystem::path& path);

/// One named array of an .npz, read as read_npy reads a file.
template <class T>
[[nodiscard]] dense_matrix<T> read_npz_array(const std::filesystem::path& path,
                                             std::string_view name);

/// A named host array to store in an .npz (row-major): rows x cols (ndim 2), rows * cols elements
/// (ndim 1) or one element (ndim 0, rows = cols = 1). The data is not copied: it must outlive
/// write_npz.
struct npz_entry {
  std::string name;
  npy_dtype dtype = npy_dtype::f8;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;  ///< elements between rows
  const void* data = nullptr;
  int ndim = 2;
  std::size_t itemsize = 0;  ///< bytes per element of a npy_dtype::bytes array (numpy's |S<n>)

  /// T in {float, double, int32_t, int64_t}.
  template <class T>
  static npz_entry of(std::string name, dense_view<const T> a);
  template <class T>
  static npz_entry of(std::string name, std::span<const T> v);
  /// A 0-d byte string, numpy's np.array(b"csr") (dtype |S3): the `format` member of a
  /// scipy.sparse .npz. `bytes` is not empty.
  static npz_entry of_bytes(std::string name, std::string_view bytes)
  {
    return {std::move(name), npy_dtype::bytes, 1, 1, 1, bytes.data(), 0, bytes.size()};
  }
};

/// Removes the temporary files of the writers still in progress (async-signal-safe: a program's
/// SIGINT/SIGTERM handler calls it so that an interrupted run leaves nothing behind; the spira
/// CLI does). Normal failures need no call: the writers clean up after themselves.
void remove_unfinished_outputs() noexcept;

struct npz_write_options {
  /// Write the zip64 records for every member and the archive. Off: only where a member, an
  /// offset or the archive reaches 4 GiB (or 65535 members), as zip64 requires.
  bool zip64 = false;
};

/// Writes the arrays as an uncompressed (stored) zip with valid CRC-32s and a fixed timestamp, so
/// the output is byte-for-byte deterministic; numpy.load(path)[name] returns each array. Members
/// and archives of 4 GiB and more are written as zip64 (which numpy reads). The file appears only
/// when complete (written under a temporary name in its directory, then renamed); on an error
/// nothing is left behind.
void write_npz(const std::filesystem::path& path, std::span<const npz_entry> entries,
               const npz_write_options& options = {});

// ---- inline definitions -------------------------------------------------------------------------

namespace detail {
template <class T>
constexpr npy_dtype npy_dtype_of() noexcept
{
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>,
                "spira::io: arrays are written as float, double, int32_t or int64_t");
  if constexpr (std::is_same_v<T, float>) {
    return npy_dtype::f4;
  } else if constexpr (std::is_same_v<T, double>) {
    return npy_dtype::f8;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return npy_dtype::i4;
  } else {
    return npy_dtype::i8;
  }
}
}  // namespace detail

template <class T>
npz_entry npz_entry::of(std::string name, dense_view<const T> a)
{
  return {std::move(name), detail::npy_dtype_of<T>(), a.rows, a.cols, a.ld, a.data, 2};
}

template <class T>
npz_entry npz_entry::of(std::string name, std::span<const T> v)
{
  const auto n = static_cast<std::int64_t>(v.size());
  return {std::move(name), detail::npy_dtype_of<T>(), n, 1, 1, v.data(), 1};
}

}  // namespace spira::io
