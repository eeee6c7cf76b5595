// Matrix Market reader and writers.
#include <spira/detail/type_lists.hpp>
#include "io_common.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace spira::io {

const char* to_string(mm_format f) noexcept
{
  return f == mm_format::coordinate ? "coordinate" : "array";
}

const char* to_string(mm_field f) noexcept
{
  switch (f) {
    case mm_field::real:
      return "real";
    case mm_field::integer:
      return "integer";
    case mm_field::pattern:
      return "pattern";
  }
  return "?";
}

const char* to_string(mm_symmetry s) noexcept
{
  switch (s) {
    case mm_symmetry::general:
      return "general";
    case mm_symmetry::symmetric:
      return "symmetric";
    case mm_symmetry::skew_symmetric:
      return "skew-symmetric";
  }
  return "?";
}

namespace detail {
namespace {

bool iequals(std::string_view a, std::string_view b) noexcept
{
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool is_comment_or_blank(std::string_view line) noexcept
{
  for (char c : line) {
    if (!is_space(c)) {
      return c == '%';
    }
  }
  return true;
}

std::int64_t parse_count(const std::filesystem::path& path, std::int64_t line, std::string_view tok,
                         const char* what)
{
  if (tok.empty()) {
    fail_line(path, line, "size line: missing ", what);
  }
  std::int64_t v = 0;
  switch (parse_int(tok, v)) {
    case parse_status::invalid:
      fail_line(path, line, "size line: ", what, " ", show_token(tok), " is not an integer");
    case parse_status::out_of_range:
      fail_line(path, line, "size line: ", what, " ", show_token(tok),
                " overflows a 64-bit integer");
    case parse_status::ok:
      break;
  }
  if (v < 0) {
    fail_line(path, line, "size line: ", what, " must be >= 0, got ", v);
  }
  return v;
}

/// Multiplies non-negative counts, failing on int64 overflow.
std::int64_t checked_mul(const std::filesystem::path& path, std::int64_t line, std::int64_t a,
                         std::int64_t b)
{
  if (a != 0 && b > std::numeric_limits<std::int64_t>::max() / a) {
    fail_line(path, line, "size line: ", a, " x ", b, " entries overflow a 64-bit count");
  }
  return a * b;
}

/// Parses the banner, comments and size line; leaves `cur` on the size line.
mm_header parse_header(line_cursor& cur, const std::filesystem::path& path)
{
  std::string_view line;
  if (!cur.next(line)) {
    fail(path, "empty file (expected a %%MatrixMarket banner)");
  }
  token_cursor tc(line);
  const auto banner = tc.next();
  if (!iequals(banner, "%%MatrixMarket")) {
    fail_line(path, 1,
              "not a Matrix Market file: the first line must start with %%MatrixMarket, got ",
              show_token(line));
  }
  const auto object = tc.next();
  const auto format = tc.next();
  const auto field = tc.next();
  const auto symmetry = tc.next();
  if (!iequals(object, "matrix")) {
    fail_line(path, 1, "banner: object ", show_token(object),
              " is not supported (expected 'matrix')");
  }
  mm_header h;
  if (iequals(format, "coordinate")) {
    h.format = mm_format::coordinate;
  } else if (iequals(format, "array")) {
    h.format = mm_format::array;
  } else {
    fail_line(path, 1, "banner: format ", show_token(format), " (expected coordinate or array)");
  }
  if (iequals(field, "real") || iequals(field, "double")) {
    h.field = mm_field::real;
  } else if (iequals(field, "integer")) {
    h.field = mm_field::integer;
  } else if (iequals(field, "pattern")) {
    h.field = mm_field::pattern;
  } else if (iequals(field, "complex")) {
    fail_line(path, 1, "banner: complex matrices are not supported (spira's values are real)");
  } else {
    fail_line(path, 1, "banner: field ", show_token(field), " (expected real, integer or pattern)");
  }
  if (iequals(symmetry, "general")) {
    h.symmetry = mm_symmetry::general;
  } else if (iequals(symmetry, "symmetric")) {
    h.symmetry = mm_symmetry::symmetric;
  } else if (iequals(symmetry, "skew-symmetric")) {
    h.symmetry = mm_symmetry::skew_symmetric;
  } else if (iequals(symmetry, "hermitian")) {
    fail_line(path, 1, "banner: hermitian matrices are not supported (spira's values are real)");
  } else {
    fail_line(path, 1, "banner: symmetry ", show_token(symmetry),
              " (expected general, symmetric or skew-symmetric)");
  }
  if (!tc.at_end()) {
    fail_line(path, 1, "banner: unexpected text after the symmetry");
  }
  if (h.format == mm_format::array && h.field == mm_field::pattern) {
    fail_line(path, 1, "banner: 'array pattern' is not a valid Matrix Market combination");
  }
  if (h.field == mm_field::pattern && h.symmetry == mm_symmetry::skew_symmetric) {
    fail_line(path, 1, "banner: 'pattern skew-symmetric' is not a valid Matrix Market combination");
  }

  do {
    if (!cur.next(line)) {
      fail(path, "missing size line after the banner and comments");
    }
  } while (is_comment_or_blank(line));

  const std::int64_t ln = cur.line_no();
  token_cursor sc(line);
  h.rows = parse_count(path, ln, sc.next(), "row count");
  h.cols = parse_count(path, ln, sc.next(), "column count");
  if (h.format == mm_format::coordinate) {
    h.entries = parse_count(path, ln, sc.next(), "entry count");
  }
  if (!sc.at_end()) {
    fail_line(path, ln, "size line: unexpected text after the ",
              h.format == mm_format::coordinate ? "entry count" : "column count");
  }
  if (h.symmetry != mm_symmetry::general && h.rows != h.cols) {
    fail_line(path, ln, to_string(h.symmetry), " matrix must be square, got ", h.rows, " x ",
              h.cols);
  }
  if (h.format == mm_format::array) {
    const std::int64_t n = h.rows;
    switch (h.symmetry) {
      case mm_symmetry::general:
        h.entries = checked_mul(path, ln, h.rows, h.cols);
        break;
      case mm_symmetry::symmetric:
        // n (n + 1) / 2, halving the even factor first so that nothing overflows before the check.
        h.entries = checked_mul(path, ln, n % 2 == 0 ? n / 2 : n, n % 2 == 0 ? n + 1 : n / 2 + 1);
        break;
      case mm_symmetry::skew_symmetric:
        h.entries = n == 0 ? 0
                           : checked_mul(path, ln, n % 2 == 0 ? n / 2 : n,
                                         n % 2 == 0 ? n - 1 : (n - 1) / 2);
        break;
    }
  }
  return h;
}

template <class ValueT>
ValueT parse_value(const std::filesystem::path& path, std::int64_t line, std::string_view tok,
                   mm_field field)
{
  if (tok.empty()) {
    fail_line(path, line, "missing value");
  }
  if (field == mm_field::integer) {
    std::int64_t v = 0;
    switch (parse_int(tok, v)) {
      case parse_status::invalid:
        fail_line(path, line, "value ", show_token(tok),
                  " is not an integer (the field is integer)");
      case parse_status::out_of_range:
        fail_line(path, line, "value ", show_token(tok), " overflows a 64-bit integer");
      case parse_status::ok:
        break;
    }
    return static_cast<ValueT>(v);
  }
  ValueT v{};
  if (parse_real(tok, v) != parse_status::ok) {
    fail_line(path, line, "value ", show_token(tok), " is not a number");
  }
  return v;
}

std::int64_t parse_index(const std::filesystem::path& path, std::int64_t line, std::string_view tok,
                         std::int64_t extent, const char* what)
{
  if (tok.empty()) {
    fail_line(path, line, "missing ", what, " index");
  }
  std::int64_t v = 0;
  switch (parse_int(tok, v)) {
    case parse_status::invalid:
      fail_line(path, line, what, " index ", show_token(tok), " is not an integer");
    case parse_status::out_of_range:
      fail_line(path, line, what, " index ", show_token(tok), " overflows a 64-bit integer");
    case parse_status::ok:
      break;
  }
  if (v < 1 || v > extent) {
    fail_line(path, line, what, " index ", v, " is out of range [1, ", extent, "]");
  }
  return v - 1;
}

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> parse_coordinate(line_cursor& cur, const mm_header& h,
                                            const std::filesystem::path& path)
{
  const bool mirror = h.symmetry != mm_symmetry::general;
  const bool skew = h.symmetry == mm_symmetry::skew_symmetric;
  triplets<ValueT, IndexT> t;
  t.reserve(static_cast<std::size_t>(h.entries) * (mirror ? 2 : 1));
  std::int64_t seen = 0;
  std::string_view line;
  while (cur.next(line)) {
    if (is_comment_or_blank(line)) {
      continue;
    }
    const std::int64_t ln = cur.line_no();
    if (seen == h.entries) {
      fail_line(path, ln, "more entries than the ", h.entries, " declared in the size line");
    }
    token_cursor tc(line);
    const std::int64_t i = parse_index(path, ln, tc.next(), h.rows, "row");
    const std::int64_t j = parse_index(path, ln, tc.next(), h.cols, "column");
    const ValueT v = h.field == mm_field::pattern
                         ? ValueT(1)
                         : parse_value<ValueT>(path, ln, tc.next(), h.field);
    if (!tc.at_end()) {
      fail_line(path, ln, "unexpected text after the entry");
    }
    if (skew && i == j && v != ValueT(0)) {
      fail_line(path, ln, "skew-symmetric matrix stores a nonzero diagonal entry (", i + 1, ", ",
                j + 1, ")");
    }
    t.push(IndexT(i), IndexT(j), v);
    if (mirror && i != j) {
      t.push(IndexT(j), IndexT(i), skew ? -v : v);
    }
    ++seen;
  }
  if (seen < h.entries) {
    fail_line(path, cur.line_no(), "truncated: the file ends after ", seen, " of the ", h.entries,
              " entries declared in the size line");
  }
  return t.to_csr(h.rows, h.cols);
}

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> parse_array(line_cursor& cur, const mm_header& h,
                                       const std::filesystem::path& path)
{
  const bool mirror = h.symmetry != mm_symmetry::general;
  const bool skew = h.symmetry == mm_symmetry::skew_symmetric;
  triplets<ValueT, IndexT> t;
  // Column-major; symmetric lists i >= j, skew-symmetric i > j.
  const std::int64_t first_row_offset = skew ? 1 : 0;
  std::int64_t i = h.symmetry == mm_symmetry::general ? 0 : first_row_offset;
  std::int64_t j = 0;
  std::int64_t seen = 0;
  std::string_view line;
  while (cur.next(line)) {
    if (is_comment_or_blank(line)) {
      continue;
    }
    const std::int64_t ln = cur.line_no();
    if (seen == h.entries) {
      fail_line(path, ln, "more values than the ", h.entries, " the size line implies");
    }
    token_cursor tc(line);
    const ValueT v = parse_value<ValueT>(path, ln, tc.next(), h.field);
    if (!tc.at_end()) {
      fail_line(path, ln, "unexpected text after the value");
    }
    if (v != ValueT(0)) {
      t.push(IndexT(i), IndexT(j), v);
      if (mirror && i != j) {
        t.push(IndexT(j), IndexT(i), skew ? -v : v);
      }
    }
    ++seen;
    if (++i == h.rows) {
      ++j;
      i = h.symmetry == mm_symmetry::general ? 0 : j + first_row_offset;
    }
  }
  if (seen < h.entries) {
    fail_line(path, cur.line_no(), "truncated: the file ends after ", seen, " of the ", h.entries,
              " values the size line implies");
  }
  return t.to_csr(h.rows, h.cols);
}

}  // namespace

/// Checks the declared sizes against the bytes that follow the size line.
void check_declared_size(const mm_header& h, std::size_t remaining, std::int64_t line,
                         const std::filesystem::path& path)
{
  // Shortest possible entry: "1 1\n" (pattern), "1 1 1\n" (coordinate), "1\n" (array); the last
  // newline may be missing.
  const std::uint64_t min_bytes = h.format == mm_format::array   ? 2
                                  : h.field == mm_field::pattern ? 4
                                                                 : 6;
  // entries * min_bytes - 1 <= remaining, written without overflow.
  if (static_cast<std::uint64_t>(h.entries) > (std::uint64_t{remaining} + 1) / min_bytes) {
    fail_line(path, line, "the size line declares ", h.entries, " entries but only ", remaining,
              " bytes follow it (truncated file or wrong size line)");
  }
}

}  // namespace detail

mm_header read_mm_header(const std::filesystem::path& path)
{
  const auto file = detail::load_file(path);
  detail::line_cursor cur(file.data);
  return detail::parse_header(cur, path);
}

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> read_mm(const std::filesystem::path& path, const read_options& opts)
{
  const auto file = detail::load_file(path);
  detail::line_cursor cur(file.data);
  const mm_header h = detail::parse_header(cur, path);
  const std::int64_t size_line = cur.line_no();
  detail::check_declared_size(h, cur.remaining(), size_line, path);
  detail::check_extents<IndexT>(path, size_line, h.rows, h.cols, opts);
  return h.format == mm_format::coordinate ? detail::parse_coordinate<ValueT, IndexT>(cur, h, path)
                                           : detail::parse_array<ValueT, IndexT>(cur, h, path);
}

namespace {

/// Buffered text output for the writers (one fwrite per 1 MiB).
class text_sink {
 public:
  text_sink(std::FILE* f, const std::filesystem::path& path) : f_(f), path_(path) {}
  void put(std::string_view s)
  {
    if (buf_.size() + s.size() > capacity) {
      flush();
    }
    buf_.append(s);
  }
  template <class T>
  void number(T v)
  {
    std::array<char, 64> tmp{};
    const auto [end, ec] = std::to_chars(tmp.data(), tmp.data() + tmp.size(), v);
    put(std::string_view(tmp.data(), static_cast<std::size_t>(end - tmp.data())));
  }
  void flush()
  {
    detail::write_all(f_, buf_.data(), buf_.size(), path_);
    buf_.clear();
  }

 private:
  static constexpr std::size_t capacity = std::size_t{1} << 20;
  std::FILE* f_;
  const std::filesystem::path& path_;
  std::string buf_;
};

}  // namespace

template <class ValueT, class IndexT>
void write_mm(const std::filesystem::path& path, csr_view<ValueT, IndexT> a)
{
  spira::detail::expects(a.space == memory_space::host,
                         "spira::io::write_mm: the matrix must be in host memory");
  validate(detail::convert_resources(a.nnz), a, csr_check::valid, "spira::io::write_mm: matrix");
  detail::output_file file(path);
  text_sink out(file.get(), path);
  out.put("%%MatrixMarket matrix coordinate real general\n");
  out.number(a.rows);
  out.put(" ");
  out.number(a.cols);
  out.put(" ");
  out.number(a.nnz);
  out.put("\n");
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (offset_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      out.number(i + 1);
      out.put(" ");
      out.number(std::int64_t(a.col_idx[k]) + 1);
      out.put(" ");
      out.number(a.values[k]);
      out.put("\n");
    }
  }
  out.flush();
  file.commit();
}

template <class ValueT>
void write_mm(const std::filesystem::path& path, dense_view<const ValueT> a)
{
  spira::detail::expects(a.space == memory_space::host,
                         "spira::io::write_mm: the array must be in host memory");
  spira::detail::expects(a.rows >= 0 && a.cols >= 0 && (a.rows == 0 || a.ld >= a.cols),
                         "spira::io::write_mm: bad dense extents ", a.rows, " x ", a.cols, " (ld ",
                         a.ld, ")");
  detail::output_file file(path);
  text_sink out(file.get(), path);
  out.put("%%MatrixMarket matrix array real general\n");
  out.number(a.rows);
  out.put(" ");
  out.number(a.cols);
  out.put("\n");
  for (std::int64_t j = 0; j < a.cols; ++j) {
    for (std::int64_t i = 0; i < a.rows; ++i) {
      out.number(a(i, j));
      out.put("\n");
    }
  }
  out.flush();
  file.commit();
}

#define SPIRA_IO_INSTANTIATE(V, I)                                                            \
  template csr_matrix<V, I> read_mm<V, I>(const std::filesystem::path&, const read_options&); \
  template void write_mm<V, I>(const std::filesystem::path&, csr_view<V, I>);
SPIRA_FOR_EACH_VALUE_INDEX(SPIRA_IO_INSTANTIATE)
#undef SPIRA_IO_INSTANTIATE
template void write_mm<float>(const std::filesystem::path&, dense_view<const float>);
template void write_mm<double>(const std::filesystem::path&, dense_view<const double>);

}  // namespace spira::io
