// Matrix Market: every variant from hand-written files, round trips, and malformed input.
#include "io_test_support.hpp"

#include <spira/convert.hpp>

#include <cmath>
#include <random>

namespace spira::test {
namespace {

template <class Pair>
class mm_read : public ::testing::Test {};
using value_index_pairs =
    ::testing::Types<std::pair<float, std::int32_t>, std::pair<float, std::int64_t>,
                     std::pair<double, std::int32_t>, std::pair<double, std::int64_t>>;
TYPED_TEST_SUITE(mm_read, value_index_pairs);

TYPED_TEST(mm_read, coordinate_real_general_sums_duplicates_and_sorts)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  temp_dir dir;
  // Comments, a blank line, CRLF line ends, unsorted entries, a duplicate and an explicit zero.
  const auto p = dir.write("a.mtx",
                           "%%MatrixMarket matrix coordinate real general\r\n"
                           "% a comment\r\n"
                           "\r\n"
                           "3 4 6\r\n"
                           "3 4 -2.5e1\r\n"
                           "1 2 0.5\r\n"
                           "1 1 +1\r\n"
                           "1 2 0.25\r\n"
                           "2 3 0\r\n"
                           "  3   1\t7  \r\n");
  const auto m = io::read_mm<V, I>(p);
  ASSERT_EQ(m.rows(), 3);
  ASSERT_EQ(m.cols(), 4);
  ASSERT_EQ(m.nnz(), 5);
  const std::vector<offset_t> rp(m.row_ptr(), m.row_ptr() + 4);
  const std::vector<I> ci(m.col_idx(), m.col_idx() + 5);
  const std::vector<V> va(m.values(), m.values() + 5);
  EXPECT_EQ(rp, (std::vector<offset_t>{0, 2, 3, 5}));
  EXPECT_EQ(ci, (std::vector<I>{0, 1, 2, 0, 3}));
  EXPECT_EQ(va, (std::vector<V>{1, 0.75, 0, 7, -25}));
}

TYPED_TEST(mm_read, integer_and_pattern_fields)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  temp_dir dir;
  const auto pi = dir.write("i.mtx",
                            "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 -7\n2 1 "
                            "123456\n");
  EXPECT_EQ(entries_of(io::read_mm<V, I>(pi)), (entry_map{{{0, 1}, -7}, {{1, 0}, 123456}}));
  const auto pp = dir.write(
      "p.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 3 3\n1 3\n2 2\n1 3\n");
  // Pattern entries are 1; the repeated (1,3) sums to 2.
  EXPECT_EQ(entries_of(io::read_mm<V, I>(pp)), (entry_map{{{0, 2}, 2}, {{1, 1}, 1}}));
}

TYPED_TEST(mm_read, symmetric_and_skew_symmetric_are_expanded)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  temp_dir dir;
  const auto ps = dir.write(
      "s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2\n3 1 -1\n3 2 4\n");
  EXPECT_EQ(entries_of(io::read_mm<V, I>(ps)),
            (entry_map{{{0, 0}, 2}, {{2, 0}, -1}, {{0, 2}, -1}, {{2, 1}, 4}, {{1, 2}, 4}}));
  const auto pk = dir.write(
      "k.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 3\n3 2 -0.5\n");
  EXPECT_EQ(entries_of(io::read_mm<V, I>(pk)),
            (entry_map{{{1, 0}, 3}, {{0, 1}, -3}, {{2, 1}, -0.5}, {{1, 2}, 0.5}}));
  const auto pp =
      dir.write("p.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n");
  EXPECT_EQ(entries_of(io::read_mm<V, I>(pp)), (entry_map{{{0, 0}, 1}, {{1, 0}, 1}, {{0, 1}, 1}}));
}

TYPED_TEST(mm_read, array_formats_are_column_major_and_keep_nonzeros)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  temp_dir dir;
  // 2 x 3, column-major: [[1 0 5], [2 4 0]].
  const auto pg =
      dir.write("g.mtx", "%%MatrixMarket matrix array real general\n% c\n2 3\n1\n2\n0\n4\n5\n0\n");
  EXPECT_EQ(entries_of(io::read_mm<V, I>(pg)),
            (entry_map{{{0, 0}, 1}, {{1, 0}, 2}, {{1, 1}, 4}, {{0, 2}, 5}}));
  // Symmetric 3 x 3 lists the lower triangle by columns: a00 a10 a20 a11 a21 a22.
  const auto ps =
      dir.write("s.mtx", "%%MatrixMarket matrix array integer symmetric\n3 3\n1\n2\n3\n4\n0\n6\n");
  EXPECT_EQ(entries_of(io::read_mm<V, I>(ps)), (entry_map{{{0, 0}, 1},
                                                          {{1, 0}, 2},
                                                          {{0, 1}, 2},
                                                          {{2, 0}, 3},
                                                          {{0, 2}, 3},
                                                          {{1, 1}, 4},
                                                          {{2, 2}, 6}}));
  // Skew-symmetric 3 x 3 lists the strict lower triangle: a10 a20 a21.
  const auto pk =
      dir.write("k.mtx", "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n");
  EXPECT_EQ(
      entries_of(io::read_mm<V, I>(pk)),
      (entry_map{{{1, 0}, 1}, {{0, 1}, -1}, {{2, 0}, 2}, {{0, 2}, -2}, {{2, 1}, 3}, {{1, 2}, -3}}));
}

TEST(mm_read_gzip, compressed_files_are_detected_by_magic_bytes)
{
  temp_dir dir;
  const std::string text =
      "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.5\n2 2 -3\n";
  const entry_map expected{{{0, 0}, 1.5}, {{1, 1}, -3}};
  EXPECT_EQ(entries_of(io::read_mm<double, std::int32_t>(dir.write("a.mtx.gz", gzip(text)))),
            expected);
  // No .gz extension: still recognised as gzip.
  EXPECT_EQ(entries_of(io::read_mm<double, std::int32_t>(dir.write("b.mtx", gzip(text)))),
            expected);
  // Concatenated members read as one stream.
  const std::string head = text.substr(0, 30);
  EXPECT_EQ(entries_of(io::read_mm<double, std::int32_t>(
                dir.write("c.mtx.gz", gzip(head) + gzip(text.substr(30))))),
            expected);
  const auto info = io::describe(dir.path("a.mtx.gz"));
  EXPECT_EQ(info.format, io::file_format::matrix_market);
  EXPECT_EQ(info.format_name, "matrix-market coordinate (gzip)");
  EXPECT_EQ(info.rows, 2);
  EXPECT_EQ(info.nnz, 2);
}

TEST(mm_header, describes_the_banner_and_size_line)
{
  temp_dir dir;
  const auto p = dir.write("s.mtx",
                           "%%MatrixMarket matrix coordinate pattern symmetric\n%x\n5 5 3\n1 1\n2 "
                           "1\n5 3\n");
  const auto h = io::read_mm_header(p);
  EXPECT_EQ(h.format, io::mm_format::coordinate);
  EXPECT_EQ(h.field, io::mm_field::pattern);
  EXPECT_EQ(h.symmetry, io::mm_symmetry::symmetric);
  EXPECT_EQ(h.rows, 5);
  EXPECT_EQ(h.cols, 5);
  EXPECT_EQ(h.entries, 3);
  const auto info = io::describe(p);
  EXPECT_EQ(info.format_name, "matrix-market coordinate");
  EXPECT_EQ(info.field, "pattern");
  EXPECT_EQ(info.symmetry, "symmetric");
  EXPECT_EQ(info.nnz, 3);
  const auto a = dir.write("a.mtx", "%%MatrixMarket matrix array real symmetric\n4 4\n");
  EXPECT_EQ(io::read_mm_header(a).entries, 10);
}

template <class V, class I>
csr_matrix<V, I> random_csr(std::int64_t rows, std::int64_t cols, double density, unsigned seed)
{
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> val(0, 1e3);
  std::vector<offset_t> rp{0};
  std::vector<I> ci;
  std::vector<V> va;
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      if (u(gen) < density) {
        ci.push_back(I(j));
        // Awkward values: tiny, huge, negative, with many digits.
        va.push_back(V(val(gen) * std::pow(10.0, double(int(u(gen) * 40) - 20))));
      }
    }
    rp.push_back(offset_t(ci.size()));
  }
  return make_csr<V, I>(host_resources{}, rows, cols, rp, ci, va, csr_check::canonical);
}

template <class V, class I>
void expect_identical(const csr_matrix<V, I>& a, const csr_matrix<V, I>& b)
{
  ASSERT_EQ(a.rows(), b.rows());
  ASSERT_EQ(a.cols(), b.cols());
  ASSERT_EQ(a.nnz(), b.nnz());
  EXPECT_TRUE(std::equal(a.row_ptr(), a.row_ptr() + a.rows() + 1, b.row_ptr()));
  EXPECT_TRUE(std::equal(a.col_idx(), a.col_idx() + a.nnz(), b.col_idx()));
  // Bitwise: the writer prints the shortest text that reads back to the same value.
  if (a.nnz() > 0) {
    EXPECT_EQ(0, std::memcmp(a.values(), b.values(), sizeof(V) * std::size_t(a.nnz())));
  }
}

TYPED_TEST(mm_read, write_then_read_is_exact)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  temp_dir dir;
  const auto a = random_csr<V, I>(57, 91, 0.07, 42);
  io::write_mm(dir.path("a.mtx"), a.view());
  expect_identical(a, io::read_mm<V, I>(dir.path("a.mtx")));
  // Through the format-detecting entry point, and an empty matrix with empty rows.
  expect_identical(a, io::read_matrix<V, I>(dir.path("a.mtx")));
  const auto e = random_csr<V, I>(4, 0, 0.5, 1);
  io::write_mm(dir.path("e.mtx"), e.view());
  expect_identical(e, io::read_mm<V, I>(dir.path("e.mtx")));
}

TEST(mm_write, dense_array_round_trip)
{
  temp_dir dir;
  const std::vector<double> d{1.5, 0, -2, 0, 0, 1e-300, 7, 0.1};  // 2 x 4 row-major
  io::write_mm(dir.path("d.mtx"), dense_view<const double>{2, 4, 4, d.data()});
  const auto h = io::read_mm_header(dir.path("d.mtx"));
  EXPECT_EQ(h.format, io::mm_format::array);
  EXPECT_EQ(h.entries, 8);
  EXPECT_EQ(entries_of(io::read_mm<double, std::int32_t>(dir.path("d.mtx"))),
            (entry_map{{{0, 0}, 1.5}, {{0, 2}, -2}, {{1, 1}, 1e-300}, {{1, 2}, 7}, {{1, 3}, 0.1}}));
  // A strided view (ld > cols) writes only its columns.
  io::write_mm(dir.path("s.mtx"), dense_view<const double>{2, 2, 4, d.data()});
  EXPECT_EQ(entries_of(io::read_mm<double, std::int32_t>(dir.path("s.mtx"))),
            (entry_map{{{0, 0}, 1.5}, {{1, 1}, 1e-300}}));
}

// ---- malformed input ---------------------------------------------------------------------------

struct bad_case {
  const char* name;
  const char* text;
  const char* line;  ///< ":<line>:" expected in the message, or "" when the error has no line
  const char* fragment;
};

class mm_malformed : public ::testing::TestWithParam<bad_case> {};

TEST_P(mm_malformed, throws_io_error_naming_file_and_line)
{
  const auto& c = GetParam();
  temp_dir dir;
  const auto p = dir.write(std::string(c.name) + ".mtx", c.text);
  std::vector<std::string> frags{p.string(), c.fragment};
  if (c.line[0] != '\0') {
    frags.push_back(p.string() + c.line);
  }
  expect_io_error([&] { (void)io::read_mm<double, std::int32_t>(p); }, frags);
  expect_io_error([&] { (void)io::read_matrix<float, std::int64_t>(p); }, frags);
}

constexpr const char* banner = "%%MatrixMarket matrix coordinate real general\n";

INSTANTIATE_TEST_SUITE_P(
    cases, mm_malformed,
    ::testing::Values(
        bad_case{"empty", "", "", "empty file"},
        bad_case{"bad_banner", "%%MatrixMarkt matrix coordinate real general\n1 1 0\n",
                 ":1:", "%%MatrixMarket"},
        bad_case{"no_banner", "1 1 1\n1 1 1\n", ":1:", "not a Matrix Market file"},
        bad_case{"vector", "%%MatrixMarket vector coordinate real general\n", ":1:", "'vector'"},
        bad_case{"bad_format", "%%MatrixMarket matrix sparse real general\n", ":1:", "'sparse'"},
        bad_case{"complex", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
                 ":1:", "complex"},
        bad_case{"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n",
                 ":1:", "hermitian"},
        bad_case{"banner_only", "%%MatrixMarket matrix coordinate real general\n%c\n", "",
                 "missing size line"},
        bad_case{"size_short", "%%MatrixMarket matrix coordinate real general\n3 3\n",
                 ":2:", "missing entry count"},
        bad_case{"size_text", "%%MatrixMarket matrix coordinate real general\n3 x 1\n1 1 1\n",
                 ":2:", "'x' is not an integer"},
        bad_case{"size_extra", "%%MatrixMarket matrix coordinate real general\n3 3 1 9\n1 1 1\n",
                 ":2:", "unexpected text"},
        bad_case{"negative_count", "%%MatrixMarket matrix coordinate real general\n-3 3 1\n1 1 1\n",
                 ":2:", "must be >= 0"},
        bad_case{"int64_overflow",
                 "%%MatrixMarket matrix coordinate real general\n99999999999999999999 3 0\n",
                 ":2:", "overflows a 64-bit integer"},
        bad_case{"array_count_overflow",
                 "%%MatrixMarket matrix array real general\n4294967296 4294967296\n1\n",
                 ":2:", "overflow a 64-bit count"},
        bad_case{"declared_larger_than_data",
                 "%%MatrixMarket matrix coordinate real general\n5 5 1000000000000\n1 1 1\n",
                 ":2:", "declares 1000000000000 entries but only 6 bytes follow"},
        bad_case{"declared_int64_max",
                 "%%MatrixMarket matrix coordinate real general\n5 5 9223372036854775807\n1 1 1\n",
                 ":2:", "declares 9223372036854775807 entries"},
        bad_case{
            "array_symmetric_overflow",
            "%%MatrixMarket matrix array real symmetric\n9223372036854775807 9223372036854775807\n",
            ":2:", "overflow a 64-bit count"},
        bad_case{"truncated_body",
                 "%%MatrixMarket matrix coordinate real general\n5 5 3\n1 1 1.000000000\n2 2 "
                 "2.000000000\n",
                 ":4:", "truncated: the file ends after 2 of the 3 entries"},
        bad_case{"too_many_entries",
                 "%%MatrixMarket matrix coordinate real general\n5 5 1\n1 1 1\n2 2 2\n",
                 ":4:", "more entries than the 1 declared"},
        bad_case{"row_zero", "%%MatrixMarket matrix coordinate real general\n5 5 1\n0 1 1\n",
                 ":3:", "row index 0 is out of range [1, 5]"},
        bad_case{"col_too_large",
                 "%%MatrixMarket matrix coordinate real general\n5 5 2\n1 1 1\n2 6 1\n",
                 ":4:", "column index 6 is out of range [1, 5]"},
        bad_case{"index_text", "%%MatrixMarket matrix coordinate real general\n5 5 1\n1 one 1\n",
                 ":3:", "column index 'one' is not an integer"},
        bad_case{"index_huge",
                 "%%MatrixMarket matrix coordinate real general\n5 5 1\n1 99999999999999999999 1\n",
                 ":3:", "overflows a 64-bit integer"},
        bad_case{"value_text", "%%MatrixMarket matrix coordinate real general\n5 5 1\n1 1 abc\n",
                 ":3:", "value 'abc' is not a number"},
        bad_case{"value_missing",
                 "%%MatrixMarket matrix coordinate real general\n5 5 2\n1 1 1.0\n1 2\n",
                 ":4:", "missing value"},
        bad_case{"integer_field_real_value",
                 "%%MatrixMarket matrix coordinate integer general\n5 5 1\n1 1 1.5\n",
                 ":3:", "not an integer"},
        bad_case{"pattern_with_value",
                 "%%MatrixMarket matrix coordinate pattern general\n5 5 1\n1 1 1.5\n",
                 ":3:", "unexpected text"},
        bad_case{"symmetric_not_square",
                 "%%MatrixMarket matrix coordinate real symmetric\n5 4 1\n1 1 1\n",
                 ":2:", "must be square"},
        bad_case{"skew_diagonal",
                 "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n",
                 ":3:", "diagonal"},
        bad_case{"array_truncated",
                 "%%MatrixMarket matrix array real general\n2 2\n1.0\n2.0\n3.0\n",
                 ":5:", "3 of the 4 values"},
        bad_case{"array_extra", "%%MatrixMarket matrix array real general\n1 1\n1\n2\n",
                 ":4:", "more values than the 1"},
        bad_case{"binary_garbage",
                 "%%MatrixMarket matrix coordinate real general\n2 2 1\n\x01\xff 1 1\n",
                 ":3:", "is not an integer"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(mm_malformed_files, missing_file_directory_and_truncated_gzip)
{
  temp_dir dir;
  const auto missing = dir.path("nope.mtx");
  expect_io_error([&] { (void)io::read_mm<double, std::int32_t>(missing); },
                  {missing.string(), "no such file"});
  expect_io_error([&] { (void)io::describe(missing); }, {missing.string(), "no such file"});
  const auto folder = dir.path("folder.mtx");
  std::filesystem::create_directory(folder);
  expect_io_error([&] { (void)io::read_mm<double, std::int32_t>(folder); },
                  {folder.string(), "is a directory"});

  // A device that never ends is refused instead of read forever.
  expect_io_error([] { (void)io::read_matrix<double, std::int32_t>("/dev/zero"); },
                  {"/dev/zero", "is not a regular file"});

  std::string text = banner;
  text += "100 100 500\n";
  for (int k = 0; k < 500; ++k) {
    text += std::to_string(k % 100 + 1) + " " + std::to_string(k * 7 % 100 + 1) + " 0.123456\n";
  }
  const std::string gz = gzip(text);
  const auto cut = dir.write("cut.mtx.gz", gz.substr(0, gz.size() / 2));
  expect_io_error([&] { (void)io::read_mm<double, std::int32_t>(cut); },
                  {cut.string(), "truncated gzip"});
  std::string corrupt = gz;
  corrupt[corrupt.size() / 2] = static_cast<char>(corrupt[corrupt.size() / 2] ^ 0x5a);
  corrupt[corrupt.size() / 2 + 1] = static_cast<char>(corrupt[corrupt.size() / 2 + 1] ^ 0xa5);
  const auto bad = dir.write("bad.mtx.gz", corrupt);
  expect_io_error([&] { (void)io::read_mm<double, std::int32_t>(bad); }, {bad.string()});
}

TEST(mm_malformed_files, extents_beyond_the_index_type)
{
  temp_dir dir;
  // 2^31 columns fit int32 indices (0 .. 2^31-1); 2^31 + 1 do not.
  const auto ok = dir.write("ok.mtx", std::string(banner) + "2 2147483648 1\n1 2147483648 1\n");
  EXPECT_EQ((io::read_mm<float, std::int32_t>(ok).cols()), 2147483648LL);
  const auto p = dir.write("cols.mtx", std::string(banner) + "%c\n2 2147483649 0\n");
  expect_io_error([&] { (void)io::read_mm<float, std::int32_t>(p); },
                  {p.string() + ":3:", "does not fit the 32-bit index type"});
  EXPECT_EQ((io::read_mm<float, std::int64_t>(p).cols()), 2147483649LL);
}

TEST(mm_malformed_files, huge_row_count_is_refused_before_allocating)
{
  temp_dir dir;
  const auto p = dir.write("rows.mtx", std::string(banner) + "1000000000000 1 0\n");
  expect_io_error([&] { (void)io::read_mm<double, std::int64_t>(p); },
                  {p.string() + ":2:", "read_options::max_rows"});
  // The limit is an option: a small one rejects a legal file, a larger one accepts it.
  const auto q = dir.write("q.mtx", std::string(banner) + "1000 1 0\n");
  io::read_options small;
  small.max_rows = 999;
  expect_io_error([&] { (void)io::read_mm<double, std::int64_t>(q, small); }, {"max_rows = 999"});
  EXPECT_EQ((io::read_mm<double, std::int64_t>(q).rows()), 1000);
}

}  // namespace
}  // namespace spira::test
