// NumPy .npy reader: the elements of a parsed .npy image converted to the library's types (shared
// with the npz reader), read_npy_header, read_npy and read_npy_vector.
#include "io_common.hpp"

#include <algorithm>
#include <cstring>

namespace spira::io {

namespace detail {
namespace {

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

template dense_matrix<float> read_npy<float>(const std::filesystem::path&);
template dense_matrix<double> read_npy<double>(const std::filesystem::path&);
template dense_matrix<std::int32_t> read_npy<std::int32_t>(const std::filesystem::path&);
template dense_matrix<std::int64_t> read_npy<std::int64_t>(const std::filesystem::path&);
template std::vector<float> read_npy_vector<float>(const std::filesystem::path&);
template std::vector<double> read_npy_vector<double>(const std::filesystem::path&);
template std::vector<std::int32_t> read_npy_vector<std::int32_t>(const std::filesystem::path&);
template std::vector<std::int64_t> read_npy_vector<std::int64_t>(const std::filesystem::path&);

}  // namespace spira::io
