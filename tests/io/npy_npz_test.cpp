// .npy and .npz: round trips, hand-built headers of every supported variant (built here, not by the
// library's writer), scipy-style sparse archives (stored and deflated), and malformed input.
#include "io_test_support.hpp"

#include <algorithm>
#include <cmath>

namespace spira::test {
namespace {

template <class T>
class npy_round_trip : public ::testing::Test {};
using npy_types = ::testing::Types<float, double, std::int32_t, std::int64_t>;
TYPED_TEST_SUITE(npy_round_trip, npy_types);

TYPED_TEST(npy_round_trip, two_d_strided_and_one_d)
{
  using T = TypeParam;
  temp_dir dir;
  std::vector<T> a(3 * 5);
  for (int k = 0; k < 15; ++k) {
    a[k] = T(k * 3 - 20);
  }
  // The 3 x 4 view with ld 5 skips the last column.
  io::write_npy(dir.path("a.npy"), dense_view<const T>{3, 4, 5, a.data()});
  const auto h = io::read_npy_header(dir.path("a.npy"));
  EXPECT_EQ(h.shape, (std::vector<std::int64_t>{3, 4}));
  EXPECT_FALSE(h.fortran_order);
  EXPECT_EQ(h.itemsize, sizeof(T));
  const auto m = io::read_npy<T>(dir.path("a.npy"));
  ASSERT_EQ(m.rows(), 3);
  ASSERT_EQ(m.cols(), 4);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(m.data()[i * 4 + j], a[i * 5 + j]);
    }
  }
  // Data starts on a 64-byte boundary, as numpy writes it.
  EXPECT_EQ(std::filesystem::file_size(dir.path("a.npy")) % 64, (12 * sizeof(T)) % 64);

  io::write_npy(dir.path("v.npy"), std::span<const T>(a.data(), 7));
  EXPECT_EQ(io::read_npy_header(dir.path("v.npy")).shape, (std::vector<std::int64_t>{7}));
  EXPECT_EQ(io::read_npy_vector<T>(dir.path("v.npy")), std::vector<T>(a.begin(), a.begin() + 7));
  const auto col = io::read_npy<T>(dir.path("v.npy"));
  EXPECT_EQ(col.rows(), 7);
  EXPECT_EQ(col.cols(), 1);
}

TEST(npy_read, every_header_version_dtype_and_order)
{
  temp_dir dir;
  const std::vector<double> d{1, 2, 3, 4, 5, 6};
  // Version 2.0 and 3.0 headers (4-byte length).
  for (int major : {1, 2, 3}) {
    const auto p =
        dir.write("v" + std::to_string(major) + ".npy",
                  npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                            bytes_of(d), major));
    const auto m = io::read_npy<double>(p);
    EXPECT_EQ(std::vector<double>(m.data(), m.data() + 6), d) << "version " << major;
  }
  // fortran_order: the file holds columns; the result is row-major [[1 3 5], [2 4 6]].
  const auto f = dir.write(
      "f.npy",
      npy_image("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", bytes_of(d)));
  const auto mf = io::read_npy<float>(f);
  EXPECT_EQ(std::vector<float>(mf.data(), mf.data() + 6), (std::vector<float>{1, 3, 5, 2, 4, 6}));
  // Big-endian doubles.
  std::string be = bytes_of(std::vector<double>{1.5, -2});
  for (std::size_t k = 0; k < be.size(); k += 8) {
    std::reverse(be.begin() + k, be.begin() + k + 8);
  }
  const auto b =
      dir.write("be.npy", npy_image("{'descr': '>f8', 'fortran_order': False, 'shape': (2,)}", be));
  EXPECT_EQ(io::read_npy_vector<double>(b), (std::vector<double>{1.5, -2}));
  // Booleans, bytes, shorts, floats into the other types.
  const auto pb =
      dir.write("b.npy", npy_image("{'descr': '|b1', 'fortran_order': False, 'shape': (1, 4), }",
                                   std::string("\x01\x00\x01\x01", 4)));
  const auto mb = io::read_npy<std::int64_t>(pb);
  EXPECT_EQ(std::vector<std::int64_t>(mb.data(), mb.data() + 4),
            (std::vector<std::int64_t>{1, 0, 1, 1}));
  const auto pu =
      dir.write("u.npy", npy_image("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }",
                                   std::string("\x00\x7f\xff", 3)));
  EXPECT_EQ(io::read_npy_vector<double>(pu), (std::vector<double>{0, 127, 255}));
  const auto pi =
      dir.write("i2.npy", npy_image("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }",
                                    bytes_of(std::vector<std::int16_t>{-300, 7})));
  EXPECT_EQ(io::read_npy_vector<std::int32_t>(pi), (std::vector<std::int32_t>{-300, 7}));
  const auto pf =
      dir.write("f4.npy", npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                                    bytes_of(std::vector<float>{0.1f, -3})));
  EXPECT_EQ(io::read_npy_vector<double>(pf), (std::vector<double>{double(0.1f), -3}));
  // 0 x 3 is a valid empty array.
  const auto pe = dir.write(
      "e.npy", npy_image("{'descr': '<i8', 'fortran_order': False, 'shape': (0, 3), }", ""));
  EXPECT_EQ(io::read_npy<std::int64_t>(pe).rows(), 0);
  // Dense -> CSR of the nonzeros through read_matrix.
  const auto pm =
      dir.write("m.npy", npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                                   bytes_of(std::vector<double>{0, 2, 0, -1, 0, 0})));
  EXPECT_EQ(entries_of(io::read_matrix<float, std::int32_t>(pm)),
            (entry_map{{{0, 1}, 2}, {{1, 0}, -1}}));
  const auto info = io::describe(pm);
  EXPECT_EQ(info.nnz, 2);
  EXPECT_EQ(info.field, "<f8");
}

TEST(npy_read, malformed_headers_and_lying_shapes)
{
  temp_dir dir;
  const std::string eight(8 * 6, '\0');
  struct bad {
    std::string name;
    std::string bytes;
    std::string fragment;
  };
  const std::vector<bad> cases{
      {"empty", "", "empty file"},
      {"magic", "NUMPY not really a file", "magic"},
      {"version", std::string("\x93NUMPY\x04\x00\x10\x00", 10) + std::string(16, ' '), "version 4"},
      {"header_len", std::string("\x93NUMPY\x01\x00\xff\x7f{'descr'", 17), "truncated .npy header"},
      {"shape_too_big",
       npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000, 100000), }",
                 eight),
       "needs more data than the 48 bytes"},
      {"shape_overflow",
       npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
                 eight),
       "overflows a 64-bit element count"},
      {"shape_small",
       npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", eight),
       "needs 32 bytes but 48 follow"},
      {"negative", npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (-1, 6), }", eight),
       "negative dimension"},
      {"no_shape", npy_image("{'descr': '<f8', 'fortran_order': False, }", eight), "lacks 'shape'"},
      {"dtype", npy_image("{'descr': '<c16', 'fortran_order': False, 'shape': (3,), }", eight),
       "unsupported .npy dtype '<c16'"},
      {"structured",
       npy_image("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (6,), }", eight),
       "structured"},
      {"syntax", npy_image("{'descr': '<f8' 'fortran_order': False, 'shape': (6,), }", eight),
       "malformed .npy header"},
      {"unterminated", npy_image("{'descr': '<f8, 'fortran_order': False, 'shape': (6,), }", eight),
       "malformed"},
      {"three_d",
       npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 3), }", eight),
       "expected a 1-D or 2-D array"},
      {"zero_d",
       npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", std::string(8, '\0')),
       "expected a 1-D or 2-D array"}};
  for (const auto& c : cases) {
    const auto p = dir.write(c.name + ".npy", c.bytes);
    expect_io_error([&] { (void)io::read_npy<double>(p); }, {p.string(), c.fragment});
    expect_io_error([&] { (void)io::read_matrix<double, std::int32_t>(p); },
                    {p.string(), c.fragment});
  }
  // Floating point data cannot become integers; out-of-range integers are refused.
  const auto pf = dir.write(
      "f.npy", npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }", eight));
  expect_io_error([&] { (void)io::read_npy<std::int64_t>(pf); }, {pf.string(), "floating-point"});
  const auto pl =
      dir.write("l.npy", npy_image("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }",
                                   bytes_of(std::vector<std::int64_t>{std::int64_t{1} << 40})));
  expect_io_error([&] { (void)io::read_npy<std::int32_t>(pl); },
                  {pl.string(), "does not fit a 32-bit"});
}

// ---- npz ----------------------------------------------------------------------------------------

TEST(npz_write, named_arrays_read_back)
{
  temp_dir dir;
  const std::vector<std::int64_t> idx{5, 4, 3, 2, 1, 0};
  const std::vector<float> dist{0.5f, 0.25f, 1e-3f, 8, 9, 10, 11, 12};
  const std::vector<double> one{3.5, -1};
  const io::npz_entry entries[] = {
      io::npz_entry::of("indices", dense_view<const std::int64_t>{2, 3, 3, idx.data()}),
      io::npz_entry::of("distances", dense_view<const float>{2, 3, 4, dist.data()}),  // strided
      io::npz_entry::of("labels", std::span<const double>(one))};
  io::write_npz(dir.path("out.npz"), entries);
  EXPECT_EQ(io::npz_names(dir.path("out.npz")),
            (std::vector<std::string>{"indices", "distances", "labels"}));
  const auto i = io::read_npz_array<std::int64_t>(dir.path("out.npz"), "indices");
  EXPECT_EQ(std::vector<std::int64_t>(i.data(), i.data() + 6), idx);
  const auto d = io::read_npz_array<float>(dir.path("out.npz"), "distances");
  EXPECT_EQ(std::vector<float>(d.data(), d.data() + 6),
            (std::vector<float>{0.5f, 0.25f, 1e-3f, 9, 10, 11}));
  const auto l = io::read_npz_array<double>(dir.path("out.npz"), "labels");
  EXPECT_EQ(l.rows(), 2);
  EXPECT_EQ(l.data()[1], -1);
  expect_io_error([&] { (void)io::read_npz_array<double>(dir.path("out.npz"), "nope"); },
                  {"no array 'nope'", "indices.npy"});
  // Deterministic bytes: writing twice gives identical files.
  io::write_npz(dir.path("again.npz"), entries);
  std::ifstream a(dir.path("out.npz"), std::ios::binary);
  std::ifstream b(dir.path("again.npz"), std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}),
            std::string(std::istreambuf_iterator<char>(b), {}));
  EXPECT_THROW(
      io::write_npz(dir.path("dup.npz"), std::vector<io::npz_entry>{entries[0], entries[0]}),
      invalid_argument);
}

/// The members scipy.sparse.save_npz writes for a csr_matrix, written by write_npz (the format a
/// 0-d byte string, |S3) and read back by read_npz: the 3 x 4 CSR [[0 1 0 2], [0 0 0 0], [3 0 4 0]]
/// with row 0 listed in the order 3, 1 (as a k-NN graph lists its rows, nearest first).
TEST(npz_write, scipy_csr_members_read_back)
{
  temp_dir dir;
  const std::vector<std::int32_t> indices{3, 1, 0, 2};
  const std::vector<std::int32_t> indptr{0, 2, 2, 4};
  const std::vector<std::int64_t> shape{3, 4};
  const std::vector<float> data{2, 1, 3, 4};
  const io::npz_entry entries[] = {
      io::npz_entry::of("indices", std::span<const std::int32_t>(indices)),
      io::npz_entry::of("indptr", std::span<const std::int32_t>(indptr)),
      io::npz_entry::of_bytes("format", "csr"),
      io::npz_entry::of("shape", std::span<const std::int64_t>(shape)),
      io::npz_entry::of("data", std::span<const float>(data))};
  const auto p = dir.path("csr.npz");
  io::write_npz(p, entries);
  EXPECT_EQ(io::npz_names(p),
            (std::vector<std::string>{"indices", "indptr", "format", "shape", "data"}));
  const entry_map expected{{{0, 1}, 1}, {{0, 3}, 2}, {{2, 0}, 3}, {{2, 2}, 4}};
  EXPECT_EQ(entries_of(io::read_npz<double, std::int32_t>(p)), expected);
  EXPECT_EQ(entries_of(io::read_matrix<float, std::int64_t>(p)), expected);
  EXPECT_EQ(io::describe(p).field, "<f4");
  // The member as numpy writes np.array(b"csr"): a 0-d |S3 array, its 3 bytes after the header.
  std::ifstream in(p, std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  const std::string header = "{'descr': '|S3', 'fortran_order': False, 'shape': (), }";
  const std::size_t at = bytes.find(header);
  ASSERT_NE(at, std::string::npos);
  const std::size_t end = bytes.find('\n', at);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ((end + 1 - (at - 10)) % 64, 0u);  // magic, version and length: 10 bytes
  EXPECT_EQ(bytes.substr(end + 1, 3), "csr");
  // An empty byte string and a 0-d array of several elements are refused.
  EXPECT_THROW(io::write_npz(dir.path("e.npz"), std::vector{io::npz_entry::of_bytes("format", "")}),
               invalid_argument);
  io::npz_entry wide = io::npz_entry::of("shape", std::span<const std::int64_t>(shape));
  wide.ndim = 0;
  EXPECT_THROW(io::write_npz(dir.path("w.npz"), std::vector{wide}), invalid_argument);
}

/// Members of a scipy.sparse.save_npz archive for the 3 x 4 CSR [[0 1 0 2], [0 0 0 0], [3 0 4 0]].
std::vector<std::pair<std::string, std::string>> scipy_members(const std::string& format = "csr")
{
  const std::string hdr = "'fortran_order': False, ";
  return {{"indices.npy",
           npy_image("{'descr': '<i4', " + hdr + "'shape': (4,), }",
                     bytes_of(std::vector<std::int32_t>{3, 1, 0, 2}))},  // row 0 unsorted
          {"indptr.npy", npy_image("{'descr': '<i4', " + hdr + "'shape': (4,), }",
                                   bytes_of(std::vector<std::int32_t>{0, 2, 2, 4}))},
          {"format.npy", npy_image("{'descr': '|S3', " + hdr + "'shape': (), }", format)},
          {"shape.npy", npy_image("{'descr': '<i8', " + hdr + "'shape': (2,), }",
                                  bytes_of(std::vector<std::int64_t>{3, 4}))},
          {"data.npy", npy_image("{'descr': '<f8', " + hdr + "'shape': (4,), }",
                                 bytes_of(std::vector<double>{2, 1, 3, 4}))}};
}

TEST(npz_read, scipy_csr_stored_and_deflated)
{
  temp_dir dir;
  const entry_map expected{{{0, 1}, 1}, {{0, 3}, 2}, {{2, 0}, 3}, {{2, 2}, 4}};
  for (bool deflate : {false, true}) {
    const auto p = dir.write(deflate ? "c.npz" : "s.npz", zip_image(scipy_members(), deflate));
    const auto m = io::read_npz<double, std::int32_t>(p);
    EXPECT_EQ(m.rows(), 3);
    EXPECT_EQ(m.cols(), 4);
    EXPECT_EQ(entries_of(m), expected);
    EXPECT_EQ(m.col_idx()[0], 1);  // canonicalised
    EXPECT_EQ(entries_of(io::read_matrix<float, std::int64_t>(p)), expected);
    const auto info = io::describe(p);
    EXPECT_EQ(info.format, io::file_format::npz);
    EXPECT_EQ(info.nnz, 4);
    EXPECT_EQ(info.field, "<f8");
  }
}

TEST(npz_read, zip64_directory_fields)
{
  temp_dir dir;
  const entry_map expected{{{0, 1}, 1}, {{0, 3}, 2}, {{2, 0}, 3}, {{2, 2}, 4}};
  for (bool deflate : {false, true}) {
    const auto p = dir.write("z64.npz", zip_image(scipy_members(), deflate, /*zip64=*/true));
    EXPECT_EQ(entries_of(io::read_npz<double, std::int32_t>(p)), expected);
  }
  // A saturated end record without the zip64 locator is corrupt.
  std::string bad = zip_image(scipy_members(), false, true);
  const std::size_t loc = bad.rfind(std::string("PK\x06\x07", 4));
  bad[loc + 3] = '\x00';
  const auto q = dir.write("bad64.npz", bad);
  expect_io_error([&] { (void)io::read_npz<double, std::int32_t>(q); },
                  {q.string(), "zip64 sizes without a zip64 locator"});
}

TEST(npz_read, csc_is_transposed_other_formats_rejected)
{
  temp_dir dir;
  // The same arrays with format 'csc' and shape (4, 3) list the columns of a 4 x 3 matrix.
  auto members = scipy_members("csc");
  const std::string hdr = "'fortran_order': False, ";
  members[3].second = npy_image("{'descr': '<i8', " + hdr + "'shape': (2,), }",
                                bytes_of(std::vector<std::int64_t>{4, 3}));
  const auto p = dir.write("csc.npz", zip_image(members, true));
  // CSC columns j hold rows: col 0 -> rows {3, 1}, col 2 -> rows {0, 2}.
  EXPECT_EQ(entries_of(io::read_npz<double, std::int64_t>(p)),
            (entry_map{{{1, 0}, 1}, {{3, 0}, 2}, {{0, 2}, 3}, {{2, 2}, 4}}));
  const auto q = dir.write("coo.npz", zip_image(scipy_members("coo"), false));
  expect_io_error([&] { (void)io::read_npz<double, std::int64_t>(q); },
                  {q.string(), "scipy sparse format 'coo' is not supported"});
}

TEST(npz_read, empty_deflated_member_inflates_to_nothing)
{
  temp_dir dir;
  const auto p = dir.write("e.npz", zip_image({{"empty.npy", ""}}, true));
  EXPECT_EQ(io::npz_names(p), (std::vector<std::string>{"empty"}));
  // The member extracts (0 bytes, CRC 0) and is then rejected as an .npy.
  expect_io_error([&] { (void)io::read_npz_array<double>(p, "empty"); },
                  {p.string() + "[empty.npy]", "empty file"});
}

TEST(npz_read, corrupt_archives)
{
  temp_dir dir;
  const std::string good = zip_image(scipy_members(), true);
  const auto check = [&](const std::string& name, const std::string& bytes,
                         const std::string& frag) {
    const auto p = dir.write(name, bytes);
    expect_io_error([&] { (void)io::read_npz<double, std::int32_t>(p); }, {p.string(), frag});
  };
  check("empty.npz", "", "empty file");
  check("short.npz", "PK", "not a zip archive");
  check("trunc.npz", good.substr(0, good.size() - 30), "no end-of-central-directory");
  check("half.npz", good.substr(0, good.size() / 2), "no end-of-central-directory");
  // Flip a byte inside the first member's compressed data: inflate or the CRC check fails.
  std::string flipped = good;
  flipped[60] = static_cast<char>(flipped[60] ^ 0x10);
  check("flip.npz", flipped, "corrupt zip");
  // A wrong CRC in a stored archive.
  std::string crc_bad = zip_image(scipy_members(), false);
  const std::size_t first_cd = crc_bad.find(std::string("PK\x01\x02", 4));
  crc_bad[first_cd + 16] = static_cast<char>(crc_bad[first_cd + 16] ^ 1);
  check("crc.npz", crc_bad, "CRC-32 mismatch");
  // A central directory claiming a huge uncompressed size.
  std::string huge = good;
  huge[first_cd + 24] = '\xff';
  huge[first_cd + 25] = '\xff';
  huge[first_cd + 26] = '\xff';
  huge[first_cd + 27] = '\x7f';
  check("huge.npz", huge, "corrupt zip");
  // Missing members and inconsistent arrays.
  auto members = scipy_members();
  members.erase(members.begin() + 4);
  check("nodata.npz", zip_image(members, false), "no 'data.npy' member");
  members = scipy_members();
  members[1].second = npy_image("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }",
                                bytes_of(std::vector<std::int32_t>{0, 3, 2, 4}));
  check("indptr.npz", zip_image(members, false), "row pointers decrease");
  members = scipy_members();
  members[0].second = npy_image("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }",
                                bytes_of(std::vector<std::int32_t>{3, 1, 0, 9}));
  check("index.npz", zip_image(members, false), "");
  members = scipy_members();
  members[3].second = npy_image("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                                bytes_of(std::vector<std::int64_t>{3, std::int64_t{1} << 40}));
  check("wide.npz", zip_image(members, false), "does not fit the 32-bit index type");
  members = scipy_members();
  members[4].second = npy_image("{'descr': '<f8', 'fortran_order': False, 'shape': (9,), }",
                                bytes_of(std::vector<double>{2, 1, 3, 4}));
  check("lying.npz", zip_image(members, false), "needs more data");
}

// ---- output guarantees: temporary file + rename, zip64, escaped names ---------------------------

/// The names in a directory (to show that no temporary file is left behind).
std::vector<std::string> listing(const std::filesystem::path& dir)
{
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string contents(const std::filesystem::path& p)
{
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

TEST(npy_row_writer, blocks_give_the_bytes_of_write_npy)
{
  temp_dir dir;
  std::vector<float> a(7 * 5);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = 0.5f * float(i) - 3;
  }
  io::write_npy(dir.path("whole.npy"), dense_view<const float>{7, 5, 5, a.data()});
  io::npy_row_writer<float> w(dir.path("blocks.npy"), 7, 5);
  w.append(dense_view<const float>{3, 5, 5, a.data()});
  w.append(dense_view<const float>{0, 5, 5, a.data() + 15});
  w.append(dense_view<const float>{4, 5, 5, a.data() + 15});
  EXPECT_FALSE(std::filesystem::exists(dir.path("blocks.npy")));  // not before commit
  w.commit();
  EXPECT_EQ(contents(dir.path("blocks.npy")), contents(dir.path("whole.npy")));
  // More rows than declared, or a commit before all rows, are errors.
  io::npy_row_writer<float> over(dir.path("over.npy"), 2, 5);
  EXPECT_THROW(over.append(dense_view<const float>{3, 5, 5, a.data()}), invalid_argument);
  EXPECT_THROW(over.commit(), invalid_argument);
}

TEST(output_file, an_unfinished_or_failed_write_leaves_nothing_behind)
{
  temp_dir dir;
  const std::vector<double> v{1, 2, 3, 4};
  io::write_npy(dir.path("keep.npy"), std::span<const double>(v));
  const std::string before = contents(dir.path("keep.npy"));
  {
    // Abandoned (an exception on the way): the temporary is removed, the old file untouched.
    io::npy_row_writer<double> w(dir.path("keep.npy"), 1, 4);
    w.append(dense_view<const double>{1, 4, 4, v.data()});
  }
  {
    io::npy_row_writer<double> w(dir.path("new.npy"), 2, 4);
    w.append(dense_view<const double>{1, 4, 4, v.data()});
  }
  EXPECT_EQ(listing(dir.path("")), (std::vector<std::string>{"keep.npy"}));
  EXPECT_EQ(contents(dir.path("keep.npy")), before);
  // A directory that does not exist, a file name that is empty.
  expect_io_error([&] { io::write_npy(dir.path("no/such/dir/x.npy"), std::span<const double>(v)); },
                  {"no/such/dir/x.npy", "cannot create a file"});
  expect_io_error([&] { io::write_npy(dir.path("") / "", std::span<const double>(v)); }, {"empty"});
  // A full device: the write error names the file and the reason.
  if (std::filesystem::exists("/dev/full")) {
    std::vector<double> big(1 << 20, 1.0);
    expect_io_error([&] { io::write_npy("/dev/full", std::span<const double>(big)); },
                    {"/dev/full", "No space left on device"});
  }
  EXPECT_EQ(listing(dir.path("")), (std::vector<std::string>{"keep.npy"}));
}

TEST(npz_write, zip64_records_read_back)
{
  temp_dir dir;
  const std::vector<std::int64_t> idx{5, 4, 3, 2, 1, 0};
  const std::vector<float> dist{0.5f, 0.25f, 1e-3f, 8, 9, 10};
  const io::npz_entry entries[] = {
      io::npz_entry::of("indices", dense_view<const std::int64_t>{2, 3, 3, idx.data()}),
      io::npz_entry::of("distances", dense_view<const float>{3, 2, 2, dist.data()})};
  io::write_npz(dir.path("z.npz"), entries, {.zip64 = true});
  EXPECT_EQ(io::npz_names(dir.path("z.npz")), (std::vector<std::string>{"indices", "distances"}));
  const auto i = io::read_npz_array<std::int64_t>(dir.path("z.npz"), "indices");
  EXPECT_EQ(std::vector<std::int64_t>(i.data(), i.data() + 6), idx);
  const auto d = io::read_npz_array<float>(dir.path("z.npz"), "distances");
  EXPECT_EQ(std::vector<float>(d.data(), d.data() + 6), dist);

  // The layout (APPNOTE 4.3.14-4.3.15, 4.5.3): local headers with saturated sizes and a 20-byte
  // zip64 extra field, central entries with both sizes and the offset in it, the zip64 end record
  // and its locator before a classic end record whose fields all say "see zip64".
  const std::string z = contents(dir.path("z.npz"));
  const auto u16 = [&](std::size_t at) {
    return std::uint16_t(std::uint8_t(z[at]) | std::uint8_t(z[at + 1]) << 8);
  };
  const auto u32 = [&](std::size_t at) {
    return std::uint32_t(u16(at)) | std::uint32_t(u16(at + 2)) << 16;
  };
  const auto u64 = [&](std::size_t at) {
    return std::uint64_t(u32(at)) | std::uint64_t(u32(at + 4)) << 32;
  };
  ASSERT_EQ(u32(0), 0x04034b50u);
  EXPECT_EQ(u16(4), 45);            // version needed: zip64
  EXPECT_EQ(u32(18), 0xffffffffu);  // compressed size
  EXPECT_EQ(u32(22), 0xffffffffu);  // size
  EXPECT_EQ(u16(28), 20);           // extra length
  const std::size_t extra = 30 + u16(26);
  EXPECT_EQ(u16(extra), 1);  // zip64 extra id
  EXPECT_EQ(u16(extra + 2), 16);
  const std::uint64_t size = u64(extra + 4);
  EXPECT_EQ(u64(extra + 12), size);
  EXPECT_EQ(size, 128 + 6 * 8);  // npy header + 2 x 3 int64
  const std::size_t eocd = z.size() - 22;
  ASSERT_EQ(u32(eocd), 0x06054b50u);
  EXPECT_EQ(u16(eocd + 10), 0xffff);
  EXPECT_EQ(u32(eocd + 12), 0xffffffffu);
  EXPECT_EQ(u32(eocd + 16), 0xffffffffu);
  const std::size_t locator = eocd - 20;
  ASSERT_EQ(u32(locator), 0x07064b50u);
  const std::size_t record = u64(locator + 8);
  ASSERT_EQ(record, locator - 56);
  ASSERT_EQ(u32(record), 0x06064b50u);
  EXPECT_EQ(u64(record + 4), 44u);
  EXPECT_EQ(u64(record + 24), 2u);  // entries on this disk
  EXPECT_EQ(u64(record + 32), 2u);  // entries
  const std::uint64_t cd_size = u64(record + 40);
  const std::uint64_t cd_offset = u64(record + 48);
  EXPECT_EQ(cd_offset + cd_size, record);
  ASSERT_EQ(u32(cd_offset), 0x02014b50u);
  EXPECT_EQ(u32(cd_offset + 20), 0xffffffffu);
  EXPECT_EQ(u32(cd_offset + 24), 0xffffffffu);
  EXPECT_EQ(u32(cd_offset + 42), 0xffffffffu);  // local header offset
  const std::size_t cextra = cd_offset + 46 + u16(cd_offset + 28);
  EXPECT_EQ(u16(cd_offset + 30), 28);
  EXPECT_EQ(u16(cextra), 1);
  EXPECT_EQ(u16(cextra + 2), 24);
  EXPECT_EQ(u64(cextra + 4), size);
  EXPECT_EQ(u64(cextra + 12), size);
  EXPECT_EQ(u64(cextra + 20), 0u);  // the first member's local header
  // Without the option a small archive has no zip64 record.
  io::write_npz(dir.path("small.npz"), entries);
  EXPECT_EQ(contents(dir.path("small.npz")).find(std::string("PK\x06\x06", 4)), std::string::npos);
}

TEST(npz_read, coo_and_dia_get_the_csr_or_csc_message)
{
  temp_dir dir;
  const std::string hdr = "'fortran_order': False, ";
  const auto ints = [&](std::vector<std::int32_t> v) {
    return npy_image("{'descr': '<i4', " + hdr + "'shape': (" + std::to_string(v.size()) + ",), }",
                     bytes_of(v));
  };
  // scipy.sparse.save_npz of a COO matrix: row, col, data, shape, format; no indptr.
  const std::vector<std::pair<std::string, std::string>> coo{
      {"row.npy", ints({0, 2})},
      {"col.npy", ints({1, 0})},
      {"format.npy", npy_image("{'descr': '|S3', " + hdr + "'shape': (), }", "coo")},
      {"shape.npy", npy_image("{'descr': '<i8', " + hdr + "'shape': (2,), }",
                              bytes_of(std::vector<std::int64_t>{3, 4}))},
      {"data.npy", npy_image("{'descr': '<f8', " + hdr + "'shape': (2,), }",
                             bytes_of(std::vector<double>{1, 2}))}};
  const auto p = dir.write("coo.npz", zip_image(coo, true));
  expect_io_error([&] { (void)io::read_npz<double, std::int64_t>(p); },
                  {p.string(), "'coo' is not supported", "save the matrix as CSR or CSC"});
  auto dia = coo;
  dia[2].second = npy_image("{'descr': '|S3', " + hdr + "'shape': (), }", "dia");
  const auto q = dir.write("dia.npz", zip_image(dia, false));
  expect_io_error([&] { (void)io::read_npz<double, std::int64_t>(q); },
                  {"'dia' is not supported", "CSR or CSC"});
}

TEST(npz_read, bytes_that_are_not_utf8_are_escaped)
{
  temp_dir dir;
  const auto p = dir.write("odd.npz", zip_image({{"\xff\xfe\x01x.npy", "junk"}}, false));
  try {
    (void)io::read_npz<double, std::int64_t>(p);
    FAIL() << "read an archive without scipy members";
  } catch (const io_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("\\xff\\xfe\\x01x.npy"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\xff'), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\x01'), std::string::npos) << msg;
  }
  EXPECT_EQ(spira::detail::printable("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");
  EXPECT_EQ(spira::detail::printable("\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80"),
            "\\xc0\\xaf\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80");  // overlong, surrogate, > U+10FFFF
  EXPECT_EQ(spira::detail::printable("a\nb\x7f"), "a\\x0ab\\x7f");
}

}  // namespace
}  // namespace spira::test
