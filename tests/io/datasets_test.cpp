// The real datasets in ../shared/data load through the readers with the shapes and nnz that
// ../shared/data/README.md lists (1138_bus: expanded nnz from scipy.io.mmread(...).nnz).
#include "io_test_support.hpp"

#include <spira/convert.hpp>

#include <chrono>
#include <cstdio>

namespace spira::test {
namespace {

struct dataset {
  const char* file;
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t nnz;
  std::int64_t stored;  ///< entries the file declares (describe().nnz)
};

class shared_datasets : public ::testing::TestWithParam<dataset> {};

TEST_P(shared_datasets, load_with_documented_shape_and_nnz)
{
  const auto& d = GetParam();
  const std::filesystem::path dir(SPIRA_SHARED_DATA_DIR);
  const auto path = dir / d.file;
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << "dataset " << path << " is absent (the shared data folder is not present)";
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto m = io::read_matrix<float, std::int32_t>(path);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  RecordProperty("load_seconds", std::to_string(secs));
  std::printf("  %s: %lld x %lld, nnz %lld, read in %.2f s\n", d.file,
              static_cast<long long>(m.rows()), static_cast<long long>(m.cols()),
              static_cast<long long>(m.nnz()), secs);
  EXPECT_EQ(m.rows(), d.rows);
  EXPECT_EQ(m.cols(), d.cols);
  EXPECT_EQ(m.nnz(), d.nnz);
  validate(host_resources{}, m.view(), csr_check::canonical, d.file);
  const auto info = io::describe(path);
  EXPECT_EQ(info.rows, d.rows);
  EXPECT_EQ(info.cols, d.cols);
  EXPECT_EQ(info.nnz, d.stored);
}

INSTANTIATE_TEST_SUITE_P(
    data, shared_datasets,
    ::testing::Values(dataset{"uci-bow-kos/docword.kos.mtx.gz", 3430, 6906, 353160, 353160},
                      dataset{"movielens-latest-small/ratings.mtx.gz", 610, 9724, 100836, 100836},
                      dataset{"pbmc3k/matrix.mtx.gz", 13714, 2700, 2282976, 2282976},
                      dataset{"20newsgroups/tfidf.mtx.gz", 18846, 75878, 2854683, 2854683},
                      dataset{"sec-edgar-names/char3gram_tfidf.mtx.gz", 8335, 7817, 169658, 169658},
                      dataset{"suitesparse-1138_bus/1138_bus.mtx", 1138, 1138, 4054, 2596},
                      dataset{"snap-email-enron/email-Enron.txt.gz", 36692, 36692, 367662, 367662}),
    [](const auto& info) {
      std::string n = info.param.file;
      n = n.substr(0, n.find('/'));
      for (auto& c : n) {
        if (c == '-') {
          c = '_';
        }
      }
      return n;
    });

TEST(shared_datasets_values, bus_1138_is_symmetric_after_expansion)
{
  const auto path =
      std::filesystem::path(SPIRA_SHARED_DATA_DIR) / "suitesparse-1138_bus/1138_bus.mtx";
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << path << " is absent";
  }
  const auto m = io::read_mm<double, std::int64_t>(path);
  const auto e = entries_of(m);
  double diag = 0;
  for (const auto& [ij, v] : e) {
    const auto it = e.find({ij.second, ij.first});
    ASSERT_NE(it, e.end());
    EXPECT_EQ(it->second, v);
    if (ij.first == ij.second) {
      diag += v;
    }
  }
  // Trace from scipy.io.mmread(...).diagonal().sum().
  EXPECT_NEAR(diag, 973900.4097233, 1e-6);
}

}  // namespace
}  // namespace spira::test
