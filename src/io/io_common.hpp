// Internal helpers shared by the readers and writers: whole-file loading (with transparent gzip),
// error formatting with file and line, a line cursor and allocation-free number parsing.
#pragma once

#include <spira/convert.hpp>
#include <spira/error.hpp>
#include <spira/io.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace spira::io::detail {

/// The contents of a file, decompressed when it was gzip-compressed.
struct file_bytes {
  std::string data;
  bool gzip = false;
};

/// Reads the whole file; decompresses it when it starts with the gzip magic bytes 1f 8b. Throws
/// io_error for a missing file, a directory, a read error or a corrupt/truncated gzip stream.
file_bytes load_file(const std::filesystem::path& path);

/// Reads the whole file without decompressing.
std::string load_raw(const std::filesystem::path& path);

/// The path as written in messages.
inline std::string display(const std::filesystem::path& path)
{
  return path.string();
}

template <class... Parts>
[[noreturn]] void fail(const std::filesystem::path& path, const Parts&... parts)
{
  // A corrupt file's bytes (member names, header text) are escaped, never echoed raw.
  throw io_error(spira::detail::printable(spira::detail::concat(display(path), ": ", parts...)));
}

template <class... Parts>
[[noreturn]] void fail_line(const std::filesystem::path& path, std::int64_t line,
                            const Parts&... parts)
{
  throw io_error(
      spira::detail::printable(spira::detail::concat(display(path), ":", line, ": ", parts...)));
}

/// Iterates over the lines of a text buffer (LF or CRLF; the last line may lack a newline).
class line_cursor {
 public:
  explicit line_cursor(std::string_view text) : text_(text) {}

  /// Advances to the next line; false at the end of the text.
  bool next(std::string_view& line)
  {
    if (pos_ >= text_.size()) {
      return false;
    }
    const char* begin = text_.data() + pos_;
    const auto* nl = static_cast<const char*>(std::memchr(begin, '\n', text_.size() - pos_));
    std::size_t len = nl != nullptr ? static_cast<std::size_t>(nl - begin) : text_.size() - pos_;
    pos_ += len + (nl != nullptr ? 1 : 0);
    if (len > 0 && begin[len - 1] == '\r') {
      --len;
    }
    line = std::string_view(begin, len);
    ++line_no_;
    return true;
  }

  /// 1-based number of the line last returned by next().
  [[nodiscard]] std::int64_t line_no() const noexcept { return line_no_; }
  /// Bytes not yet consumed.
  [[nodiscard]] std::size_t remaining() const noexcept { return text_.size() - pos_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::int64_t line_no_ = 0;
};

inline bool is_space(char c) noexcept
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/// Splits whitespace-separated tokens off the front of a line.
class token_cursor {
 public:
  explicit token_cursor(std::string_view line) : p_(line.data()), end_(line.data() + line.size()) {}

  /// Next token, or an empty view at the end of the line.
  std::string_view next() noexcept
  {
    while (p_ != end_ && is_space(*p_)) {
      ++p_;
    }
    const char* b = p_;
    while (p_ != end_ && !is_space(*p_)) {
      ++p_;
    }
    return {b, static_cast<std::size_t>(p_ - b)};
  }
  [[nodiscard]] bool at_end() noexcept
  {
    while (p_ != end_ && is_space(*p_)) {
      ++p_;
    }
    return p_ == end_;
  }

 private:
  const char* p_;
  const char* end_;
};

/// Quotes a token for a message, shortened when long.
inline std::string show_token(std::string_view tok)
{
  constexpr std::size_t max_shown = 40;
  std::string s = "'";
  for (char c : tok.substr(0, max_shown)) {
    s += (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f) ? c : '?';
  }
  if (tok.size() > max_shown) {
    s += "...";
  }
  s += "'";
  return s;
}

enum class parse_status { ok, invalid, out_of_range };

/// Parses a whole token as a base-10 int64 (an optional leading '+' is allowed).
inline parse_status parse_int(std::string_view tok, std::int64_t& out) noexcept
{
  if (!tok.empty() && tok.front() == '+') {
    tok.remove_prefix(1);
  }
  if (tok.empty()) {
    return parse_status::invalid;
  }
  const auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), out);
  if (ec == std::errc::result_out_of_range) {
    return parse_status::out_of_range;
  }
  if (ec != std::errc{} || ptr != tok.data() + tok.size()) {
    return parse_status::invalid;
  }
  return parse_status::ok;
}

/// Parses a whole token as a floating-point number (decimal, exponent, inf, nan; optional '+').
/// Values beyond the range of T become +-inf, as strtod does; underflow becomes 0 / a subnormal.
template <class T>
parse_status parse_real(std::string_view tok, T& out) noexcept
{
  if (!tok.empty() && tok.front() == '+') {
    tok.remove_prefix(1);
  }
  if (tok.empty()) {
    return parse_status::invalid;
  }
  const auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), out);
  if (ptr != tok.data() + tok.size()) {
    return parse_status::invalid;
  }
  if (ec == std::errc::result_out_of_range) {
    // from_chars leaves `out` unchanged on range errors; strtod gives +-HUGE_VAL or the underflow.
    const std::string copy(tok);
    if constexpr (std::is_same_v<T, float>) {
      out = std::strtof(copy.c_str(), nullptr);
    } else {
      out = std::strtod(copy.c_str(), nullptr);
    }
    return parse_status::ok;
  }
  if (ec != std::errc{}) {
    return parse_status::invalid;
  }
  return parse_status::ok;
}

/// Checks that a row count can be allocated as row pointers (read_options::max_rows) and that
/// rows and columns fit IndexT.
template <class IndexT>
void check_extents(const std::filesystem::path& path, std::int64_t line, std::int64_t rows,
                   std::int64_t cols, const read_options& opts)
{
  auto where = [&](auto... parts) {
    if (line > 0) {
      fail_line(path, line, parts...);
    }
    fail(path, parts...);
  };
  if (rows < 0 || cols < 0) {
    where("negative extent ", rows, " x ", cols);
  }
  if (!spira::detail::fits_index<IndexT>(rows) || !spira::detail::fits_index<IndexT>(cols)) {
    where("extent ", rows, " x ", cols, " does not fit the ", sizeof(IndexT) * 8,
          "-bit index type");
  }
  if (rows > opts.max_rows) {
    where(rows, " rows exceed read_options::max_rows = ", opts.max_rows,
          " (raise it to read this matrix)");
  }
}

/// Below this many entries the readers convert on one thread: thread start-up and barrier costs of
/// an OpenMP region exceed the work (measured with the fuzz targets on a loaded 2-core machine,
/// where small inputs ran ~20x faster single-threaded).
inline constexpr std::int64_t parallel_convert_min_nnz = std::int64_t{1} << 16;

/// The host resources used to convert a matrix of `nnz` entries.
inline host_resources convert_resources(std::int64_t nnz) noexcept
{
  return host_resources{nnz < parallel_convert_min_nnz ? 1 : 0};
}

/// True when every row of a valid host CSR has strictly increasing columns (the matrix is what
/// canonicalize without drop_zeros would return). O(rows + nnz), no memory.
template <class ValueT, class IndexT>
bool is_canonical(csr_view<ValueT, IndexT> m)
{
  for (std::int64_t i = 0; i < m.rows; ++i) {
    for (offset_t k = m.row_ptr[i] + 1; k < m.row_ptr[i + 1]; ++k) {
      if (m.col_idx[k - 1] >= m.col_idx[k]) {
        return false;
      }
    }
  }
  return true;
}

/// Growable COO triplets; capacity grows geometrically from a cap, never from a declared count.
template <class ValueT, class IndexT>
struct triplets {
  std::vector<IndexT> rows;
  std::vector<IndexT> cols;
  std::vector<ValueT> values;

  void reserve(std::size_t n)
  {
    rows.reserve(n);
    cols.reserve(n);
    values.reserve(n);
  }
  void push(IndexT i, IndexT j, ValueT v)
  {
    rows.push_back(i);
    cols.push_back(j);
    values.push_back(v);
  }
  [[nodiscard]] std::size_t size() const noexcept { return values.size(); }

  csr_matrix<ValueT, IndexT> to_csr(std::int64_t n_rows, std::int64_t n_cols) const
  {
    coo_view<ValueT, IndexT> v{n_rows,
                               n_cols,
                               static_cast<std::int64_t>(values.size()),
                               rows.data(),
                               cols.data(),
                               values.data(),
                               memory_space::host};
    return coo_to_csr(convert_resources(v.nnz), v);
  }
};

/// Number of bytes of `path` on disk (for messages and size checks).
std::uintmax_t file_size_or_fail(const std::filesystem::path& path);

/// Writes all bytes or throws io_error.
void write_all(std::FILE* f, const void* data, std::size_t n, const std::filesystem::path& path);

/// The output of every writer: a temporary file in the target's directory (".NAME.spira-XXXXXX"),
/// renamed onto `target` by commit() after its data reached the disk (fflush, fsync, fclose all
/// checked). Destroyed without commit (an exception on the way, a full disk) it removes the
/// temporary: the target is then untouched, never half-written. Errors are io_error naming the
/// target and the system's reason.
class output_file {
 public:
  explicit output_file(const std::filesystem::path& target);
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;
  ~output_file();

  [[nodiscard]] std::FILE* get() const noexcept { return f_; }
  [[nodiscard]] const std::filesystem::path& target() const noexcept { return target_; }
  void write(const void* data, std::size_t n) { write_all(f_, data, n, target_); }
  /// Makes the written bytes the target (atomically replacing a file of that name).
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  std::FILE* f_ = nullptr;
  int slot_ = -1;  ///< its entry for remove_unfinished_outputs()
};

/// Closes a FILE* on scope exit unless released (used on error paths of the writers).
class file_closer {
 public:
  explicit file_closer(std::FILE* f) : f_(f) {}
  file_closer(const file_closer&) = delete;
  file_closer& operator=(const file_closer&) = delete;
  ~file_closer()
  {
    if (f_ != nullptr) {
      std::fclose(f_);
    }
  }
  [[nodiscard]] std::FILE* get() const noexcept { return f_; }
  std::FILE* release() noexcept
  {
    std::FILE* f = f_;
    f_ = nullptr;
    return f;
  }

 private:
  std::FILE* f_;
};

// ---- .npy parsing from memory (shared by the npy and npz readers) -------------------------------

/// A parsed array header plus the location of its data inside a byte buffer.
struct npy_block {
  npy_header header;
  std::string_view data;  ///< exactly product(shape) * itemsize bytes
};

/// A shape as numpy prints it: "(3,)", "(3, 4)", "()".
std::string shape_string(const std::vector<std::int64_t>& shape);

/// A scalar of type S from the (unaligned) bytes at p, byte-swapped when `swap`.
template <class S>
S load_scalar(const char* p, bool swap) noexcept
{
  S v;
  std::memcpy(&v, p, sizeof(S));
  if (swap) {
    auto* b = reinterpret_cast<unsigned char*>(&v);
    std::reverse(b, b + sizeof(S));
  }
  return v;
}

/// Parses an .npy image held in memory; `what` names it in messages (file, or "file[member]").
npy_block parse_npy(std::string_view bytes, const std::string& what);

/// Number of elements of a shape (checked for overflow against `limit`).
std::int64_t element_count(const std::vector<std::int64_t>& shape, const std::string& what);

/// Converts element k of the block to T (T float/double/int32/int64); throws for a float source
/// into an integer T, values out of the range of an integer T, and bytes/unicode dtypes.
template <class T>
void convert_elements(const npy_block& b, T* out, const std::string& what);

/// Builds a 2-D (or 1-D as n x 1) dense matrix from a block (transposing fortran_order arrays).
template <class T>
dense_matrix<T> block_to_dense(const npy_block& b, const std::string& what);

/// The text of a 0-d or 1-element bytes/unicode array (scipy's format.npy).
std::string block_to_string(const npy_block& b, const std::string& what);

/// A serialised version 1.0 header for a C-order array of `dtype` and `shape` (empty: a 0-d
/// array). `itemsize` is the length of a npy_dtype::bytes element (|S<itemsize>); the other
/// written dtypes (f4, f8, i4, i8) have theirs.
std::string make_npy_header(npy_dtype dtype, const std::vector<std::int64_t>& shape,
                            std::size_t itemsize = 0);

/// Bytes per element of a writable dtype.
std::size_t dtype_size(npy_dtype d) noexcept;

// ---- zip (shared by the npz reader) -------------------------------------------------------------

struct zip_member {
  std::string name;
  std::uint16_t method = 0;  ///< 0 stored, 8 deflate
  std::uint32_t crc = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;
  std::uint64_t data_offset = 0;  ///< of the member's data within the archive
};

/// Parses the central directory of a zip held in memory.
std::vector<zip_member> zip_directory(std::string_view archive, const std::filesystem::path& path);

/// Extracts (inflating if needed) and CRC-checks one member.
std::string zip_extract(std::string_view archive, const zip_member& m,
                        const std::filesystem::path& path);

/// True when the file starts with the gzip magic bytes.
bool is_gzip(const std::filesystem::path& path);

/// Description of a scipy sparse .npz (format, shape, entries after canonicalisation, data dtype).
matrix_file_info describe_npz(const std::filesystem::path& path, const read_options& opts);

}  // namespace spira::io::detail
