// select_k over ragged CSR rows on both backends against the naive sort oracle
// (tests/selection/oracle.hpp), compared exactly as in select_k_test.cpp: rows of every length
// around the radix cluster form's capacity, empty rows, k beyond a row's length (padding),
// unaligned value arrays, double values with 64-bit indices, and the errors of bad CSR arguments.
#include "selection/oracle.hpp"
#include "selection/select_k_support.hpp"
#include "support/backend.hpp"

#include <spira/select_k.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace spira::test {
namespace {

template <class Resources>
class select_k_csr_test : public ::testing::Test {};
TYPED_TEST_SUITE(select_k_csr_test, backends, backend_names);

template <class V, class I>
csr_matrix<V, I> ragged(std::int64_t rows, std::int64_t cols, std::uint64_t seed)
{
  std::mt19937_64 gen(seed);
  std::vector<offset_t> ptr{0};
  std::vector<I> col;
  std::vector<V> val;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    // empty rows, short rows, rows around a warp, and a few long ones
    const std::int64_t deg = r % 5 == 0 ? 0 : r % 7 == 0 ? 3000 + r : std::int64_t(u(gen) * 80);
    std::vector<I> cs;
    for (std::int64_t c = 0; c < cols && std::int64_t(cs.size()) < deg; ++c) {
      if (u(gen) < double(deg) / double(cols) * 1.5) {
        cs.push_back(static_cast<I>(c));
      }
    }
    for (auto c : cs) {
      col.push_back(c);
      val.push_back(static_cast<V>(std::floor(u(gen) * 50)));  // duplicates: the tie rule matters
    }
    ptr.push_back(static_cast<offset_t>(col.size()));
  }
  return make_csr<V, I>(host_resources{}, rows, cols, ptr, col, val);
}

/// A copy of a host CSR matrix on the backend (plain copies of its three arrays).
template <class V, class I, class Resources>
csr_matrix<V, I> csr_on(const Resources& res, const csr_matrix<V, I>& h)
{
  csr_matrix<V, I> d(res, h.rows(), h.cols(), h.nnz());
  copy(d.row_ptr(), d.space(), h.row_ptr(), memory_space::host, h.rows() + 1, cuda_of(res));
  copy(d.col_idx(), d.space(), h.col_idx(), memory_space::host, h.nnz(), cuda_of(res));
  copy(d.values(), d.space(), h.values(), memory_space::host, h.nnz(), cuda_of(res));
  return d;
}

/// A host copy of a CSR matrix of either space.
template <class V, class I>
csr_matrix<V, I> csr_to_host(const csr_matrix<V, I>& m)
{
  csr_matrix<V, I> h(host_resources{}, m.rows(), m.cols(), m.nnz());
  copy(h.row_ptr(), memory_space::host, m.row_ptr(), m.space(), m.rows() + 1, m.cuda());
  copy(h.col_idx(), memory_space::host, m.col_idx(), m.space(), m.nnz(), m.cuda());
  copy(h.values(), memory_space::host, m.values(), m.space(), m.nnz(), m.cuda());
  return h;
}

TYPED_TEST(select_k_csr_test, ragged_csr_rows)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const auto h = ragged<float, std::int32_t>(60, 5000, 17);
  const auto hv = h.view();
  const auto d = csr_on(res, h);
  for (std::int64_t k : {1, 32, 33, 100, 4000}) {
    for (auto order : {select_order::smallest, select_order::largest}) {
      for (bool sorted : {false, true}) {
        for (auto algo : algos_for<TypeParam>(3100)) {
          if (algo == select_algo::binary_search) {
            continue;
          }  // rows longer than 2048
          const select_params params{.algo = algo, .sorted = sorted};
          dense_matrix<float> v(res, h.rows(), k);
          dense_matrix<std::int32_t> i(res, h.rows(), k);
          select_k(res, d.view(), k, order, v.view(), i.view(), params);
          const auto hv_out = to_host_vector(v.storage());
          const auto hi_out = to_host_vector(i.storage());
          const auto csr = csr_to_host(select_k(res, d.view(), k, order, params));
          std::int64_t nnz = 0;
          for (std::int64_t r = 0; r < h.rows(); ++r) {
            std::vector<float> row(hv.values + hv.row_ptr[r], hv.values + hv.row_ptr[r + 1]);
            std::vector<std::int64_t> cols(hv.col_idx + hv.row_ptr[r],
                                           hv.col_idx + hv.row_ptr[r + 1]);
            const auto want = oracle_select(row, cols, k, order == select_order::largest, sorted);
            for (std::int64_t j = 0; j < k; ++j) {
              ASSERT_EQ(hi_out[r * k + j], want.indices[j])
                  << "row " << r << " slot " << j << " k=" << k << " " << algo_name(algo);
              ASSERT_EQ(hv_out[r * k + j], want.values[j]) << "row " << r;
            }
            const std::int64_t m = std::min<std::int64_t>(k, row.size());
            ASSERT_EQ(csr.row_ptr()[r + 1] - csr.row_ptr()[r], m) << "row " << r;
            for (std::int64_t j = 0; j < m; ++j) {
              ASSERT_EQ(csr.col_idx()[csr.row_ptr()[r] + j], want.indices[j]);
              ASSERT_EQ(csr.values()[csr.row_ptr()[r] + j], want.values[j]);
            }
            nnz += m;
          }
          EXPECT_EQ(csr.nnz(), nnz);
          EXPECT_EQ(csr.cols(), h.cols());
        }
      }
    }
  }
}

/// Ragged rows around the radix cluster form's block capacity (16,384 keys of 32 bits, 8,192 of
/// 64): rows shorter than the cluster (empty trailing blocks), chunks of unequal length, empty
/// rows, and k larger than some rows (padding), with NaN, infinities, signed zeros and many ties.
/// `shift` > 0 reads the matrix from value and column arrays that start `shift` elements into their
/// allocations (so that no row starts where the allocation's alignment says).
template <class V, class Resources>
void check_ragged_long(const Resources& res, const std::vector<std::int64_t>& degrees,
                       const std::vector<std::int64_t>& ks, std::int64_t shift = 0)
{
  using I = std::int32_t;
  const std::int64_t rows = static_cast<std::int64_t>(degrees.size());
  std::int64_t longest = 0;
  for (auto d : degrees) {
    longest = std::max(longest, d);
  }
  const std::int64_t cols = 2 * longest + 2;
  std::mt19937_64 gen(91 + longest);
  std::uniform_int_distribution<int> u(0, 49);
  std::vector<offset_t> ptr{0};
  std::vector<I> col;
  std::vector<V> val;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < degrees[r]; ++j) {
      col.push_back(static_cast<I>(2 * j + (r & 1)));
      const double x = j % 1009 == 0  ? std::numeric_limits<double>::quiet_NaN()
                       : j % 613 == 0 ? std::numeric_limits<double>::infinity()
                       : j % 401 == 0 ? -std::numeric_limits<double>::infinity()
                       : j % 7 == 0   ? -0.0
                                      : u(gen) / 4.0 - 6.0;
      val.push_back(static_cast<V>(x));
    }
    ptr.push_back(static_cast<offset_t>(col.size()));
  }
  const auto h = make_csr<V, I>(host_resources{}, rows, cols, ptr, col, val);
  const auto hv = h.view();
  const auto d = csr_on(res, h);
  auto view = d.view();
  csr_matrix<V, I> shifted(res, rows, cols, h.nnz() + shift);
  if (shift > 0) {
    copy(shifted.col_idx() + shift, shifted.space(), h.col_idx(), memory_space::host, h.nnz(),
         cuda_of(res));
    copy(shifted.values() + shift, shifted.space(), h.values(), memory_space::host, h.nnz(),
         cuda_of(res));
    view.col_idx = shifted.col_idx() + shift;
    view.values = shifted.values() + shift;
  }
  for (std::int64_t k : ks) {
    for (auto order : {select_order::smallest, select_order::largest}) {
      for (bool sorted : {false, true}) {
        for (auto algo : algos_for<Resources>(longest)) {
          const select_params params{.algo = algo, .sorted = sorted};
          dense_matrix<V> v(res, rows, k);
          dense_matrix<I> i(res, rows, k);
          select_k(res, view, k, order, v.view(), i.view(), params);
          const auto got_v = to_host_vector(v.storage());
          const auto got_i = to_host_vector(i.storage());
          for (std::int64_t r = 0; r < rows; ++r) {
            std::vector<V> row(hv.values + hv.row_ptr[r], hv.values + hv.row_ptr[r + 1]);
            std::vector<std::int64_t> cs(hv.col_idx + hv.row_ptr[r],
                                         hv.col_idx + hv.row_ptr[r + 1]);
            const auto want = oracle_select(row, cs, k, order == select_order::largest, sorted);
            for (std::int64_t j = 0; j < k; ++j) {
              ASSERT_EQ(got_i[r * k + j], want.indices[j])
                  << type_name<V>() << " row " << r << " (" << degrees[r] << " elements) slot " << j
                  << " k=" << k << (sorted ? " sorted " : " unsorted ") << algo_name(algo)
                  << " shift " << shift;
              ASSERT_TRUE(same_bits(got_v[r * k + j], want.values[j]))
                  << type_name<V>() << " row " << r << " slot " << j << " k=" << k;
            }
          }
        }
      }
    }
  }
}

TYPED_TEST(select_k_csr_test, ragged_csr_long_rows)
{
  // On CUDA: clusters of 7 blocks (float) and 8 blocks (double) where most rows fill only some of
  // the blocks, or none.
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  check_ragged_long<float>(res, {0, 1, 3, 7, 100000, 16385, 40000, 5, 16384, 2},
                           {1, 3, 6, 50, 20000, 110000});
  if (::testing::Test::HasFatalFailure()) {
    return;
  }
  check_ragged_long<double>(res, {2, 0, 8193, 9, 60000, 8192, 20001, 1},
                            {1, 4, 9, 1000, 30000, 65000});
}

TYPED_TEST(select_k_csr_test, ragged_csr_rows_at_every_alignment)
{
  // On CUDA (binary_search): rows that start between vector boundaries are read from the boundary
  // below with padding slots, rows that would then overflow the warp fall back to element loads,
  // and value arrays that start off a boundary; NaN, infinities, signed zeros and many ties.
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  for (std::int64_t shift : {0, 1, 3}) {
    check_ragged_long<float>(res, {3, 256, 255, 256, 254, 256, 1, 128, 129, 0, 256, 2, 64},
                             {1, 7, 32, 33, 128, 255, 300}, shift);
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
    check_ragged_long<double>(res, {1, 255, 256, 127, 128, 3, 129}, {1, 31, 64, 200}, shift);
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
    check_ragged_long<float>(res, {5, 2048, 2045, 1, 1500, 2047, 700}, {1, 100, 1024, 2048}, shift);
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
}

TYPED_TEST(select_k_csr_test, ragged_csr_rows_beyond_the_cluster_form)
{
  // On CUDA: the multi-pass radix form (one cooperative launch) on rows that start anywhere, with
  // so many ties that the k-th key's copies move to the candidate buffers and the position digits
  // are decided there.
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  check_ragged_long<float>(res, {3, 150001, 0, 200003, 7}, {1, 50, 70000});
  if (::testing::Test::HasFatalFailure()) {
    return;
  }
  check_ragged_long<double>(res, {70001, 5, 100003}, {1, 33, 40000});
}

TYPED_TEST(select_k_csr_test, ragged_csr_double_int64_and_validation)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const auto h = ragged<double, std::int64_t>(45, 700, 23);
  const auto hv = h.view();
  const auto d = csr_on(res, h);
  for (std::int64_t k : {1, 17, 64}) {
    for (auto order : {select_order::smallest, select_order::largest}) {
      const select_params params{.sorted = true};
      dense_matrix<double> v(res, h.rows(), k);
      dense_matrix<std::int64_t> i(res, h.rows(), k);
      select_k(res, d.view(), k, order, v.view(), i.view(), params);
      const auto got_v = to_host_vector(v.storage());
      const auto got_i = to_host_vector(i.storage());
      for (std::int64_t r = 0; r < h.rows(); ++r) {
        std::vector<double> row(hv.values + hv.row_ptr[r], hv.values + hv.row_ptr[r + 1]);
        std::vector<std::int64_t> cols(hv.col_idx + hv.row_ptr[r], hv.col_idx + hv.row_ptr[r + 1]);
        const auto want = oracle_select(row, cols, k, order == select_order::largest, true);
        for (std::int64_t j = 0; j < k; ++j) {
          ASSERT_EQ(got_i[r * k + j], want.indices[j]) << "row " << r << " slot " << j;
          ASSERT_TRUE(same_bits(got_v[r * k + j], want.values[j])) << "row " << r;
        }
      }
    }
  }
  dense_matrix<double> v(res, h.rows(), 3);
  dense_matrix<std::int64_t> i(res, h.rows(), 3);
  EXPECT_NE(message_of([&] {
              select_k(res, d.view(), 0, select_order::smallest, v.view(), i.view());
            }).find("k must be >= 1"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              select_k(res, d.view(), 4, select_order::smallest, v.view(), i.view());
            }).find("out_values must be 45 x 4"),
            std::string::npos);
}

}  // namespace
}  // namespace spira::test
