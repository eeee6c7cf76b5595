// NumPy .npy reader and writer.
#include "io_common.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace spira::io {

namespace detail {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the .npy reader assumes a little-endian host ('=' byte order)");

constexpr std::string_view npy_magic{"\x93NUMPY", 6};

/// A value of the Python literal subset used by .npy headers.
struct py_value {
  enum class kind { string, boolean, integer, none, tuple };
  kind k = kind::none;
  std::string s;
  bool b = false;
  std::int64_t i = 0;
  std::vector<py_value> items;
};

/// Recursive-descent parser for the header dict: {'descr': '<f8', 'fortran_order': False,
/// 'shape': (3, 4), }. Lists (structured dtypes) and anything else are rejected.
class header_parser {
 public:
  header_parser(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  std::vector<std::pair<std::string, py_value>> dict()
  {
    std::vector<std::pair<std::string, py_value>> out;
    expect('{');
    for (;;) {
      skip();
      if (peek() == '}') {
        ++p_;
        break;
      }
      py_value key = value(0);
      if (key.k != py_value::kind::string) {
        bad("dictionary keys must be strings");
      }
      expect(':');
      out.emplace_back(key.s, value(0));
      skip();
      if (peek() == ',') {
        ++p_;
      } else if (peek() != '}') {
        bad("expected ',' or '}'");
      }
    }
    skip();
    if (p_ != s_.size()) {
      bad("unexpected text after the dictionary");
    }
    return out;
  }

 private:
  static constexpr int max_depth = 4;

  [[noreturn]] void bad(const char* why) const
  {
    throw io_error(spira::detail::concat(what_, ": malformed .npy header (", why, " at offset ", p_,
                                         "): ", show_token(s_)));
  }
  char peek() const noexcept { return p_ < s_.size() ? s_[p_] : '\0'; }
  void skip() noexcept
  {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n')) {
      ++p_;
    }
  }
  void expect(char c)
  {
    skip();
    if (peek() != c) {
      const char msg[] = {'e', 'x', 'p', 'e', 'c', 't', 'e', 'd', ' ', '\'', c, '\'', '\0'};
      bad(msg);
    }
    ++p_;
  }
  bool take_word(std::string_view w) noexcept
  {
    if (s_.substr(p_, w.size()) == w) {
      p_ += w.size();
      return true;
    }
    return false;
  }

  py_value value(int depth)
  {
    if (depth > max_depth) {
      bad("nesting too deep");
    }
    skip();
    py_value v;
    const char c = peek();
    if (c == '\'' || c == '"') {
      ++p_;
      const auto end = s_.find(c, p_);
      if (end == std::string_view::npos) {
        bad("unterminated string");
      }
      v.k = py_value::kind::string;
      v.s = std::string(s_.substr(p_, end - p_));
      p_ = end + 1;
    } else if (c == '(') {
      ++p_;
      v.k = py_value::kind::tuple;
      for (;;) {
        skip();
        if (peek() == ')') {
          ++p_;
          break;
        }
        v.items.push_back(value(depth + 1));
        skip();
        if (peek() == ',') {
          ++p_;
        } else if (peek() != ')') {
          bad("expected ',' or ')' in a tuple");
        }
      }
    } else if (c == '[') {
      bad("structured dtypes (a list descr) are not supported");
    } else if (take_word("True")) {
      v.k = py_value::kind::boolean;
      v.b = true;
    } else if (take_word("False")) {
      v.k = py_value::kind::boolean;
    } else if (take_word("None")) {
      v.k = py_value::kind::none;
    } else if ((c >= '0' && c <= '9') || c == '-') {
      std::size_t e = p_ + 1;
      while (e < s_.size() && s_[e] >= '0' && s_[e] <= '9') {
        ++e;
      }
      // Python 2 era headers write longs as "3L".
      std::string_view digits = s_.substr(p_, e - p_);
      if (e < s_.size() && s_[e] == 'L') {
        ++e;
      }
      v.k = py_value::kind::integer;
      if (parse_int(digits, v.i) != parse_status::ok) {
        bad("integer out of range");
      }
      p_ = e;
    } else {
      bad("unexpected character");
    }
    return v;
  }

  std::string_view s_;
  const std::string& what_;
  std::size_t p_ = 0;
};

void parse_descr(npy_header& h, const std::string& what)
{
  const std::string& d = h.descr;
  auto bad = [&]() {
    throw io_error(spira::detail::concat(
        what, ": unsupported .npy dtype ", show_token(d),
        " (supported: b1, i1, u1, i2, u2, i4, u4, i8, u8, f4, f8, and S/U strings)"));
  };
  if (d.size() < 3) {
    bad();
  }
  const char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    bad();
  }
  h.big_endian = order == '>';
  const char type = d[1];
  std::int64_t size = 0;
  if (parse_int(std::string_view(d).substr(2), size) != parse_status::ok || size <= 0) {
    bad();
  }
  struct entry {
    char type;
    std::int64_t size;
    npy_dtype dtype;
  };
  static constexpr entry table[] = {
      {'b', 1, npy_dtype::b1}, {'i', 1, npy_dtype::i1}, {'u', 1, npy_dtype::u1},
      {'i', 2, npy_dtype::i2}, {'u', 2, npy_dtype::u2}, {'i', 4, npy_dtype::i4},
      {'u', 4, npy_dtype::u4}, {'i', 8, npy_dtype::i8}, {'u', 8, npy_dtype::u8},
      {'f', 4, npy_dtype::f4}, {'f', 8, npy_dtype::f8}};
  for (const auto& e : table) {
    if (e.type == type && e.size == size) {
      h.dtype = e.dtype;
      h.itemsize = static_cast<std::size_t>(size);
      return;
    }
  }
  constexpr std::int64_t max_string_itemsize = std::int64_t{1} << 20;
  if (type == 'S' && size <= max_string_itemsize) {
    h.dtype = npy_dtype::bytes;
    h.itemsize = static_cast<std::size_t>(size);
    return;
  }
  if (type == 'U' && size <= max_string_itemsize) {
    h.dtype = npy_dtype::unicode;
    h.itemsize = static_cast<std::size_t>(size) * 4;
    return;
  }
  bad();
}

std::string shape_string(const std::vector<std::int64_t>& shape)
{
  std::string s = "(";
  for (std::size_t k = 0; k < shape.size(); ++k) {
    s += std::to_string(shape[k]);
    if (shape.size() == 1 || k + 1 < shape.size()) {
      s += shape.size() == 1 ? "," : ", ";
    }
  }
  return s + ")";
}

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

template <class T, class S>
void convert_from(const npy_block& b, T* out, std::int64_t n, const std::string& what)
{
  const char* p = b.data.data();
  const bool swap = b.header.big_endian && sizeof(S) > 1;
  for (std::int64_t k = 0; k < n; ++k, p += sizeof(S)) {
    const S v = load_scalar<S>(p, swap);
    if constexpr (std::is_integral_v<T> && std::is_integral_v<S>) {
      bool ok = true;
      if constexpr (std::is_unsigned_v<S>) {
        ok = static_cast<std::uint64_t>(v) <=
             static_cast<std::uint64_t>(std::numeric_limits<T>::max());
      } else {
        ok = static_cast<std::int64_t>(v) >= std::int64_t{std::numeric_limits<T>::min()} &&
             static_cast<std::int64_t>(v) <= std::int64_t{std::numeric_limits<T>::max()};
      }
      if (!ok) {
        throw io_error(spira::detail::concat(what, ": element ", k, " = ", +v, " does not fit a ",
                                             sizeof(T) * 8, "-bit integer"));
      }
    }
    out[k] = static_cast<T>(v);
  }
}

}  // namespace

std::int64_t element_count(const std::vector<std::int64_t>& shape, const std::string& what)
{
  std::int64_t n = 1;
  for (const auto d : shape) {
    if (d < 0) {
      throw io_error(
          spira::detail::concat(what, ": negative dimension in shape ", shape_string(shape)));
    }
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d) {
      throw io_error(spira::detail::concat(what, ": shape ", shape_string(shape),
                                           " overflows a 64-bit element count"));
    }
    n *= d;
  }
  return n;
}

npy_block parse_npy(std::string_view bytes, const std::string& what)
{
  if (bytes.empty()) {
    throw io_error(spira::detail::concat(what, ": empty file (expected .npy)"));
  }
  if (bytes.size() < 10 || bytes.substr(0, 6) != npy_magic) {
    throw io_error(spira::detail::concat(what, ": not a .npy file (missing the \\x93NUMPY magic)"));
  }
  npy_block b;
  const int major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3) {
    throw io_error(spira::detail::concat(what, ": unsupported .npy version ", major, ".",
                                         static_cast<int>(static_cast<unsigned char>(bytes[7]))));
  }
  b.header.version_major = major;
  std::size_t header_len = 0;
  std::size_t start = 0;
  if (major == 1) {
    header_len = load_scalar<std::uint16_t>(bytes.data() + 8, false);
    start = 10;
  } else {
    if (bytes.size() < 12) {
      throw io_error(spira::detail::concat(what, ": truncated .npy header"));
    }
    header_len = load_scalar<std::uint32_t>(bytes.data() + 8, false);
    start = 12;
  }
  if (header_len > bytes.size() - start) {
    throw io_error(spira::detail::concat(what, ": truncated .npy header (declares ", header_len,
                                         " bytes, ", bytes.size() - start, " present)"));
  }
  const auto text = bytes.substr(start, header_len);
  header_parser parser(text, what);
  bool have_descr = false;
  bool have_order = false;
  bool have_shape = false;
  for (auto& [key, v] : parser.dict()) {
    if (key == "descr") {
      if (v.k != py_value::kind::string) {
        throw io_error(spira::detail::concat(
            what,
            ": .npy descr must be a simple dtype string (structured dtypes are not supported)"));
      }
      b.header.descr = v.s;
      parse_descr(b.header, what);
      have_descr = true;
    } else if (key == "fortran_order") {
      if (v.k != py_value::kind::boolean) {
        throw io_error(spira::detail::concat(what, ": .npy fortran_order must be True or False"));
      }
      b.header.fortran_order = v.b;
      have_order = true;
    } else if (key == "shape") {
      if (v.k != py_value::kind::tuple) {
        throw io_error(spira::detail::concat(what, ": .npy shape must be a tuple"));
      }
      for (const auto& d : v.items) {
        if (d.k != py_value::kind::integer) {
          throw io_error(spira::detail::concat(what, ": .npy shape must hold integers"));
        }
        b.header.shape.push_back(d.i);
      }
      have_shape = true;
    }
  }
  if (!have_descr || !have_order || !have_shape) {
    throw io_error(spira::detail::concat(what, ": .npy header lacks ",
                                         !have_descr   ? "'descr'"
                                         : !have_order ? "'fortran_order'"
                                                       : "'shape'"));
  }
  const std::int64_t n = element_count(b.header.shape, what);
  const auto avail = static_cast<std::uint64_t>(bytes.size() - start - header_len);
  const auto item = static_cast<std::uint64_t>(b.header.itemsize);
  if (n > 0 && static_cast<std::uint64_t>(n) > avail / item) {
    throw io_error(spira::detail::concat(what, ": .npy header shape ", shape_string(b.header.shape),
                                         " of ", b.header.descr, " needs more data than the ",
                                         avail, " bytes present (truncated file or wrong shape)"));
  }
  const std::uint64_t need = static_cast<std::uint64_t>(n) * item;
  if (need != avail) {
    throw io_error(spira::detail::concat(what, ": .npy header shape ", shape_string(b.header.shape),
                                         " of ", b.header.descr, " needs ", need, " bytes but ",
                                         avail, " follow the header"));
  }
  b.data = bytes.substr(start + header_len);
  return b;
}

template <class T>
void convert_elements(const npy_block& b, T* out, const std::string& what)
{
  const std::int64_t n = element_count(b.header.shape, what);
  constexpr bool integral = std::is_integral_v<T>;
  switch (b.header.dtype) {
    case npy_dtype::b1: {
      for (std::int64_t k = 0; k < n; ++k) {
        out[k] = T(b.data[static_cast<std::size_t>(k)] != 0);
      }
      return;
    }
    case npy_dtype::i1:
      return convert_from<T, std::int8_t>(b, out, n, what);
    case npy_dtype::u1:
      return convert_from<T, std::uint8_t>(b, out, n, what);
    case npy_dtype::i2:
      return convert_from<T, std::int16_t>(b, out, n, what);
    case npy_dtype::u2:
      return convert_from<T, std::uint16_t>(b, out, n, what);
    case npy_dtype::i4:
      return convert_from<T, std::int32_t>(b, out, n, what);
    case npy_dtype::u4:
      return convert_from<T, std::uint32_t>(b, out, n, what);
    case npy_dtype::i8:
      return convert_from<T, std::int64_t>(b, out, n, what);
    case npy_dtype::u8:
      return convert_from<T, std::uint64_t>(b, out, n, what);
    case npy_dtype::f4:
    case npy_dtype::f8:
      if constexpr (integral) {
        throw io_error(spira::detail::concat(what, ": a floating-point array (", b.header.descr,
                                             ") cannot be read as ", sizeof(T) * 8,
                                             "-bit integers"));
      } else {
        if (b.header.dtype == npy_dtype::f4) {
          return convert_from<T, float>(b, out, n, what);
        }
        return convert_from<T, double>(b, out, n, what);
      }
    case npy_dtype::bytes:
    case npy_dtype::unicode:
      break;
  }
  throw io_error(spira::detail::concat(what, ": a string array (", b.header.descr,
                                       ") cannot be read as numbers"));
}

template <class T>
dense_matrix<T> block_to_dense(const npy_block& b, const std::string& what)
{
  const auto& shape = b.header.shape;
  if (shape.empty() || shape.size() > 2) {
    throw io_error(spira::detail::concat(what, ": expected a 1-D or 2-D array, got shape ",
                                         shape_string(shape)));
  }
  const std::int64_t rows = shape[0];
  const std::int64_t cols = shape.size() == 2 ? shape[1] : 1;
  dense_matrix<T> m(host_resources{}, rows, cols);
  if (!b.header.fortran_order || shape.size() == 1 || rows <= 1 || cols <= 1) {
    convert_elements(b, m.data(), what);
    return m;
  }
  std::vector<T> tmp(static_cast<std::size_t>(rows * cols));
  convert_elements(b, tmp.data(), what);
  for (std::int64_t j = 0; j < cols; ++j) {
    for (std::int64_t i = 0; i < rows; ++i) {
      m.data()[i * cols + j] = tmp[j * rows + i];
    }
  }
  return m;
}

std::string block_to_string(const npy_block& b, const std::string& what)
{
  if (element_count(b.header.shape, what) != 1 ||
      (b.header.dtype != npy_dtype::bytes && b.header.dtype != npy_dtype::unicode)) {
    throw io_error(spira::detail::concat(what, ": expected a single string, got ", b.header.descr,
                                         " of shape ", shape_string(b.header.shape)));
  }
  std::string s;
  if (b.header.dtype == npy_dtype::bytes) {
    s = std::string(b.data.substr(0, b.data.find('\0')));
  } else {
    for (std::size_t k = 0; k + 4 <= b.data.size(); k += 4) {
      const auto c = load_scalar<std::uint32_t>(b.data.data() + k, b.header.big_endian);
      if (c == 0) {
        break;
      }
      s += c < 0x80 ? static_cast<char>(c) : '?';
    }
  }
  return s;
}

std::size_t dtype_size(npy_dtype d) noexcept
{
  switch (d) {
    case npy_dtype::b1:
    case npy_dtype::i1:
    case npy_dtype::u1:
      return 1;
    case npy_dtype::i2:
    case npy_dtype::u2:
      return 2;
    case npy_dtype::i4:
    case npy_dtype::u4:
    case npy_dtype::f4:
      return 4;
    case npy_dtype::i8:
    case npy_dtype::u8:
    case npy_dtype::f8:
      return 8;
    case npy_dtype::bytes:
    case npy_dtype::unicode:
      return 0;
  }
  return 0;
}

std::string make_npy_header(npy_dtype dtype, const std::vector<std::int64_t>& shape,
                            std::size_t itemsize)
{
  std::string descr;
  switch (dtype) {
    case npy_dtype::f4:
      descr = "<f4";
      break;
    case npy_dtype::f8:
      descr = "<f8";
      break;
    case npy_dtype::i4:
      descr = "<i4";
      break;
    case npy_dtype::i8:
      descr = "<i8";
      break;
    case npy_dtype::bytes:
      if (itemsize == 0) {
        throw invalid_argument("spira::io: a byte string array needs a length");
      }
      descr = spira::detail::concat("|S", itemsize);
      break;
    default:
      throw invalid_argument("spira::io: only f4, f8, i4, i8 and byte string arrays are written");
  }
  std::string dict = spira::detail::concat(
      "{'descr': '", descr, "', 'fortran_order': False, 'shape': ", shape_string(shape), ", }");
  // Pad with spaces so that the data starts on a 64-byte boundary (as numpy does).
  constexpr std::size_t align = 64;
  const std::size_t unpadded = npy_magic.size() + 4 + dict.size() + 1;
  dict.append((align - unpadded % align) % align, ' ');
  dict += '\n';
  const auto len = static_cast<std::uint16_t>(dict.size());
  std::string out(npy_magic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>(len >> 8);
  return out + dict;
}

template void convert_elements<float>(const npy_block&, float*, const std::string&);
template void convert_elements<double>(const npy_block&, double*, const std::string&);
template void convert_elements<std::int32_t>(const npy_block&, std::int32_t*, const std::string&);
template void convert_elements<std::int64_t>(const npy_block&, std::int64_t*, const std::string&);
template dense_matrix<float> block_to_dense<float>(const npy_block&, const std::string&);
template dense_matrix<double> block_to_dense<double>(const npy_block&, const std::string&);
template dense_matrix<std::int32_t> block_to_dense<std::int32_t>(const npy_block&,
                                                                 const std::string&);
template dense_matrix<std::int64_t> block_to_dense<std::int64_t>(const npy_block&,
                                                                 const std::string&);

}  // namespace detail

npy_header read_npy_header(const std::filesystem::path& path)
{
  const auto file = detail::load_file(path);
  return detail::parse_npy(file.data, detail::display(path)).header;
}

template <class T>
dense_matrix<T> read_npy(const std::filesystem::path& path)
{
  const auto file = detail::load_file(path);
  const std::string what = detail::display(path);
  return detail::block_to_dense<T>(detail::parse_npy(file.data, what), what);
}

template <class T>
std::vector<T> read_npy_vector(const std::filesystem::path& path)
{
  const auto file = detail::load_file(path);
  const std::string what = detail::display(path);
  const auto block = detail::parse_npy(file.data, what);
  const auto& shape = block.header.shape;
  const bool vector_like =
      shape.size() == 1 || (shape.size() == 2 && (shape[0] == 1 || shape[1] == 1));
  if (!vector_like) {
    throw io_error(spira::detail::concat(what, ": expected a 1-D array, got shape ",
                                         detail::shape_string(shape)));
  }
  std::vector<T> v(static_cast<std::size_t>(detail::element_count(shape, what)));
  detail::convert_elements(block, v.data(), what);
  return v;
}

namespace {

template <class T>
void write_npy_rows(const std::filesystem::path& path, const std::vector<std::int64_t>& shape,
                    const T* data, std::int64_t rows, std::int64_t cols, std::int64_t ld)
{
  const std::string header = detail::make_npy_header(detail::npy_dtype_of<T>(), shape);
  detail::output_file file(path);
  file.write(header.data(), header.size());
  if (ld == cols) {
    file.write(data, static_cast<std::size_t>(rows * cols) * sizeof(T));
  } else {
    for (std::int64_t i = 0; i < rows; ++i) {
      file.write(data + i * ld, static_cast<std::size_t>(cols) * sizeof(T));
    }
  }
  file.commit();
}

}  // namespace

template <class T>
void write_npy(const std::filesystem::path& path, dense_view<const T> a)
{
  spira::detail::expects(a.space == memory_space::host,
                         "spira::io::write_npy: the array must be in host memory");
  spira::detail::expects(a.rows >= 0 && a.cols >= 0 && (a.rows <= 1 || a.ld >= a.cols),
                         "spira::io::write_npy: bad extents ", a.rows, " x ", a.cols, " (ld ", a.ld,
                         ")");
  write_npy_rows(path, {a.rows, a.cols}, a.data, a.rows, a.cols, a.ld);
}

template <class T>
void write_npy(const std::filesystem::path& path, std::span<const T> v)
{
  const auto n = static_cast<std::int64_t>(v.size());
  write_npy_rows(path, {n}, v.data(), 1, n, n);
}

template <class T>
struct npy_row_writer<T>::state {
  detail::output_file file;
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t written = 0;

  state(const std::filesystem::path& path, std::int64_t r, std::int64_t c)
      : file(path), rows(r), cols(c)
  {
  }
};

template <class T>
npy_row_writer<T>::npy_row_writer(const std::filesystem::path& path, std::int64_t rows,
                                  std::int64_t cols)
{
  spira::detail::expects(rows >= 0 && cols >= 0, "spira::io::npy_row_writer: bad extents ", rows,
                         " x ", cols);
  const std::string header = detail::make_npy_header(detail::npy_dtype_of<T>(), {rows, cols});
  state_ = std::make_unique<state>(path, rows, cols);
  state_->file.write(header.data(), header.size());
}

template <class T>
npy_row_writer<T>::npy_row_writer(npy_row_writer&&) noexcept = default;
template <class T>
npy_row_writer<T>& npy_row_writer<T>::operator=(npy_row_writer&&) noexcept = default;
template <class T>
npy_row_writer<T>::~npy_row_writer() = default;

template <class T>
void npy_row_writer<T>::append(dense_view<const T> block)
{
  state& s = *state_;
  spira::detail::expects(
      block.space == memory_space::host && block.cols == s.cols && block.rows >= 0 &&
          block.rows <= s.rows - s.written && (block.rows <= 1 || block.ld >= block.cols),
      "spira::io::npy_row_writer::append: a block of ", block.rows, " x ", block.cols,
      " does not continue a ", s.rows, " x ", s.cols, " array after ", s.written, " rows");
  if (block.ld == block.cols || block.rows <= 1) {
    s.file.write(block.data, static_cast<std::size_t>(block.rows * block.cols) * sizeof(T));
  } else {
    for (std::int64_t i = 0; i < block.rows; ++i) {
      s.file.write(block.data + i * block.ld, static_cast<std::size_t>(block.cols) * sizeof(T));
    }
  }
  s.written += block.rows;
}

template <class T>
void npy_row_writer<T>::commit()
{
  spira::detail::expects(state_->written == state_->rows,
                         "spira::io::npy_row_writer::commit: ", state_->written, " of ",
                         state_->rows, " rows appended");
  state_->file.commit();
}

template class npy_row_writer<float>;
template class npy_row_writer<double>;
template class npy_row_writer<std::int32_t>;
template class npy_row_writer<std::int64_t>;

template dense_matrix<float> read_npy<float>(const std::filesystem::path&);
template dense_matrix<double> read_npy<double>(const std::filesystem::path&);
template dense_matrix<std::int32_t> read_npy<std::int32_t>(const std::filesystem::path&);
template dense_matrix<std::int64_t> read_npy<std::int64_t>(const std::filesystem::path&);
template std::vector<float> read_npy_vector<float>(const std::filesystem::path&);
template std::vector<double> read_npy_vector<double>(const std::filesystem::path&);
template std::vector<std::int32_t> read_npy_vector<std::int32_t>(const std::filesystem::path&);
template std::vector<std::int64_t> read_npy_vector<std::int64_t>(const std::filesystem::path&);
template void write_npy<float>(const std::filesystem::path&, dense_view<const float>);
template void write_npy<double>(const std::filesystem::path&, dense_view<const double>);
template void write_npy<std::int32_t>(const std::filesystem::path&, dense_view<const std::int32_t>);
template void write_npy<std::int64_t>(const std::filesystem::path&, dense_view<const std::int64_t>);
template void write_npy<float>(const std::filesystem::path&, std::span<const float>);
template void write_npy<double>(const std::filesystem::path&, std::span<const double>);
template void write_npy<std::int32_t>(const std::filesystem::path&, std::span<const std::int32_t>);
template void write_npy<std::int64_t>(const std::filesystem::path&, std::span<const std::int64_t>);

}  // namespace spira::io
