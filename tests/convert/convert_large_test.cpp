// Conversions at scale on both backends: random matrices with more than 2^16 rows and ~1e6
// entries, non-integer values (so the order of additions shows in the bits), duplicates, exact
// cancellations and 64-bit indices. Each backend is compared byte for byte with a naive reference
// that sorts (row, column, position) triples with std::sort and sums every run left to right.
#include "support/backend.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

namespace spira::test {
namespace {

template <class V, class I>
struct triplets {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<I> row;
  std::vector<I> col;
  std::vector<V> val;
};

template <class V, class I>
struct csr_arrays {
  std::vector<offset_t> row_ptr;
  std::vector<I> col_idx;
  std::vector<V> values;
};

/// Random entries: rows drawn with a skew (a few heavy rows), columns spread over [0, cols) but
/// clustered within a row so that duplicates are frequent, values in (-1, 1). A share of the
/// duplicates cancel exactly, and some values are exact zeros.
template <class V, class I>
triplets<V, I> random_triplets(std::int64_t rows, std::int64_t cols, std::int64_t n,
                               std::uint64_t seed)
{
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<std::int64_t> any_row(0, rows - 1);
  std::uniform_int_distribution<std::int64_t> heavy_row(0, std::min<std::int64_t>(rows - 1, 15));
  std::uniform_int_distribution<std::int64_t> any_col(0, cols - 1);
  std::uniform_int_distribution<int> percent(0, 99);
  triplets<V, I> t{rows, cols, {}, {}, {}};
  t.row.reserve(n);
  t.col.reserve(n);
  t.val.reserve(n);
  while (std::int64_t(t.val.size()) < n) {
    const std::int64_t r = percent(rng) < 5 ? heavy_row(rng) : any_row(rng);
    // Columns near a per-row anchor collide often; others are spread over the whole range.
    const std::int64_t anchor = (r * 7919) % cols;
    const std::int64_t c = percent(rng) < 50 ? (anchor + percent(rng) % 8) % cols : any_col(rng);
    const V v = percent(rng) < 3 ? V(0) : V(unit(rng));
    t.row.push_back(I(r));
    t.col.push_back(I(c));
    t.val.push_back(v);
    if (percent(rng) < 4 && std::int64_t(t.val.size()) < n) {  // an exact cancellation
      t.row.push_back(I(r));
      t.col.push_back(I(c));
      t.val.push_back(-v);
    }
  }
  // Shuffle so that runs of equal (row, column) are scattered through the input.
  std::vector<std::size_t> p(t.val.size());
  std::iota(p.begin(), p.end(), std::size_t{0});
  std::shuffle(p.begin(), p.end(), rng);
  triplets<V, I> s{rows, cols, {}, {}, {}};
  for (std::size_t k : p) {
    s.row.push_back(t.row[k]);
    s.col.push_back(t.col[k]);
    s.val.push_back(t.val[k]);
  }
  return s;
}

/// The reference: (row, column, position) order, runs summed left to right, zeros dropped on
/// request. `row_of(k)` gives the row of entry k.
template <class V, class I, class RowOf>
csr_arrays<V, I> reference_merge(std::int64_t rows, const std::vector<I>& col,
                                 const std::vector<V>& val, RowOf row_of, bool drop_zeros)
{
  const std::int64_t n = std::int64_t(val.size());
  std::vector<std::int64_t> idx(n);
  std::iota(idx.begin(), idx.end(), std::int64_t{0});
  std::sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) {
    return std::make_tuple(row_of(a), col[a], a) < std::make_tuple(row_of(b), col[b], b);
  });
  csr_arrays<V, I> out;
  out.row_ptr.assign(rows + 1, 0);
  for (std::int64_t k = 0; k < n;) {
    const std::int64_t r = row_of(idx[k]);
    const I c = col[idx[k]];
    V sum = val[idx[k]];
    std::int64_t j = k + 1;
    for (; j < n && row_of(idx[j]) == r && col[idx[j]] == c; ++j) {
      sum += val[idx[j]];
    }
    if (!(drop_zeros && sum == V(0))) {
      out.col_idx.push_back(c);
      out.values.push_back(sum);
      ++out.row_ptr[r + 1];
    }
    k = j;
  }
  std::partial_sum(out.row_ptr.begin(), out.row_ptr.end(), out.row_ptr.begin());
  return out;
}

template <class V, class I>
csr_arrays<V, I> arrays_of(const csr_matrix<V, I>& m)
{
  auto h = host_copy(m);
  return {{h.row_ptr(), h.row_ptr() + h.rows() + 1},
          {h.col_idx(), h.col_idx() + h.nnz()},
          {h.values(), h.values() + h.nnz()}};
}

/// Bitwise equality, so that -0.0 vs 0.0 or a different rounding cannot hide.
template <class T>
::testing::AssertionResult same_bytes(const std::vector<T>& got, const std::vector<T>& want)
{
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << got.size() << " vs " << want.size();
  }
  for (std::size_t k = 0; k < got.size(); ++k) {
    if (std::memcmp(&got[k], &want[k], sizeof(T)) != 0) {
      return ::testing::AssertionFailure()
             << "first difference at " << k << ": " << got[k] << " vs " << want[k];
    }
  }
  return ::testing::AssertionSuccess();
}

template <class V, class I>
void expect_same(const csr_arrays<V, I>& got, const csr_arrays<V, I>& want)
{
  EXPECT_TRUE(same_bytes(got.row_ptr, want.row_ptr)) << "row_ptr";
  EXPECT_TRUE(same_bytes(got.col_idx, want.col_idx)) << "col_idx";
  EXPECT_TRUE(same_bytes(got.values, want.values)) << "values";
}

template <class V, class I>
coo_matrix<V, I> coo_in(const host_resources&, const triplets<V, I>& t)
{
  coo_matrix<V, I> m(host_resources{}, t.rows, t.cols, std::int64_t(t.val.size()));
  std::copy(t.row.begin(), t.row.end(), m.row_idx());
  std::copy(t.col.begin(), t.col.end(), m.col_idx());
  std::copy(t.val.begin(), t.val.end(), m.values());
  return m;
}
template <class V, class I>
coo_matrix<V, I> coo_in(const cuda_resources& res, const triplets<V, I>& t)
{
  coo_matrix<V, I> m(res, t.rows, t.cols, std::int64_t(t.val.size()));
  copy(m.row_idx(), m.space(), t.row.data(), memory_space::host, t.row.size(), res);
  copy(m.col_idx(), m.space(), t.col.data(), memory_space::host, t.col.size(), res);
  copy(m.values(), m.space(), t.val.data(), memory_space::host, t.val.size(), res);
  return m;
}

/// A valid, non-canonical host CSR of the triplets: rows grouped in input order, columns unsorted
/// and duplicated within rows.
template <class V, class I>
csr_matrix<V, I> unsorted_csr(const triplets<V, I>& t)
{
  const std::int64_t n = std::int64_t(t.val.size());
  csr_matrix<V, I> m(host_resources{}, t.rows, t.cols, n);
  std::vector<offset_t> next(t.rows + 1, 0);
  for (I r : t.row) {
    ++next[r + 1];
  }
  std::partial_sum(next.begin(), next.end(), next.begin());
  std::copy(next.begin(), next.end(), m.row_ptr());
  for (std::int64_t k = 0; k < n; ++k) {
    const offset_t dst = next[t.row[k]]++;
    m.col_idx()[dst] = t.col[k];
    m.values()[dst] = t.val[k];
  }
  return m;
}

template <class V, class I, class Resources>
void check_coo_to_csr(const Resources& res, std::int64_t rows, std::int64_t cols, std::int64_t n,
                      std::uint64_t seed)
{
  const auto t = random_triplets<V, I>(rows, cols, n, seed);
  const auto want = reference_merge<V, I>(
      rows, t.col, t.val, [&](std::int64_t k) { return std::int64_t(t.row[k]); }, false);
  ASSERT_LT(want.values.size(), t.val.size()) << "the input should hold duplicates";
  const auto got = arrays_of(coo_to_csr(res, coo_in(res, t).view()));
  expect_same(got, want);
}

template <class Resources>
class convert_large_test : public ::testing::Test {};
TYPED_TEST_SUITE(convert_large_test, backends, backend_names);

TYPED_TEST(convert_large_test, coo_to_csr_int32_over_65536_rows)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  check_coo_to_csr<float, std::int32_t>(TypeParam{}, 70001, 90000, 1'000'000, 1);
}

TYPED_TEST(convert_large_test, coo_to_csr_int64_wide_columns)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  // 17 row bits + 41 column bits: one packed 64-bit sort key.
  check_coo_to_csr<double, std::int64_t>(TypeParam{}, 70001, std::int64_t{1} << 41, 1'000'000, 2);
}

TYPED_TEST(convert_large_test, coo_to_csr_keys_beyond_64_bits)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  // 17 row bits + 62 column bits do not pack into 64: the two-pass sort.
  check_coo_to_csr<float, std::int64_t>(TypeParam{}, 70001, std::int64_t{1} << 62, 300'000, 3);
}

TYPED_TEST(convert_large_test, coo_to_csr_sorted_input)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  // Input already in (row, column) order, with duplicates: the result must not depend on sorting.
  auto t = random_triplets<double, std::int32_t>(100'000, 1000, 400'000, 4);
  std::vector<std::size_t> p(t.val.size());
  std::iota(p.begin(), p.end(), std::size_t{0});
  std::stable_sort(p.begin(), p.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(t.row[a], t.col[a]) < std::tie(t.row[b], t.col[b]);
  });
  triplets<double, std::int32_t> s{t.rows, t.cols, {}, {}, {}};
  for (std::size_t k : p) {
    s.row.push_back(t.row[k]);
    s.col.push_back(t.col[k]);
    s.val.push_back(t.val[k]);
  }
  const auto want = reference_merge<double, std::int32_t>(
      s.rows, s.col, s.val, [&](std::int64_t k) { return std::int64_t(s.row[k]); }, false);
  expect_same(arrays_of(coo_to_csr(res, coo_in(res, s).view())), want);
}

TYPED_TEST(convert_large_test, canonicalize_keeps_or_drops_zeros)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const auto t = random_triplets<float, std::int64_t>(80'000, 50'000, 1'000'000, 5);
  const auto a = unsorted_csr(t);
  const std::vector<offset_t> rp(a.row_ptr(), a.row_ptr() + a.rows() + 1);
  const std::vector<std::int64_t> col(a.col_idx(), a.col_idx() + a.nnz());
  const std::vector<float> val(a.values(), a.values() + a.nnz());
  std::vector<std::int64_t> row_of_entry(a.nnz());
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    std::fill(row_of_entry.begin() + rp[i], row_of_entry.begin() + rp[i + 1], i);
  }
  const auto row_of = [&](std::int64_t k) { return row_of_entry[k]; };
  const auto on = on_backend(res, a);
  for (bool drop : {false, true}) {
    SCOPED_TRACE(drop ? "drop_zeros" : "keep zeros");
    const auto want = reference_merge<float, std::int64_t>(a.rows(), col, val, row_of, drop);
    const auto got = arrays_of(canonicalize(res, on.view(), {.drop_zeros = drop}));
    expect_same(got, want);
  }
  // Canonical input comes back unchanged.
  const auto canonical = canonicalize(res, on.view());
  expect_same(arrays_of(canonicalize(res, canonical.view())), arrays_of(canonical));
}

TYPED_TEST(convert_large_test, transpose_is_stable_on_unsorted_input)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const auto t = random_triplets<double, std::int32_t>(70'001, 100'003, 1'000'000, 6);
  const auto a = unsorted_csr(t);
  // Reference: entries by (column, position); each becomes (column -> row, row -> column).
  const std::int64_t n = a.nnz();
  std::vector<std::int64_t> row_of_entry(n);
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    std::fill(row_of_entry.begin() + a.row_ptr()[i], row_of_entry.begin() + a.row_ptr()[i + 1], i);
  }
  std::vector<std::int64_t> idx(n);
  std::iota(idx.begin(), idx.end(), std::int64_t{0});
  std::sort(idx.begin(), idx.end(), [&](std::int64_t x, std::int64_t y) {
    return std::make_tuple(a.col_idx()[x], x) < std::make_tuple(a.col_idx()[y], y);
  });
  csr_arrays<double, std::int32_t> want;
  want.row_ptr.assign(a.cols() + 1, 0);
  for (std::int64_t k : idx) {
    want.col_idx.push_back(std::int32_t(row_of_entry[k]));
    want.values.push_back(a.values()[k]);
    ++want.row_ptr[a.col_idx()[k] + 1];
  }
  std::partial_sum(want.row_ptr.begin(), want.row_ptr.end(), want.row_ptr.begin());
  const auto tr = transpose(res, on_backend(res, a).view());
  EXPECT_EQ(tr.rows(), a.cols());
  EXPECT_EQ(tr.cols(), a.rows());
  expect_same(arrays_of(tr), want);
}

TYPED_TEST(convert_large_test, csr_to_coo_expands_rows_with_empty_ones)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  // Far more rows than entries: most rows are empty.
  const auto t = random_triplets<float, std::int64_t>(3'000'000, 1000, 500'000, 7);
  const auto a = unsorted_csr(t);
  const auto coo = csr_to_coo(res, on_backend(res, a).view());
  ASSERT_EQ(coo.nnz(), a.nnz());
  std::vector<std::int64_t> rows(coo.nnz());
  std::vector<std::int64_t> cols(coo.nnz());
  std::vector<float> vals(coo.nnz());
  copy(rows.data(), memory_space::host, coo.row_idx(), coo.space(), rows.size(), coo.cuda());
  copy(cols.data(), memory_space::host, coo.col_idx(), coo.space(), cols.size(), coo.cuda());
  copy(vals.data(), memory_space::host, coo.values(), coo.space(), vals.size(), coo.cuda());
  std::vector<std::int64_t> want_rows(a.nnz());
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    std::fill(want_rows.begin() + a.row_ptr()[i], want_rows.begin() + a.row_ptr()[i + 1], i);
  }
  EXPECT_TRUE(same_bytes(rows, want_rows));
  EXPECT_TRUE(same_bytes(cols, std::vector<std::int64_t>(a.col_idx(), a.col_idx() + a.nnz())));
  EXPECT_TRUE(same_bytes(vals, std::vector<float>(a.values(), a.values() + a.nnz())));
}

/// A host CSR holding exactly these arrays, valid or not.
csr_matrix<float, std::int32_t> raw_csr(std::int64_t rows, std::int64_t cols,
                                        std::vector<offset_t> row_ptr,
                                        std::vector<std::int32_t> col_idx)
{
  csr_matrix<float, std::int32_t> m(host_resources{}, rows, cols, std::int64_t(col_idx.size()));
  std::copy(row_ptr.begin(), row_ptr.end(), m.row_ptr());
  std::copy(col_idx.begin(), col_idx.end(), m.col_idx());
  std::fill_n(m.values(), m.nnz(), 1.0f);
  return m;
}

template <class Check>
void expect_message(Check check, const std::string& expected)
{
  try {
    check();
    ADD_FAILURE() << "no error; expected: " << expected;
  } catch (const invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), expected);
  }
}

TYPED_TEST(convert_large_test, validation_messages_are_the_hosts)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const auto csr_case = [&](csr_matrix<float, std::int32_t> m, csr_check level,
                            const std::string& expected) {
    const auto on = on_backend(res, m);
    expect_message([&] { validate(res, on.view(), level, "A"); }, expected);
  };
  csr_case(raw_csr(3, 4, {1, 1, 2, 2}, {0, 1}), csr_check::valid, "A: row_ptr[0] must be 0, got 1");
  csr_case(raw_csr(3, 4, {0, 1, 2, 3}, {0, 1}), csr_check::valid,
           "A: row_ptr[3] = 3 differs from nnz = 2");
  csr_case(raw_csr(3, 4, {0, 2, 1, 2}, {0, 1}), csr_check::valid,
           "A: row pointers decrease at row 1 (row_ptr[1] = 2 > row_ptr[2] = 1)");
  csr_case(raw_csr(3, 4, {0, 1, 2, 3}, {0, -1, 9}), csr_check::valid,
           "A: column index -1 at row 1 (entry 1) is outside [0, 4)");
  csr_case(raw_csr(3, 4, {0, 0, 3, 3}, {1, 3, 3}), csr_check::canonical,
           "A: row 1 is not canonical: column 3 follows column 3 (unsorted or duplicate; see "
           "spira::canonicalize)");

  const auto coo_case = [&](std::vector<std::int64_t> r, std::vector<std::int64_t> c,
                            const std::string& expected) {
    triplets<double, std::int64_t> t{2, 3, r, c, std::vector<double>(r.size(), 1.0)};
    const auto on = coo_in(res, t);
    expect_message([&] { validate(res, on.view(), "A"); }, expected);
  };
  coo_case({0, 1, 2, 0}, {0, 2, 0, 5}, "A: row index 2 of entry 2 is outside [0, 2)");
  coo_case({0, 1, 1}, {0, 3, -1}, "A: column index 3 of entry 1 is outside [0, 3)");
}

TYPED_TEST(convert_large_test, validation_reports_the_smallest_bad_row)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const auto t = random_triplets<float, std::int32_t>(200'000, 5000, 1'000'000, 8);
  auto a = canonicalize(host_resources{}, unsorted_csr(t).view());
  // Break two rows far apart; the message must name the smaller one whatever the thread timing.
  const std::int64_t late = 190'000;
  const std::int64_t early = 70'000;
  ASSERT_GT(a.row_ptr()[early + 1] - a.row_ptr()[early], 1);
  ASSERT_GT(a.row_ptr()[late + 1] - a.row_ptr()[late], 0);
  a.col_idx()[a.row_ptr()[late]] = 5000;
  std::swap(a.col_idx()[a.row_ptr()[early]], a.col_idx()[a.row_ptr()[early] + 1]);
  const std::string range_msg = "A: column index 5000 at row 190000 (entry " +
                                std::to_string(a.row_ptr()[late]) + ") is outside [0, 5000)";
  const offset_t p = a.row_ptr()[early];
  const std::string order_msg = "A: row 70000 is not canonical: column " +
                                std::to_string(a.col_idx()[p + 1]) + " follows column " +
                                std::to_string(a.col_idx()[p]) +
                                " (unsorted or duplicate; see spira::canonicalize)";
  const auto on = on_backend(res, a);
  // 'valid' ignores the order, so only the late row counts; 'canonical' sees the earlier one.
  for (auto [level, expected] :
       {std::pair{csr_check::valid, range_msg}, std::pair{csr_check::canonical, order_msg}}) {
    try {
      validate(res, on.view(), level, "A");
      ADD_FAILURE() << "no error for " << expected;
    } catch (const invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), expected);
    }
  }
}

}  // namespace
}  // namespace spira::test
