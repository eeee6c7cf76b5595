// Every built-in metric on slices of real data (../shared/data) against the float64 oracle:
// word counts (uci-bow-kos) and l2-normalised character 3-gram tf-idf with empty rows
// (sec-edgar-names). Skips with a message when the data folder is absent.
#include "support/oracle.hpp"

#include <spira/distance.hpp>
#include <spira/io.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace spira::test {
namespace {

/// Rows [begin, end) of m as a new canonical CSR matrix.
template <class V, class I>
csr_matrix<V, I> row_slice(const csr_matrix<V, I>& m, std::int64_t begin, std::int64_t end)
{
  std::vector<offset_t> rp{0};
  std::vector<I> ci;
  std::vector<V> va;
  for (std::int64_t i = begin; i < end; ++i) {
    for (offset_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) {
      ci.push_back(m.col_idx()[k]);
      va.push_back(m.values()[k]);
    }
    rp.push_back(offset_t(ci.size()));
  }
  return make_csr<V, I>(host_resources{}, end - begin, m.cols(), rp, ci, va, csr_check::canonical);
}

void check_all_metrics(const std::string& file, std::int64_t a_begin, std::int64_t b_begin)
{
  const std::filesystem::path path = std::filesystem::path(SPIRA_SHARED_DATA_DIR) / file;
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << "data file absent: " << path;
  }
  const auto m = io::read_matrix<float, std::int64_t>(path);
  const auto a = row_slice(m, a_begin, a_begin + 48);
  const auto b = row_slice(m, b_begin, b_begin + 31);
  const auto da = densify(a), db = densify(b);
  for (const metric mt : all_metrics()) {
    const double p = mt == metric::minkowski ? 3.0 : 2.0;
    dense_matrix<float> out(host_resources{}, a.rows(), b.rows());
    pairwise_distance(host_resources{}, a.view(), b.view(), out.view(), {.metric = mt, .p = p});
    const auto want = oracle::pairwise(mt, da, db, p);
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < a.rows(); ++i) {
      for (std::int64_t j = 0; j < b.rows(); ++j) {
        const double g = out.data()[i * b.rows() + j], w = want[i][j];
        if (!(std::abs(g - w) <= 2e-6 * (1 + std::abs(w))) && ++bad <= 3) {
          ADD_FAILURE() << to_string(mt) << " (" << i << ", " << j << "): " << g << " vs " << w;
        }
      }
    }
    EXPECT_EQ(bad, 0) << to_string(mt) << " on " << file;
  }
}

TEST(real_data, kos_word_counts)
{
  check_all_metrics("uci-bow-kos/docword.kos.mtx.gz", 0, 1000);
}

TEST(real_data, sec_edgar_char3grams_with_empty_rows)
{
  // Row 6277 is empty (a name shorter than 3 characters).
  check_all_metrics("sec-edgar-names/char3gram_tfidf.mtx.gz", 0, 6260);
}

}  // namespace
}  // namespace spira::test
