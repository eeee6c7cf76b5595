// svmlight / libsvm and edge lists; format detection.
#include "io_test_support.hpp"

namespace spira::test {
namespace {

TEST(svmlight, one_based_file_with_comments_qid_and_blank_lines)
{
  temp_dir dir;
  const auto p = dir.write("a.svm",
                           "# header comment\n"
                           "1 1:0.5 3:2 # trailing comment\n"
                           "\n"
                           "-1 qid:7 2:-1.5e2\r\n"
                           "+0.25\n"
                           "2 3:1 1:4 3:1\n");
  const auto d = io::read_svmlight<double, std::int32_t>(p);
  EXPECT_EQ(d.labels, (std::vector<double>{1, -1, 0.25, 2}));
  ASSERT_EQ(d.x.rows(), 4);
  EXPECT_EQ(d.x.cols(), 3);  // one-based: largest index 3 -> 3 columns
  // Duplicates within a row are summed; rows are sorted.
  EXPECT_EQ(entries_of(d.x),
            (entry_map{{{0, 0}, 0.5}, {{0, 2}, 2}, {{1, 1}, -150}, {{3, 0}, 4}, {{3, 2}, 2}}));
  EXPECT_EQ(d.x.row_ptr()[3], d.x.row_ptr()[2]);  // the empty third row
}

TEST(svmlight, index_zero_switches_automatic_detection_to_zero_based)
{
  temp_dir dir;
  const auto p = dir.write("z.svm", "3 0:1 4:2\n4 2:5\n");
  const auto d = io::read_svmlight<float, std::int64_t>(p);
  EXPECT_EQ(d.x.cols(), 5);
  EXPECT_EQ(entries_of(d.x), (entry_map{{{0, 0}, 1}, {{0, 4}, 2}, {{1, 2}, 5}}));

  io::read_options zero;
  zero.svmlight_index_base = io::index_base::zero;
  const auto q = dir.write("q.svm", "1 1:1 3:2\n");
  EXPECT_EQ(entries_of(io::read_svmlight<float, std::int64_t>(q, zero).x),
            (entry_map{{{0, 1}, 1}, {{0, 3}, 2}}));
  io::read_options one;
  one.svmlight_index_base = io::index_base::one;
  expect_io_error([&] { (void)io::read_svmlight<float, std::int64_t>(p, one); },
                  {p.string() + ":1:", "feature index 0"});

  io::read_options wide;
  wide.svmlight_features = 10;
  EXPECT_EQ((io::read_svmlight<float, std::int64_t>(q, wide).x.cols()), 10);
  wide.svmlight_features = 2;
  expect_io_error([&] { (void)io::read_svmlight<float, std::int64_t>(q, wide); },
                  {q.string() + ":1:", "feature index 3"});
}

TEST(svmlight, through_read_matrix_and_describe)
{
  temp_dir dir;
  const auto p = dir.write("a.libsvm.gz", gzip("1 1:1 2:2\n0 2:3\n"));
  const auto m = io::read_matrix<double, std::int32_t>(p);
  EXPECT_EQ(entries_of(m), (entry_map{{{0, 0}, 1}, {{0, 1}, 2}, {{1, 1}, 3}}));
  const auto info = io::describe(p);
  EXPECT_EQ(info.format, io::file_format::svmlight);
  EXPECT_EQ(info.format_name, "svmlight (gzip)");
  EXPECT_EQ(info.rows, 2);
  EXPECT_EQ(info.cols, 2);
  EXPECT_EQ(info.nnz, 3);
}

TEST(svmlight, malformed_lines_name_file_and_line)
{
  temp_dir dir;
  const std::vector<std::tuple<std::string, std::string, std::string>> cases{
      {"1 1:1\nabc 1:2\n", ":2:", "label 'abc' is not a number"},
      {"1 1:1\n1,2 1:2\n", ":2:", "multi-label"},
      {"1 1:1\n1 2\n", ":2:", "expected index:value"},
      {"1 1:1\n1:1 2:2\n", ":2:", "must start with a label"},
      {"1 x:1\n", ":1:", "feature index 'x' is not an integer"},
      {"1 -3:1\n", ":1:", "must be >= 0"},
      {"1 99999999999999999999:1\n", ":1:", "overflows a 64-bit integer"},
      {"1\n1 1:zz\n", ":2:", "value 'zz' of feature 1 is not a number"},
      {"1 qid:a 1:1\n", ":1:", "qid"},
      {"1 1:1\n0 3000000000:1\n", ":2:", "does not fit the 32-bit index type"},
      // Found by fuzz_svmlight under UBSan: one past the largest index overflowed.
      {"1 0:1\n2 9223372036854775807:1\n", ":2:", "is too large"}};
  int k = 0;
  for (const auto& [text, line, frag] : cases) {
    const auto p = dir.write("bad" + std::to_string(k++) + ".svm", text);
    expect_io_error([&] { (void)io::read_svmlight<double, std::int32_t>(p); },
                    {p.string() + line, frag});
  }
  const auto empty = dir.write("empty.svm", "");
  const auto d = io::read_svmlight<double, std::int32_t>(empty);
  EXPECT_EQ(d.x.rows(), 0);
  EXPECT_EQ(d.x.cols(), 0);
}

TEST(edge_list, comments_weights_and_repeated_edges)
{
  temp_dir dir;
  const auto p = dir.write("g.txt",
                           "# Nodes: 5 Edges: 4\n"
                           "% another comment style\n"
                           "0\t1\n"
                           "1 0\n"
                           "4 2 0.5\n"
                           "\n"
                           "0 1\n");
  const auto m = io::read_edge_list<float, std::int32_t>(p);
  EXPECT_EQ(m.rows(), 5);
  EXPECT_EQ(m.cols(), 5);
  EXPECT_EQ(entries_of(m), (entry_map{{{0, 1}, 2}, {{1, 0}, 1}, {{4, 2}, 0.5}}));
  EXPECT_EQ(io::describe(p).format, io::file_format::edge_list);

  const std::vector<std::tuple<std::string, std::string, std::string>> cases{
      {"0 1\n2\n", ":2:", "missing target node id"},
      {"0 1\n2 -1\n", ":2:", "must be >= 0"},
      {"0 a\n", ":1:", "target node id 'a' is not an integer"},
      {"0 1 w\n", ":1:", "edge weight 'w'"},
      {"0 1 1 1\n", ":1:", "got more"},
      {"0 1\n5 1000000000000\n", ":2:", "max_rows"},
      // Found by fuzz_svmlight under UBSan: the node count (largest id + 1) overflowed.
      {"0 1\n5 9223372036854775807\n", ":2:", "max_rows"}};
  int k = 0;
  for (const auto& [text, line, frag] : cases) {
    const auto q = dir.write("bad" + std::to_string(k++) + ".txt", text);
    expect_io_error([&] { (void)io::read_edge_list<double, std::int64_t>(q); },
                    {q.string() + line, frag});
  }
}

TEST(format_detection, by_extension_then_by_content)
{
  EXPECT_EQ(io::format_from_extension("a/b.MTX"), io::file_format::matrix_market);
  EXPECT_EQ(io::format_from_extension("b.mtx.gz"), io::file_format::matrix_market);
  EXPECT_EQ(io::format_from_extension("b.svmlight"), io::file_format::svmlight);
  EXPECT_EQ(io::format_from_extension("b.npy"), io::file_format::npy);
  EXPECT_EQ(io::format_from_extension("b.npz"), io::file_format::npz);
  EXPECT_EQ(io::format_from_extension("email.txt.gz"), io::file_format::edge_list);
  expect_io_error([] { (void)io::format_from_extension("x.csv"); }, {"x.csv", "extension"});

  temp_dir dir;
  const auto mm = dir.write("matrix.data",
                            gzip("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n"));
  EXPECT_EQ(io::detect_format(mm), io::file_format::matrix_market);
  EXPECT_EQ(entries_of(io::read_matrix<double, std::int32_t>(mm)), (entry_map{{{0, 0}, 2}}));
  const auto junk = dir.write("junk.bin", "hello");
  expect_io_error([&] { (void)io::read_matrix<double, std::int32_t>(junk); },
                  {junk.string(), "unknown format"});
}

}  // namespace
}  // namespace spira::test
