// Conversions on both backends: hand-checked cases, then random matrices where the backends are
// compared with each other and with a dense reconstruction.
#include "support/backend.hpp"

#include <map>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace spira::test {
namespace {

template <class V, class I>
coo_matrix<V, I> make_coo(std::int64_t rows, std::int64_t cols,
                          const std::vector<std::tuple<I, I, V>>& entries)
{
  coo_matrix<V, I> m(host_resources{}, rows, cols, std::int64_t(entries.size()));
  for (std::size_t k = 0; k < entries.size(); ++k) {
    std::tie(m.row_idx()[k], m.col_idx()[k], m.values()[k]) = entries[k];
  }
  return m;
}

template <class V, class I>
coo_matrix<V, I> coo_on(const host_resources&, const coo_matrix<V, I>& m)
{
  coo_matrix<V, I> c(host_resources{}, m.rows(), m.cols(), m.nnz());
  std::copy_n(m.row_idx(), m.nnz(), c.row_idx());
  std::copy_n(m.col_idx(), m.nnz(), c.col_idx());
  std::copy_n(m.values(), m.nnz(), c.values());
  return c;
}
template <class V, class I>
coo_matrix<V, I> coo_on(const cuda_resources& res, const coo_matrix<V, I>& m)
{
  coo_matrix<V, I> c(res, m.rows(), m.cols(), m.nnz());
  copy(c.row_idx(), c.space(), m.row_idx(), memory_space::host, m.nnz(), res);
  copy(c.col_idx(), c.space(), m.col_idx(), memory_space::host, m.nnz(), res);
  copy(c.values(), c.space(), m.values(), memory_space::host, m.nnz(), res);
  return c;
}

template <class V, class I>
std::vector<offset_t> row_ptr_of(const csr_matrix<V, I>& h)
{
  return {h.row_ptr(), h.row_ptr() + h.rows() + 1};
}
template <class V, class I>
std::vector<I> cols_of(const csr_matrix<V, I>& h)
{
  return {h.col_idx(), h.col_idx() + h.nnz()};
}
template <class V, class I>
std::vector<V> vals_of(const csr_matrix<V, I>& h)
{
  return {h.values(), h.values() + h.nnz()};
}

template <class Resources>
class convert_test : public ::testing::Test {};
TYPED_TEST_SUITE(convert_test, backends, backend_names);

TYPED_TEST(convert_test, coo_to_csr_sorts_and_sums_duplicates)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  // 3 x 4; row 1 empty; (2,1) appears twice.
  auto coo = make_coo<double, std::int32_t>(
      3, 4, {{2, 3, 1.0}, {0, 2, 2.0}, {2, 1, 3.0}, {0, 0, 4.0}, {2, 1, 5.0}});
  auto csr = host_copy(coo_to_csr(res, coo_on(res, coo).view()));
  EXPECT_EQ(row_ptr_of(csr), (std::vector<offset_t>{0, 2, 2, 4}));
  EXPECT_EQ(cols_of(csr), (std::vector<std::int32_t>{0, 2, 1, 3}));
  EXPECT_EQ(vals_of(csr), (std::vector<double>{4.0, 2.0, 8.0, 1.0}));
}

TYPED_TEST(convert_test, transpose_and_row_indices)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  auto a = make_csr<float, std::int64_t>(host_resources{}, 2, 3, std::vector<offset_t>{0, 2, 3},
                                         std::vector<std::int64_t>{0, 2, 1},
                                         std::vector<float>{1, 2, 3});
  auto t = host_copy(transpose(res, on_backend(res, a).view()));
  EXPECT_EQ(t.rows(), 3);
  EXPECT_EQ(t.cols(), 2);
  EXPECT_EQ(row_ptr_of(t), (std::vector<offset_t>{0, 1, 2, 3}));
  EXPECT_EQ(cols_of(t), (std::vector<std::int64_t>{0, 1, 0}));
  EXPECT_EQ(vals_of(t), (std::vector<float>{1, 3, 2}));

  auto coo = csr_to_coo(res, on_backend(res, a).view());
  std::vector<std::int64_t> rows(coo.nnz());
  copy(rows.data(), memory_space::host, coo.row_idx(), coo.space(), rows.size(), coo.cuda());
  EXPECT_EQ(rows, (std::vector<std::int64_t>{0, 0, 1}));
}

TYPED_TEST(convert_test, canonicalize_sorts_merges_and_drops_zeros)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  auto a = make_csr<double, std::int32_t>(host_resources{}, 2, 5, std::vector<offset_t>{0, 4, 6},
                                          std::vector<std::int32_t>{4, 1, 4, 2, 3, 3},
                                          std::vector<double>{1, 2, -1, 0, 5, 6});
  auto kept = host_copy(canonicalize(res, on_backend(res, a).view()));
  EXPECT_EQ(row_ptr_of(kept), (std::vector<offset_t>{0, 3, 4}));
  EXPECT_EQ(cols_of(kept), (std::vector<std::int32_t>{1, 2, 4, 3}));
  EXPECT_EQ(vals_of(kept), (std::vector<double>{2, 0, 0, 11}));
  auto dropped = host_copy(canonicalize(res, on_backend(res, a).view(), {.drop_zeros = true}));
  EXPECT_EQ(row_ptr_of(dropped), (std::vector<offset_t>{0, 1, 2}));
  EXPECT_EQ(cols_of(dropped), (std::vector<std::int32_t>{1, 3}));
  EXPECT_EQ(vals_of(dropped), (std::vector<double>{2, 11}));
}

TYPED_TEST(convert_test, validation_names_the_problem)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  auto expect_message = [&](const csr_matrix<float, std::int32_t>& m, csr_check level,
                            const std::string& needle) {
    auto on = on_backend(res, m);
    try {
      validate(res, on.view(), level, "A");
      ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
    } catch (const invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const host_resources h{};
  auto out_of_range =
      make_csr<float, std::int32_t>(h, 2, 3, std::vector<offset_t>{0, 1, 2},
                                    std::vector<std::int32_t>{0, 0}, std::vector<float>{1, 1});
  out_of_range.col_idx()[1] = 7;
  expect_message(out_of_range, csr_check::valid, "column index 7 at row 1");
  auto unsorted =
      make_csr<float, std::int32_t>(h, 1, 3, std::vector<offset_t>{0, 2},
                                    std::vector<std::int32_t>{2, 1}, std::vector<float>{1, 1});
  EXPECT_NO_THROW(validate(res, on_backend(res, unsorted).view(), csr_check::valid, "A"));
  expect_message(unsorted, csr_check::canonical, "not canonical");
  auto non_monotone =
      make_csr<float, std::int32_t>(h, 2, 3, std::vector<offset_t>{0, 1, 2},
                                    std::vector<std::int32_t>{0, 1}, std::vector<float>{1, 1});
  non_monotone.row_ptr()[1] = 3;
  expect_message(non_monotone, csr_check::valid, "row");
}

/// A view whose extents or arrays are wrong is refused before its arrays are read, by name, the
/// same on both backends (CSR and COO).
TYPED_TEST(convert_test, views_with_wrong_extents_or_missing_arrays_are_refused)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const auto space =
      std::is_same_v<TypeParam, host_resources> ? memory_space::host : memory_space::device;
  const auto expect_message = [](const auto& call, const std::string& needle) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
    } catch (const invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  using csr = csr_view<float, std::int32_t>;
  using coo = coo_view<float, std::int32_t>;
  const offset_t ptr[3] = {0, 0, 0};
  expect_message(
      [&] { validate(res, csr{2, -3, 0, ptr, nullptr, nullptr, space}, csr_check::valid, "A"); },
      "A: negative extent (rows = 2, cols = -3, nnz = 0)");
  expect_message(
      [&] { validate(res, csr{2, 3, 0, nullptr, nullptr, nullptr, space}, csr_check::valid, "A"); },
      "A: row_ptr is null");
  expect_message(
      [&] { validate(res, csr{2, 3, 4, ptr, nullptr, nullptr, space}, csr_check::valid, "A"); },
      "A: col_idx or values is null with nnz = 4");
  expect_message([&] { validate(res, coo{-1, 3, 0, nullptr, nullptr, nullptr, space}, "B"); },
                 "B: negative extent (rows = -1, cols = 3, nnz = 0)");
  expect_message([&] { validate(res, coo{2, 3, 5, nullptr, nullptr, nullptr, space}, "B"); },
                 "B: row_idx, col_idx or values is null with nnz = 5");
  EXPECT_NO_THROW(validate(res, coo{2, 3, 0, nullptr, nullptr, nullptr, space}, "B"));
}

TYPED_TEST(convert_test, random_round_trips_agree_with_the_host)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  std::mt19937_64 rng(42);
  for (std::int64_t rows : {1, 7, 300}) {
    const std::int64_t cols = 2 * rows + 5;
    std::vector<std::tuple<std::int32_t, std::int32_t, float>> entries;
    std::map<std::pair<std::int32_t, std::int32_t>, double> dense;
    std::uniform_int_distribution<std::int32_t> r(0, std::int32_t(rows - 1));
    std::uniform_int_distribution<std::int32_t> c(0, std::int32_t(cols - 1));
    for (int k = 0; k < rows * 6; ++k) {
      // Small integers: sums are exact in float whatever the order.
      entries.emplace_back(r(rng), c(rng), float(int(rng() % 7) - 3));
      dense[{std::get<0>(entries.back()), std::get<1>(entries.back())}] +=
          std::get<2>(entries.back());
    }
    auto coo = make_coo<float, std::int32_t>(rows, cols, entries);
    auto ours = host_copy(coo_to_csr(res, coo_on(res, coo).view()));
    auto ref = coo_to_csr(host_resources{}, coo.view());
    EXPECT_EQ(row_ptr_of(ours), row_ptr_of(ref));
    EXPECT_EQ(cols_of(ours), cols_of(ref));
    EXPECT_EQ(vals_of(ours), vals_of(ref));
    EXPECT_NO_THROW(validate(host_resources{}, ours.view(), csr_check::canonical, "result"));
    ASSERT_EQ(std::size_t(ours.nnz()), dense.size());
    for (std::int64_t i = 0; i < rows; ++i) {
      for (offset_t k = ours.row_ptr()[i]; k < ours.row_ptr()[i + 1]; ++k) {
        EXPECT_EQ(ours.values()[k], (dense[{std::int32_t(i), ours.col_idx()[k]}]));
      }
    }
    // transpose twice is the identity on canonical input
    auto tt = host_copy(transpose(res, transpose(res, on_backend(res, ours).view()).view()));
    EXPECT_EQ(row_ptr_of(tt), row_ptr_of(ours));
    EXPECT_EQ(cols_of(tt), cols_of(ours));
    EXPECT_EQ(vals_of(tt), vals_of(ours));
  }
}

}  // namespace
}  // namespace spira::test
