// Format detection, read_matrix and describe.
#include "io_common.hpp"

#include <algorithm>
#include <cctype>

namespace spira::io {

const char* to_string(file_format f) noexcept
{
  switch (f) {
    case file_format::matrix_market:
      return "matrix-market";
    case file_format::svmlight:
      return "svmlight";
    case file_format::npy:
      return "npy";
    case file_format::npz:
      return "npz";
    case file_format::edge_list:
      return "edge-list";
  }
  return "?";
}

namespace {

bool extension_format(const std::filesystem::path& path, file_format& out)
{
  std::string name = path.filename().string();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name.ends_with(".gz")) {
    name.resize(name.size() - 3);
  }
  const auto ext = std::filesystem::path(name).extension().string();
  if (ext == ".mtx" || ext == ".mm") {
    out = file_format::matrix_market;
  } else if (ext == ".svm" || ext == ".svmlight" || ext == ".libsvm") {
    out = file_format::svmlight;
  } else if (ext == ".npy") {
    out = file_format::npy;
  } else if (ext == ".npz") {
    out = file_format::npz;
  } else if (ext == ".txt" || ext == ".edges" || ext == ".el") {
    out = file_format::edge_list;
  } else {
    return false;
  }
  return true;
}

constexpr const char* known_extensions =
    ".mtx, .mtx.gz, .svm, .svmlight, .libsvm, .npy, .npz, .txt, .txt.gz, .edges, .el";

}  // namespace

file_format format_from_extension(const std::filesystem::path& path)
{
  file_format f{};
  if (!extension_format(path, f)) {
    detail::fail(path, "cannot tell the format from the extension (known: ", known_extensions, ")");
  }
  return f;
}

file_format detect_format(const std::filesystem::path& path)
{
  file_format f{};
  if (extension_format(path, f)) {
    return f;
  }
  const auto file = detail::load_file(path);
  const std::string_view head(file.data.data(), std::min<std::size_t>(file.data.size(), 16));
  if (head.size() >= 14 &&
      std::equal(head.begin(), head.begin() + 14, "%%MatrixMarket",
                 [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
    return file_format::matrix_market;
  }
  if (head.starts_with(std::string_view("\x93NUMPY", 6))) {
    return file_format::npy;
  }
  if (head.starts_with(std::string_view("PK\x03\x04", 4)) ||
      head.starts_with(std::string_view("PK\x05\x06", 4))) {
    return file_format::npz;
  }
  detail::fail(path, "unknown format: the extension is not one of ", known_extensions,
               " and the content is neither Matrix Market, .npy nor .npz");
}

namespace detail {

bool is_gzip(const std::filesystem::path& path)
{
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    return false;
  }
  unsigned char magic[2] = {0, 0};
  const bool gz = std::fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  std::fclose(f);
  return gz;
}

namespace {

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> dense_to_csr(const dense_matrix<ValueT>& d,
                                        const std::filesystem::path& path, const read_options& opts)
{
  check_extents<IndexT>(path, 0, d.rows(), d.cols(), opts);
  const ValueT* a = d.data();
  const std::int64_t total = d.rows() * d.cols();
  const auto nnz = std::count_if(a, a + total, [](ValueT v) { return v != ValueT(0); });
  csr_matrix<ValueT, IndexT> m(host_resources{}, d.rows(), d.cols(), nnz);
  offset_t k = 0;
  m.row_ptr()[0] = 0;
  for (std::int64_t i = 0; i < d.rows(); ++i) {
    for (std::int64_t j = 0; j < d.cols(); ++j) {
      const ValueT v = a[i * d.cols() + j];
      if (v != ValueT(0)) {
        m.col_idx()[k] = IndexT(j);
        m.values()[k] = v;
        ++k;
      }
    }
    m.row_ptr()[i + 1] = k;
  }
  return m;
}

}  // namespace
}  // namespace detail

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> read_matrix(const std::filesystem::path& path, const read_options& opts)
{
  switch (detect_format(path)) {
    case file_format::matrix_market:
      return read_mm<ValueT, IndexT>(path, opts);
    case file_format::svmlight:
      return std::move(read_svmlight<ValueT, IndexT>(path, opts).x);
    case file_format::npy:
      return detail::dense_to_csr<ValueT, IndexT>(read_npy<ValueT>(path), path, opts);
    case file_format::npz:
      return read_npz<ValueT, IndexT>(path, opts);
    case file_format::edge_list:
      return read_edge_list<ValueT, IndexT>(path, opts);
  }
  detail::fail(path, "unknown format");
}

matrix_file_info describe(const std::filesystem::path& path, const read_options& opts)
{
  const file_format f = detect_format(path);
  matrix_file_info info{f, to_string(f), 0, 0, 0, "real", "general"};
  switch (f) {
    case file_format::matrix_market: {
      const mm_header h = read_mm_header(path);
      info.rows = h.rows;
      info.cols = h.cols;
      info.nnz = h.entries;
      info.field = to_string(h.field);
      info.symmetry = to_string(h.symmetry);
      info.format_name += h.format == mm_format::coordinate ? " coordinate" : " array";
      break;
    }
    case file_format::svmlight: {
      const auto d = read_svmlight<double, std::int64_t>(path, opts);
      info.rows = d.x.rows();
      info.cols = d.x.cols();
      info.nnz = d.x.nnz();
      break;
    }
    case file_format::npy: {
      const auto h = read_npy_header(path);
      const auto m = read_matrix<double, std::int64_t>(path, opts);
      info.rows = m.rows();
      info.cols = m.cols();
      info.nnz = m.nnz();
      info.field = h.descr;
      break;
    }
    case file_format::npz:
      info = detail::describe_npz(path, opts);
      break;
    case file_format::edge_list: {
      const auto m = read_edge_list<double, std::int64_t>(path, opts);
      info.rows = m.rows();
      info.cols = m.cols();
      info.nnz = m.nnz();
      break;
    }
  }
  if (detail::is_gzip(path)) {
    info.format_name += " (gzip)";
  }
  return info;
}

template csr_matrix<float, std::int32_t> read_matrix<float, std::int32_t>(
    const std::filesystem::path&, const read_options&);
template csr_matrix<float, std::int64_t> read_matrix<float, std::int64_t>(
    const std::filesystem::path&, const read_options&);
template csr_matrix<double, std::int32_t> read_matrix<double, std::int32_t>(
    const std::filesystem::path&, const read_options&);
template csr_matrix<double, std::int64_t> read_matrix<double, std::int64_t>(
    const std::filesystem::path&, const read_options&);

}  // namespace spira::io
