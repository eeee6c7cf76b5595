// NumPy .npy headers: the parser of a header's dict and dtype, parse_npy (an .npy image checked
// against its header, shared by the npy and npz readers), and the header the writers emit.
#include "io_common.hpp"

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

}  // namespace

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

}  // namespace detail

}  // namespace spira::io
