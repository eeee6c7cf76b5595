// .npz (zip of .npy members): a minimal zip reader over zlib's raw inflate, the scipy sparse
// reader, and an uncompressed writer.
#include "io_common.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <set>

namespace spira::io {

namespace detail {
namespace {

constexpr std::uint32_t sig_local = 0x04034b50;
constexpr std::uint32_t sig_central = 0x02014b50;
constexpr std::uint32_t sig_eocd = 0x06054b50;
constexpr std::uint32_t sig_zip64_eocd = 0x06064b50;
constexpr std::uint32_t sig_zip64_locator = 0x07064b50;
constexpr std::size_t eocd_size = 22;
constexpr std::size_t central_size = 46;
constexpr std::size_t local_size = 30;
constexpr std::uint32_t u32_max = 0xffffffffu;
/// deflate cannot expand better than ~1032:1; a larger claimed size marks a corrupt directory.
constexpr std::uint64_t max_deflate_ratio = 1032;

template <class T>
T le(std::string_view s, std::size_t at) noexcept
{
  T v{};
  std::memcpy(&v, s.data() + at, sizeof(T));
  return v;
}

std::uint32_t crc32_of(std::uint32_t crc, const void* data, std::size_t n) noexcept
{
  return static_cast<std::uint32_t>(
      crc32_z(crc, static_cast<const Bytef*>(data), static_cast<z_size_t>(n)));
}

}  // namespace

std::vector<zip_member> zip_directory(std::string_view z, const std::filesystem::path& path)
{
  if (z.empty()) {
    fail(path, "empty file (expected a zip archive)");
  }
  if (z.size() < eocd_size) {
    fail(path, "not a zip archive (", z.size(), " bytes)");
  }
  // The end-of-central-directory record sits in the last 22 + 65535 (comment) bytes.
  std::size_t eocd = std::string_view::npos;
  const std::size_t lowest = z.size() > eocd_size + 0xffff ? z.size() - eocd_size - 0xffff : 0;
  for (std::size_t p = z.size() - eocd_size + 1; p-- > lowest;) {
    if (le<std::uint32_t>(z, p) == sig_eocd &&
        p + eocd_size + le<std::uint16_t>(z, p + 20) <= z.size()) {
      eocd = p;
      break;
    }
  }
  if (eocd == std::string_view::npos) {
    fail(path, "not a zip archive or truncated (no end-of-central-directory record)");
  }
  std::uint64_t entries = le<std::uint16_t>(z, eocd + 10);
  std::uint64_t cd_size = le<std::uint32_t>(z, eocd + 12);
  std::uint64_t cd_offset = le<std::uint32_t>(z, eocd + 16);
  if (entries == 0xffff || cd_size == u32_max || cd_offset == u32_max) {
    if (eocd < 20 || le<std::uint32_t>(z, eocd - 20) != sig_zip64_locator) {
      fail(path, "corrupt zip: zip64 sizes without a zip64 locator");
    }
    const auto rec = le<std::uint64_t>(z, eocd - 20 + 8);
    if (rec > z.size() || z.size() - rec < 56 || le<std::uint32_t>(z, rec) != sig_zip64_eocd) {
      fail(path, "corrupt zip: bad zip64 end-of-central-directory record");
    }
    entries = le<std::uint64_t>(z, rec + 32);
    cd_size = le<std::uint64_t>(z, rec + 40);
    cd_offset = le<std::uint64_t>(z, rec + 48);
  }
  if (cd_offset > z.size() || cd_size > z.size() - cd_offset) {
    fail(path, "corrupt zip: the central directory (offset ", cd_offset, ", ", cd_size,
         " bytes) lies outside the ", z.size(), "-byte file");
  }
  if (entries > cd_size / central_size) {
    fail(path, "corrupt zip: ", entries, " entries cannot fit a ", cd_size,
         "-byte central directory");
  }
  std::vector<zip_member> out;
  std::size_t p = cd_offset;
  const std::size_t cd_end = cd_offset + cd_size;
  for (std::uint64_t e = 0; e < entries; ++e) {
    if (cd_end - p < central_size || le<std::uint32_t>(z, p) != sig_central) {
      fail(path, "corrupt zip: bad central directory entry ", e);
    }
    zip_member m;
    const auto flags = le<std::uint16_t>(z, p + 8);
    m.method = le<std::uint16_t>(z, p + 10);
    m.crc = le<std::uint32_t>(z, p + 16);
    m.compressed_size = le<std::uint32_t>(z, p + 20);
    m.size = le<std::uint32_t>(z, p + 24);
    const std::size_t name_len = le<std::uint16_t>(z, p + 28);
    const std::size_t extra_len = le<std::uint16_t>(z, p + 30);
    const std::size_t comment_len = le<std::uint16_t>(z, p + 32);
    std::uint64_t local = le<std::uint32_t>(z, p + 42);
    if (cd_end - p - central_size < name_len + extra_len + comment_len) {
      fail(path, "corrupt zip: central directory entry ", e, " overruns the directory");
    }
    m.name = std::string(z.substr(p + central_size, name_len));
    if ((flags & 1u) != 0) {
      fail(path, "zip member '", m.name, "' is encrypted");
    }
    // zip64 extra field: the 64-bit values present are those whose 32-bit field is saturated.
    std::string_view extra = z.substr(p + central_size + name_len, extra_len);
    while (extra.size() >= 4) {
      const auto id = le<std::uint16_t>(extra, 0);
      const std::size_t len = le<std::uint16_t>(extra, 2);
      if (len > extra.size() - 4) {
        fail(path, "corrupt zip: bad extra field of '", m.name, "'");
      }
      if (id == 0x0001) {
        std::size_t q = 4;
        auto take = [&](std::uint64_t& field) {
          if (field != u32_max) {
            return;
          }
          if (q + 8 > 4 + len) {
            fail(path, "corrupt zip: short zip64 field of '", m.name, "'");
          }
          field = le<std::uint64_t>(extra, q);
          q += 8;
        };
        take(m.size);
        take(m.compressed_size);
        take(local);
      }
      extra.remove_prefix(4 + len);
    }
    if (local > z.size() || z.size() - local < local_size ||
        le<std::uint32_t>(z, local) != sig_local) {
      fail(path, "corrupt zip: bad local header of '", m.name, "'");
    }
    const std::uint64_t data =
        local + local_size + le<std::uint16_t>(z, local + 26) + le<std::uint16_t>(z, local + 28);
    if (data > z.size() || m.compressed_size > z.size() - data) {
      fail(path, "corrupt zip: the data of '", m.name, "' (", m.compressed_size,
           " bytes) runs past the end of the file");
    }
    m.data_offset = data;
    out.push_back(std::move(m));
    p += central_size + name_len + extra_len + comment_len;
  }
  return out;
}

std::string zip_extract(std::string_view z, const zip_member& m, const std::filesystem::path& path)
{
  const std::string_view src = z.substr(m.data_offset, m.compressed_size);
  std::string out;
  if (m.method == 0) {
    if (m.size != m.compressed_size) {
      fail(path, "corrupt zip: stored member '", m.name, "' has size ", m.size,
           " but compressed size ", m.compressed_size);
    }
    out.assign(src);
  } else if (m.method == 8) {
    if (m.size > m.compressed_size * max_deflate_ratio + 1024) {
      fail(path, "corrupt zip: member '", m.name, "' claims ", m.size, " bytes from ",
           m.compressed_size, " compressed bytes");
    }
    // Grow towards the declared size instead of trusting it up front; one spare byte detects a
    // stream that inflates to more than declared.
    const std::uint64_t limit = m.size + 1;
    out.resize(static_cast<std::size_t>(std::min<std::uint64_t>(limit, src.size() * 4 + 65536)));
    z_stream s{};
    if (inflateInit2(&s, -15) != Z_OK) {
      fail(path, "cannot initialise zlib");
    }
    struct guard {
      z_stream* s;
      ~guard() { inflateEnd(s); }
    } g{&s};
    std::size_t in_pos = 0;
    std::size_t out_pos = 0;
    for (;;) {
      if (out_pos == out.size()) {
        if (out.size() >= limit) {
          fail(path, "corrupt zip: member '", m.name, "' inflates to more than its declared ",
               m.size, " bytes");
        }
        out.resize(static_cast<std::size_t>(std::min<std::uint64_t>(limit, out.size() * 2 + 1)));
      }
      const std::size_t in_chunk = std::min<std::size_t>(src.size() - in_pos, 1u << 30);
      const std::size_t out_chunk = std::min<std::size_t>(out.size() - out_pos, 1u << 30);
      s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(src.data() + in_pos));
      s.avail_in = static_cast<uInt>(in_chunk);
      s.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
      s.avail_out = static_cast<uInt>(out_chunk);
      const int rc = inflate(&s, Z_NO_FLUSH);
      in_pos += in_chunk - s.avail_in;
      out_pos += out_chunk - s.avail_out;
      if (rc == Z_STREAM_END) {
        break;
      }
      if (rc == Z_OK) {
        continue;
      }
      if (rc == Z_BUF_ERROR && in_pos < src.size()) {
        continue;
      }
      if (rc == Z_BUF_ERROR) {
        fail(path, "corrupt zip: the deflate stream of '", m.name, "' is truncated");
      }
      fail(path, "corrupt zip: cannot inflate '", m.name,
           "': ", s.msg != nullptr ? s.msg : "invalid deflate data");
    }
    if (out_pos != m.size) {
      fail(path, "corrupt zip: member '", m.name, "' inflates to ", out_pos, " bytes, not the ",
           m.size, " its directory entry declares");
    }
    out.resize(out_pos);
  } else {
    fail(path, "zip member '", m.name, "' uses compression method ", m.method,
         " (only stored and deflate are supported)");
  }
  const std::uint32_t crc = crc32_of(0, out.data(), out.size());
  if (crc != m.crc) {
    fail(path, "corrupt zip: CRC-32 mismatch in member '", m.name, "'");
  }
  return out;
}

namespace {

/// The zip archive of an .npz plus its directory.
struct npz_archive {
  std::filesystem::path path;
  std::string bytes;
  std::vector<zip_member> members;

  explicit npz_archive(const std::filesystem::path& p) : path(p), bytes(load_raw(p))
  {
    members = zip_directory(bytes, path);
  }

  [[nodiscard]] const zip_member* find(std::string_view array_name) const
  {
    for (const auto& m : members) {
      if (m.name.size() == array_name.size() + 4 && m.name.starts_with(array_name) &&
          m.name.ends_with(".npy")) {
        return &m;
      }
    }
    return nullptr;
  }

  [[nodiscard]] std::string names() const
  {
    std::string s;
    for (const auto& m : members) {
      s += (s.empty() ? "" : ", ") + spira::detail::printable(m.name);
    }
    return s.empty() ? "none" : s;
  }

  /// Extracts the named array; `owner` keeps the bytes alive while the block is used.
  npy_block array(std::string_view name, std::string& owner, std::string& what) const
  {
    const zip_member* m = find(name);
    if (m == nullptr) {
      fail(path, "no array '", name, "' in the archive (members: ", names(), ")");
    }
    owner = zip_extract(bytes, *m, path);
    what = spira::detail::concat(display(path), "[", m->name, "]");
    return parse_npy(owner, what);
  }
};

}  // namespace
}  // namespace detail

std::vector<std::string> npz_names(const std::filesystem::path& path)
{
  const detail::npz_archive a(path);
  std::vector<std::string> names;
  for (const auto& m : a.members) {
    names.push_back(m.name.ends_with(".npy") ? m.name.substr(0, m.name.size() - 4) : m.name);
  }
  return names;
}

template <class T>
dense_matrix<T> read_npz_array(const std::filesystem::path& path, std::string_view name)
{
  const detail::npz_archive a(path);
  std::string owner;
  std::string what;
  const auto block = a.array(name, owner, what);
  return detail::block_to_dense<T>(block, what);
}

template <class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> read_npz(const std::filesystem::path& path, const read_options& opts)
{
  const detail::npz_archive a(path);
  std::string owner;
  std::string what;
  // The format first: a COO, DIA, BSR... matrix lacks indptr, and the message that helps is the
  // one saying what to save instead.
  if (a.find("format") == nullptr) {
    detail::fail(path, "not a scipy.sparse .npz: no 'format.npy' member (members: ", a.names(),
                 ")");
  }
  const std::string format = detail::block_to_string(a.array("format", owner, what), what);
  if (format != "csr" && format != "csc") {
    detail::fail(path, "scipy sparse format '", spira::detail::printable(format),
                 "' is not supported (save the matrix as CSR or CSC: scipy.sparse.save_npz(path, "
                 "m.tocsr()))");
  }
  for (const char* required : {"shape", "indptr", "indices", "data"}) {
    if (a.find(required) == nullptr) {
      detail::fail(path, "not a scipy.sparse .npz: no '", required,
                   ".npy' member (members: ", a.names(), ")");
    }
  }
  const bool csc = format == "csc";

  auto shape_block = a.array("shape", owner, what);
  if (detail::element_count(shape_block.header.shape, what) != 2) {
    detail::fail(path, "shape.npy must hold 2 integers");
  }
  std::int64_t shape[2] = {0, 0};
  detail::convert_elements(shape_block, shape, what);
  const std::int64_t rows = shape[0];
  const std::int64_t cols = shape[1];
  // A CSC matrix is the CSR of its transpose.
  const std::int64_t major = csc ? cols : rows;
  const std::int64_t minor = csc ? rows : cols;
  detail::check_extents<IndexT>(path, 0, major, minor, opts);
  detail::check_extents<IndexT>(path, 0, rows, cols, opts);

  // The indices first (their length is nnz), so that indptr converts straight into the matrix's
  // row pointers: one array of major + 1 pointers besides the member's decompressed bytes.
  std::string idx_owner;
  auto idx_block = a.array("indices", idx_owner, what);
  if (idx_block.header.shape.size() != 1) {
    detail::fail(path, "indices.npy must be 1-D");
  }
  const std::int64_t nnz = idx_block.header.shape[0];
  std::string ptr_what;
  auto ptr_block = a.array("indptr", owner, ptr_what);
  if (ptr_block.header.shape.size() != 1 || ptr_block.header.shape[0] != major + 1) {
    detail::fail(path, "indptr.npy must be 1-D with ", major + 1, " entries for a ", rows, " x ",
                 cols, " ", format, " matrix");
  }
  csr_matrix<ValueT, IndexT> m(host_resources{}, major, minor, nnz);
  detail::convert_elements(ptr_block, m.row_ptr(), ptr_what);
  owner = {};
  const offset_t first = m.row_ptr()[0], last = m.row_ptr()[major];
  if (first != 0 || last != nnz) {
    detail::fail(path, "indptr runs from ", first, " to ", last,
                 " but must run from 0 to nnz = ", nnz);
  }
  detail::convert_elements(idx_block, m.col_idx(), what);
  idx_owner = {};

  auto data_block = a.array("data", owner, what);
  if (data_block.header.shape.size() != 1 || data_block.header.shape[0] != nnz) {
    detail::fail(path, "data.npy must be 1-D with nnz = ", nnz, " entries");
  }
  detail::convert_elements(data_block, m.values(), what);
  owner = {};

  const std::string name = detail::display(path);
  try {
    validate(detail::convert_resources(nnz), m.view(), csr_check::valid, name.c_str());
  } catch (const invalid_argument& e) {
    throw io_error(e.what());
  }
  const host_resources res = detail::convert_resources(nnz);
  // scipy writes sorted, duplicate-free indices unless told otherwise: such a matrix is already
  // canonical and is kept as it is, without canonicalize's copy.
  csr_matrix<ValueT, IndexT> canonical =
      detail::is_canonical(m.view()) ? std::move(m) : canonicalize(res, m.view());
  return csc ? transpose(res, canonical.view()) : std::move(canonical);
}

matrix_file_info detail::describe_npz(const std::filesystem::path& path, const read_options& opts)
{
  const auto m = read_npz<double, std::int64_t>(path, opts);
  const detail::npz_archive a(path);
  std::string owner;
  std::string what;
  matrix_file_info info{file_format::npz, to_string(file_format::npz),
                        m.rows(),         m.cols(),
                        m.nnz(),          a.array("data", owner, what).header.descr,
                        "general"};
  return info;
}

void write_npz(const std::filesystem::path& path, std::span<const npz_entry> entries,
               const npz_write_options& options)
{
  std::set<std::string> seen;
  for (const auto& e : entries) {
    spira::detail::expects(!e.name.empty(), "spira::io::write_npz: an array name is empty");
    spira::detail::expects(seen.insert(e.name).second, "spira::io::write_npz: array name '", e.name,
                           "' appears twice");
    spira::detail::expects(e.rows >= 0 && e.cols >= 0 && (e.rows <= 1 || e.ld >= e.cols),
                           "spira::io::write_npz: array '", e.name, "' has bad extents ", e.rows,
                           " x ", e.cols, " (ld ", e.ld, ")");
    spira::detail::expects(e.data != nullptr || e.rows * e.cols == 0,
                           "spira::io::write_npz: array '", e.name, "' has no data");
    spira::detail::expects(e.ndim >= 0 && e.ndim <= 2 && (e.ndim > 0 || e.rows * e.cols == 1),
                           "spira::io::write_npz: array '", e.name, "' has ndim ", e.ndim, " for ",
                           e.rows, " x ", e.cols, " elements");
    spira::detail::expects(e.dtype != npy_dtype::bytes || e.itemsize > 0,
                           "spira::io::write_npz: byte string array '", e.name, "' is empty");
  }
  struct central {
    std::string name;
    std::uint32_t crc;
    std::uint64_t size;
    std::uint64_t offset;
    bool zip64_size;  ///< sizes in the zip64 extra field
  };
  std::vector<central> dir;
  detail::output_file file(path);
  std::uint64_t offset = 0;
  constexpr std::uint16_t version = 20;
  constexpr std::uint16_t version_zip64 = 45;
  constexpr std::uint16_t dos_date = (0u << 9) | (1u << 5) | 1u;  // 1980-01-01, fixed
  // A 32-bit field at or above this value goes to the zip64 records (0xffffffff itself is the
  // marker "see zip64").
  const std::uint64_t limit = options.zip64 ? 0 : detail::u32_max;
  auto put16 = [](std::string& s, std::uint16_t v) { s.append(reinterpret_cast<char*>(&v), 2); };
  auto put32 = [](std::string& s, std::uint32_t v) { s.append(reinterpret_cast<char*>(&v), 4); };
  auto put64 = [](std::string& s, std::uint64_t v) { s.append(reinterpret_cast<char*>(&v), 8); };

  for (const auto& e : entries) {
    const std::string name = e.name + ".npy";
    std::vector<std::int64_t> shape;  // () for a 0-d array
    if (e.ndim == 1) {
      shape = {e.rows * e.cols};
    }
    if (e.ndim == 2) {
      shape = {e.rows, e.cols};
    }
    const std::string header = detail::make_npy_header(e.dtype, shape, e.itemsize);
    const std::size_t item = e.dtype == npy_dtype::bytes ? e.itemsize : detail::dtype_size(e.dtype);
    const std::size_t row_bytes = static_cast<std::size_t>(e.cols) * item;
    const auto* base = static_cast<const char*>(e.data);
    const std::uint64_t size = header.size() + static_cast<std::uint64_t>(e.rows) * row_bytes;
    const bool zip64_size = size >= limit;
    std::uint32_t crc = detail::crc32_of(0, header.data(), header.size());
    for (std::int64_t i = 0; i < e.rows; ++i) {
      crc = detail::crc32_of(crc, base + static_cast<std::size_t>(i * e.ld) * item, row_bytes);
    }
    std::string local;
    put32(local, detail::sig_local);
    put16(local, zip64_size ? version_zip64 : version);
    put16(local, 0);  // flags
    put16(local, 0);  // stored
    put16(local, 0);  // time
    put16(local, dos_date);
    put32(local, crc);
    put32(local, zip64_size ? detail::u32_max : static_cast<std::uint32_t>(size));
    put32(local, zip64_size ? detail::u32_max : static_cast<std::uint32_t>(size));
    put16(local, static_cast<std::uint16_t>(name.size()));
    put16(local, zip64_size ? 20 : 0);  // extra
    local += name;
    if (zip64_size) {  // the zip64 extra field: uncompressed, then compressed size
      put16(local, 0x0001);
      put16(local, 16);
      put64(local, size);
      put64(local, size);
    }
    file.write(local.data(), local.size());
    file.write(header.data(), header.size());
    for (std::int64_t i = 0; i < e.rows; ++i) {
      file.write(base + static_cast<std::size_t>(i * e.ld) * item, row_bytes);
    }
    dir.push_back({name, crc, size, offset, zip64_size});
    offset += local.size() + size;
  }
  std::string cd;
  bool zip64_archive = options.zip64 || dir.size() >= 0xffff;
  for (const auto& c : dir) {
    const bool zip64_offset = c.offset >= limit;
    std::string extra;
    if (c.zip64_size || zip64_offset) {
      put16(extra, 0x0001);
      put16(extra, static_cast<std::uint16_t>((c.zip64_size ? 16 : 0) + (zip64_offset ? 8 : 0)));
      if (c.zip64_size) {
        put64(extra, c.size);
        put64(extra, c.size);
      }
      if (zip64_offset) {
        put64(extra, c.offset);
      }
      zip64_archive = true;
    }
    const std::uint16_t needed = extra.empty() ? version : version_zip64;
    put32(cd, detail::sig_central);
    put16(cd, needed);  // made by (MS-DOS attributes)
    put16(cd, needed);  // needed
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, dos_date);
    put32(cd, c.crc);
    put32(cd, c.zip64_size ? detail::u32_max : static_cast<std::uint32_t>(c.size));
    put32(cd, c.zip64_size ? detail::u32_max : static_cast<std::uint32_t>(c.size));
    put16(cd, static_cast<std::uint16_t>(c.name.size()));
    put16(cd, static_cast<std::uint16_t>(extra.size()));
    put16(cd, 0);  // comment
    put16(cd, 0);  // disk
    put16(cd, 0);  // internal attributes
    put32(cd, 0);  // external attributes
    put32(cd, zip64_offset ? detail::u32_max : static_cast<std::uint32_t>(c.offset));
    cd += c.name;
    cd += extra;
  }
  const std::uint64_t cd_size = cd.size();
  zip64_archive = zip64_archive || cd_size >= limit || offset >= limit;
  if (zip64_archive) {
    // The zip64 end-of-central-directory record and its locator, then a classic record whose
    // fields all say "see zip64".
    const std::uint64_t record = offset + cd_size;
    put32(cd, detail::sig_zip64_eocd);
    put64(cd, 44);  // size of the rest of the record
    put16(cd, version_zip64);
    put16(cd, version_zip64);
    put32(cd, 0);  // this disk
    put32(cd, 0);  // disk of the central directory
    put64(cd, dir.size());
    put64(cd, dir.size());
    put64(cd, cd_size);
    put64(cd, offset);
    put32(cd, detail::sig_zip64_locator);
    put32(cd, 0);  // disk of the zip64 record
    put64(cd, record);
    put32(cd, 1);  // total disks
  }
  put32(cd, detail::sig_eocd);
  put16(cd, 0);
  put16(cd, 0);
  put16(cd, zip64_archive ? 0xffff : static_cast<std::uint16_t>(dir.size()));
  put16(cd, zip64_archive ? 0xffff : static_cast<std::uint16_t>(dir.size()));
  put32(cd, zip64_archive ? detail::u32_max : static_cast<std::uint32_t>(cd_size));
  put32(cd, zip64_archive ? detail::u32_max : static_cast<std::uint32_t>(offset));
  put16(cd, 0);
  file.write(cd.data(), cd.size());
  file.commit();
}

template dense_matrix<float> read_npz_array<float>(const std::filesystem::path&, std::string_view);
template dense_matrix<double> read_npz_array<double>(const std::filesystem::path&,
                                                     std::string_view);
template dense_matrix<std::int32_t> read_npz_array<std::int32_t>(const std::filesystem::path&,
                                                                 std::string_view);
template dense_matrix<std::int64_t> read_npz_array<std::int64_t>(const std::filesystem::path&,
                                                                 std::string_view);
template csr_matrix<float, std::int32_t> read_npz<float, std::int32_t>(const std::filesystem::path&,
                                                                       const read_options&);
template csr_matrix<float, std::int64_t> read_npz<float, std::int64_t>(const std::filesystem::path&,
                                                                       const read_options&);
template csr_matrix<double, std::int32_t> read_npz<double, std::int32_t>(
    const std::filesystem::path&, const read_options&);
template csr_matrix<double, std::int64_t> read_npz<double, std::int64_t>(
    const std::filesystem::path&, const read_options&);

}  // namespace spira::io
