// NumPy .npy writer: write_npy and npy_row_writer.
#include "io_common.hpp"

namespace spira::io {

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

template void write_npy<float>(const std::filesystem::path&, dense_view<const float>);
template void write_npy<double>(const std::filesystem::path&, dense_view<const double>);
template void write_npy<std::int32_t>(const std::filesystem::path&, dense_view<const std::int32_t>);
template void write_npy<std::int64_t>(const std::filesystem::path&, dense_view<const std::int64_t>);
template void write_npy<float>(const std::filesystem::path&, std::span<const float>);
template void write_npy<double>(const std::filesystem::path&, std::span<const double>);
template void write_npy<std::int32_t>(const std::filesystem::path&, std::span<const std::int32_t>);
template void write_npy<std::int64_t>(const std::filesystem::path&, std::span<const std::int64_t>);

}  // namespace spira::io
