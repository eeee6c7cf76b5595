// The intersection strategy's walk of a row of A through the columns of B
// (spira/cuda/detail/pairwise_intersection_device.cuh). Against a B of more rows than one
// accumulator tile, a warp takes each nonzero of the row and walks the part of its column inside
// the tile (columns cut at both ends of a tile); against a B that fits one tile, a row of at least
// intersection_batch_entries nonzeros goes by batches of them, a batch's products spread evenly
// over a warp's lanes (short columns) or walked column by column (long ones). Rows of A of every
// length around those sizes (1 to 300 entries) and of columns all short, all long or mixed,
// against both kinds of B, whose columns hold from a few entries to most of its rows; against the
// float64 oracle on both backends (CUDA: the intersection strategy forced, and its automatic
// choice). The CUDA half skips without a GPU.
// Then the host engine's symmetric product (a matrix against itself forms half the pairs and
// copies the others): the same bytes as against a copy of the matrix, which takes the full walk.
#include "support/backend.hpp"
#include "support/oracle.hpp"
#include "support/pairwise_check.hpp"

#include <spira/distance.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace spira::test {
namespace {

template <class T>
class intersection_columns : public ::testing::Test {};

using column_types = ::testing::Types<std::tuple<host_resources, float, std::int32_t>,
                                      std::tuple<cuda_resources, float, std::int32_t>,
                                      std::tuple<cuda_resources, double, std::int64_t>>;

struct column_names {
  template <class T>
  static std::string GetName(int)
  {
    using R = std::tuple_element_t<0, T>;
    using V = std::tuple_element_t<1, T>;
    return std::string(std::is_same_v<R, cuda_resources> ? "cuda_" : "host_") +
           (std::is_same_v<V, float> ? "float" : "double");
  }
};

TYPED_TEST_SUITE(intersection_columns, column_types, column_names);

constexpr std::int64_t columns = 400;
constexpr std::int64_t long_columns = 8;  // columns 0-7: most rows of B store them

/// B of `rows` rows: column c stored by a row with probability 0.6 (c < 8), 0.02 (c < 40) or
/// 0.002 - columns of 0.6, 0.02 and 0.002 x rows entries. 8,000 rows are more than one tile of
/// float or double accumulators (each column then cut in every tile); 3,000 fit one tile of either.
template <class V, class I>
csr_matrix<V, I> index_rows(std::int64_t rows)
{
  std::mt19937_64 rng(91);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<offset_t> ptr{0};
  std::vector<I> col;
  std::vector<V> val;
  for (std::int64_t j = 0; j < rows; ++j) {
    for (std::int64_t c = 0; c < columns; ++c) {
      const double p = c < long_columns ? 0.6 : c < 40 ? 0.02 : 0.002;
      if (unit(rng) < p) {
        col.push_back(I(c));
        val.push_back(V(2.0 * (1.0 - unit(rng))));
      }
    }
    ptr.push_back(offset_t(col.size()));
  }
  return make_csr<V, I>(host_resources{}, rows, columns, ptr, col, val, csr_check::canonical);
}

/// A: rows of 1 to 300 entries spread over all columns (the first batch holding long columns,
/// later ones short), rows of short columns only, a row of the long columns only, an empty row.
template <class V, class I>
csr_matrix<V, I> query_rows()
{
  std::mt19937_64 rng(92);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<std::vector<std::int64_t>> rows;
  for (const std::int64_t d : {1, 2, 3, 7, 8, 9, 31, 32, 33, 64, 100, 257, 300}) {
    std::vector<std::int64_t> r;
    for (std::int64_t t = 0; t < d; ++t) {
      r.push_back(t * columns / d);  // includes column 0, a long one
    }
    rows.push_back(r);
  }
  for (const std::int64_t d : {5, 33, 200}) {
    std::vector<std::int64_t> r;
    for (std::int64_t t = 0; t < d; ++t) {
      r.push_back(long_columns + t * (columns - long_columns) / d);
    }
    rows.push_back(r);
  }
  rows.push_back({0, 1, 2, 3, 4, 5, 6, 7});
  rows.push_back({});
  std::vector<offset_t> ptr{0};
  std::vector<I> col;
  std::vector<V> val;
  for (const auto& r : rows) {
    for (const std::int64_t c : r) {
      col.push_back(I(c));
      val.push_back(V(2.0 * (1.0 - unit(rng))));
    }
    ptr.push_back(offset_t(col.size()));
  }
  return make_csr<V, I>(host_resources{}, std::int64_t(rows.size()), columns, ptr, col, val,
                        csr_check::canonical);
}

/// 0, 1, ..., rows(m) - 1.
template <class V, class I>
std::vector<std::int64_t> rows_of_all(const csr_matrix<V, I>& m)
{
  std::vector<std::int64_t> r(static_cast<std::size_t>(m.rows()));
  for (std::int64_t i = 0; i < m.rows(); ++i) {
    r[std::size_t(i)] = i;
  }
  return r;
}

TYPED_TEST(intersection_columns, rows_and_columns_of_every_length)
{
  using R = std::tuple_element_t<0, TypeParam>;
  using V = std::tuple_element_t<1, TypeParam>;
  using I = std::tuple_element_t<2, TypeParam>;
  SPIRA_SKIP_UNLESS_AVAILABLE(R);
  const R res{};
  const auto a = query_rows<V, I>();
  const auto da = densify(a);
  for (const std::int64_t rows : {8000, 3000}) {  // several tiles; one tile (batches)
    const auto b = index_rows<V, I>(rows);
    const auto db = densify(b);
    // cosine (annihilating), manhattan (sum NAMM: one-sided terms per product), chebyshev (max
    // NAMM), inner_product (no finalize: the sums themselves).
    for (const metric m :
         {metric::cosine, metric::manhattan, metric::chebyshev, metric::inner_product}) {
      const matrix want = oracle::pairwise(m, da, db);
      std::vector<pairwise_strategy> strategies{pairwise_strategy::automatic};
      if constexpr (std::is_same_v<R, cuda_resources>) {
        strategies.push_back(pairwise_strategy::intersection);
      }
      for (const pairwise_strategy s : strategies) {
        expect_near<V>(
            run_on(res, m, a, b, 2.0, s), want,
            "rows(B) = " + std::to_string(rows) + " " + to_string(m) + " " + to_string(s), m);
      }
    }
  }
}

// A against itself (the symmetric product: the pairs (i, j >= i) formed, the others copied) and A
// against a copy of A (other arrays: every pair formed) give the same bytes, for the distances of
// the symmetric product and for the others (which take the full walk either way). Rows: random
// ones, exact copies and near-copies (whose pairs the accuracy guard evaluates directly), an empty
// row; float and double.
template <class V, class I>
void expect_symmetric_product_is_exact()
{
  const host_resources res{};
  const auto base = random_csr<V, I>({.rows = 300, .cols = 120, .mean_degree = 14, .seed = 95});
  std::vector<std::int64_t> rows;
  std::vector<V> scales;
  for (std::int64_t r = 0; r < 300; ++r) {
    rows.push_back(r);
    scales.push_back(V(1));
  }
  for (const std::int64_t r : {3, 3, 17, 40, 41}) {  // copies
    rows.push_back(r);
    scales.push_back(V(1));
  }
  for (const std::int64_t r : {5, 17, 60}) {  // near-copies: the first value off by 1e-6
    rows.push_back(r);
    scales.push_back(V(1) + V(1e-6));
  }
  const auto a = copied_rows(base, rows, scales);
  const auto copy = copied_rows(a, rows_of_all(a));
  ASSERT_NE(a.col_idx(), copy.col_idx());
  for (const metric m : {metric::cosine, metric::euclidean, metric::sqeuclidean,
                         metric::inner_product, metric::correlation, metric::manhattan}) {
    const std::size_t count = std::size_t(a.rows() * a.rows());
    std::vector<V> self(count), other(count);
    pairwise_distance(res, a.view(), a.view(),
                      dense_view<V>{a.rows(), a.rows(), a.rows(), self.data()}, {.metric = m});
    pairwise_distance(res, a.view(), copy.view(),
                      dense_view<V>{a.rows(), a.rows(), a.rows(), other.data()}, {.metric = m});
    std::size_t differ = 0;
    for (std::size_t e = 0; e < count; ++e) {
      differ += std::memcmp(&self[e], &other[e], sizeof(V)) != 0 ? 1 : 0;
    }
    EXPECT_EQ(differ, 0u) << to_string(m) << ": " << differ << " of " << count
                          << " distances differ in their bytes";
  }
}

TEST(intersection_symmetric, a_matrix_against_itself_is_the_same_bytes_as_against_a_copy)
{
  expect_symmetric_product_is_exact<float, std::int32_t>();
  expect_symmetric_product_is_exact<double, std::int64_t>();
}

}  // namespace
}  // namespace spira::test
