// spira/graphblas_interop.hpp: to_graphblas and from_graphblas round trips (float and double,
// int32 and int64 indices), GraphBLAS matrices stored by column, built from unsorted tuples or of
// another type, and with_csr_view: the view over the matrix's own arrays gives GrB_mxm's product
// through spira::mxm, and the matrix is whole afterwards, also when the function throws.
#include "support/graphblas.hpp"

#include <semirings/graphblas.hpp>
#include <spira/graphblas_interop.hpp>
#include <spira/mxm.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace spira::test {
namespace {

const auto* const env = ::testing::AddGlobalTestEnvironment(new graphblas_env);

template <class T>
class interop : public ::testing::Test {};
TYPED_TEST_SUITE(interop, value_index_types);

TYPED_TEST(interop, round_trip_keeps_every_entry)
{
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const auto a = random_csr<V, I>({.rows = 70, .cols = 90, .signed_values = true, .seed = 111});
  GrB_Matrix m = to_graphblas(a.view());
  entry_list seen;
  grb_entries(m, GrB_FP64, &seen);  // the test's own reader
  EXPECT_EQ(seen, entries_of(a.view()));
  GrB_Type type = nullptr;
  ASSERT_EQ(GxB_Matrix_type(&type, m), GrB_SUCCESS);
  EXPECT_EQ(type, (std::is_same_v<V, float> ? GrB_FP32 : GrB_FP64));
  const auto back = from_graphblas<V, I>(host_resources{}, m);
  EXPECT_EQ(entries_of(back.view()), entries_of(a.view()));
  GrB_Matrix_free(&m);
}

TEST(interop, by_column_unsorted_and_other_types)
{
  // Tuples in no order, stored by column, INT32 values.
  const std::vector<GrB_Index> r{3, 0, 2, 0, 3, 1}, c{1, 4, 0, 0, 3, 2};
  const std::vector<std::int32_t> x{5, -1, 7, 2, 9, 4};
  GrB_Matrix m = nullptr;
  ASSERT_EQ(GrB_Matrix_new(&m, GrB_INT32, 4, 5), GrB_SUCCESS);
  ASSERT_EQ(GxB_Matrix_Option_set(m, GxB_FORMAT, GxB_BY_COL), GrB_SUCCESS);
  ASSERT_EQ(GrB_Matrix_build_INT32(m, r.data(), c.data(), x.data(), r.size(), GrB_PLUS_INT32),
            GrB_SUCCESS);
  const auto a = from_graphblas<double, std::int32_t>(host_resources{}, m);
  const entry_list want{{0, 0, 2}, {0, 4, -1}, {1, 2, 4}, {2, 0, 7}, {3, 1, 5}, {3, 3, 9}};
  EXPECT_EQ(entries_of(a.view()), want);
  // with_csr_view of a matrix of another type works on a typecast copy.
  with_csr_view<double>(m,
                        [&](csr_view<double, std::int64_t> v) { EXPECT_EQ(entries_of(v), want); });
  GrB_Matrix_free(&m);
}

TEST(interop, view_feeds_mxm_and_leaves_the_matrix_whole)
{
  const auto a = random_csr<double, std::int64_t>(
      {.rows = 60, .cols = 60, .mean_degree = 5, .small_integers = true, .seed = 112});
  GrB_Matrix m = to_graphblas(a.view());
  ASSERT_EQ(GxB_Matrix_Option_set(m, GxB_FORMAT, GxB_BY_COL), GrB_SUCCESS);  // stored otherwise
  GrB_Matrix want = nullptr;
  ASSERT_EQ(GrB_Matrix_new(&want, GrB_FP64, 60, 60), GrB_SUCCESS);
  ASSERT_EQ(GrB_mxm(want, nullptr, nullptr, GrB_PLUS_TIMES_SEMIRING_FP64, m, m, nullptr),
            GrB_SUCCESS);
  entry_list expected;
  grb_entries(want, GrB_FP64, &expected);
  with_csr_view<double>(m, [&](csr_view<double, std::int64_t> v) {
    EXPECT_EQ(entries_of(v), entries_of(a.view()));
    const auto c = mxm(host_resources{}, v, v, semirings::plus_times{});
    EXPECT_EQ(entries_of(c.view()), expected);
  });
  entry_list after;
  grb_entries(m, GrB_FP64, &after);
  EXPECT_EQ(after, entries_of(a.view()));
  EXPECT_THROW(with_csr_view<double>(
                   m, [](csr_view<double, std::int64_t>) { throw std::runtime_error("inside"); }),
               std::runtime_error);
  grb_entries(m, GrB_FP64, &after);
  EXPECT_EQ(after, entries_of(a.view()));
  GrB_Matrix_free(&want);
  GrB_Matrix_free(&m);
}

TEST(interop, view_of_an_iso_valued_matrix)
{
  // One stored value for every entry (GxB_Matrix_build_Scalar): the view repeats it.
  const std::vector<GrB_Index> r{0, 2, 2, 1}, c{1, 0, 2, 1};
  GrB_Scalar two = nullptr;
  ASSERT_EQ(GrB_Scalar_new(&two, GrB_FP32), GrB_SUCCESS);
  ASSERT_EQ(GrB_Scalar_setElement_FP32(two, 2.0f), GrB_SUCCESS);
  GrB_Matrix m = nullptr;
  ASSERT_EQ(GrB_Matrix_new(&m, GrB_FP32, 3, 3), GrB_SUCCESS);
  ASSERT_EQ(GxB_Matrix_build_Scalar(m, r.data(), c.data(), two, r.size()), GrB_SUCCESS);
  const entry_list want{{0, 1, 2}, {1, 1, 2}, {2, 0, 2}, {2, 2, 2}};
  with_csr_view<float>(m, [&](csr_view<float, std::int64_t> v) { EXPECT_EQ(entries_of(v), want); });
  entry_list after;
  grb_entries(m, GrB_FP64, &after);
  EXPECT_EQ(after, want);
  GrB_Scalar_free(&two);
  GrB_Matrix_free(&m);
}

}  // namespace
}  // namespace spira::test
