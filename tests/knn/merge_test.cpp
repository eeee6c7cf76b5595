// merge_knn on both backends.
//
// The key property (merge_of_blocks_equals_whole_index): an index cut into 2 to 4 disjoint row
// blocks, knn_graph of the same queries against each block (block-local indices shifted to global
// ones), and merge_knn of the parts give, bit for bit, knn_graph of the whole index - indices and
// distances. The whole-index knn_graph is the oracle; it shares no code with the merge but the
// order both promise. The data has ties (small integer values, bit-identical copies of rows, the
// index queried as separate queries so that copies sit at distance 0), empty rows, and k larger
// than some blocks (a block of one row). The parts and the oracle come from the host knn_graph,
// whose distances are deterministic: the CUDA backend documents that its distances may differ in
// the last bit between runs (atomic sums), which would make a bit-for-bit oracle flaky there, while
// merge_knn is what is under test. On CUDA the merge reads the parts from device memory (and once
// from host memory) and its result is compared after a copy back.
//
// Hand-checked cases: padding in and out (index -1, +inf or -inf), NaN after every number in both
// directions, -0 equal to +0, parts of different widths, the duplicate-index error and every
// bad-argument message. The CUDA half skips with a visible reason without a GPU.
#include "support/backend.hpp"
#include "support/oracle.hpp"

#include <spira/convert.hpp>
#include <spira/detail/knn_driver.hpp>
#include <spira/knn.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace spira::test {
namespace {

template <class Resources>
class merge_knn_test : public ::testing::Test {};
TYPED_TEST_SUITE(merge_knn_test, backends, backend_names);

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float nan = std::numeric_limits<float>::quiet_NaN();

/// A copy of a host dense matrix in `space` (allocated from `res` for device memory).
template <class T>
dense_matrix<T> copy_to(const cuda_resources& res, memory_space space, const dense_matrix<T>& a)
{
  dense_matrix<T> m = space == memory_space::host
                          ? dense_matrix<T>(host_resources{}, a.rows(), a.cols())
                          : dense_matrix<T>(res, a.rows(), a.cols());
  copy(m.data(), space, a.data(), memory_space::host, std::size_t(a.rows() * a.cols()), res);
  return m;
}

/// A host copy of a host or device dense matrix.
template <class T>
dense_matrix<T> host_copy(const dense_matrix<T>& a)
{
  dense_matrix<T> m(host_resources{}, a.rows(), a.cols());
  copy(m.data(), memory_space::host, a.data(), a.space(), std::size_t(a.rows() * a.cols()),
       a.cuda());
  return m;
}

/// The parts where the backend reads them (device memory on CUDA unless `host_parts`), merged by
/// the backend, the result back on the host. Checks that the result lies where it is promised.
template <class R>
knn_result merge_on(const R& res, const std::vector<knn_result>& parts, std::int64_t k,
                    select_order order, bool host_parts = false,
                    merge_check check = merge_check::rows)
{
  if constexpr (std::is_same_v<R, host_resources>) {
    return merge_knn(res, std::span<const knn_result>(parts), k, order, check);
  } else {
    const memory_space space = host_parts ? memory_space::host : memory_space::device;
    std::vector<knn_result> moved;
    for (const knn_result& p : parts) {
      moved.push_back({copy_to(res, space, p.indices), copy_to(res, space, p.distances)});
    }
    knn_result got = merge_knn(res, std::span<const knn_result>(moved), k, order, check);
    EXPECT_EQ(got.indices.space(), space);
    EXPECT_EQ(got.distances.space(), space);
    return {host_copy(got.indices), host_copy(got.distances)};
  }
}

/// A host part of `rows` x `cols` from row-major lists.
knn_result part(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& indices,
                const std::vector<float>& distances)
{
  knn_result p{dense_matrix<std::int64_t>(host_resources{}, rows, cols),
               dense_matrix<float>(host_resources{}, rows, cols)};
  EXPECT_EQ(indices.size(), std::size_t(rows * cols));
  EXPECT_EQ(distances.size(), std::size_t(rows * cols));
  std::copy(indices.begin(), indices.end(), p.indices.data());
  std::copy(distances.begin(), distances.end(), p.distances.data());
  return p;
}

/// Row r of a result: indices and distances (as bits, so that NaN and -0 compare exactly).
std::vector<std::int64_t> row_indices(const knn_result& g, std::int64_t r)
{
  return {g.indices.view().row(r), g.indices.view().row(r) + g.indices.cols()};
}
std::vector<std::uint32_t> row_bits(const knn_result& g, std::int64_t r)
{
  std::vector<std::uint32_t> b;
  for (std::int64_t j = 0; j < g.distances.cols(); ++j) {
    b.push_back(std::bit_cast<std::uint32_t>(g.distances.view()(r, j)));
  }
  return b;
}
std::vector<std::uint32_t> bits(const std::vector<float>& v)
{
  std::vector<std::uint32_t> b;
  for (float x : v) {
    b.push_back(std::bit_cast<std::uint32_t>(x));
  }
  return b;
}

/// Indices and distances of two results equal bit for bit.
void expect_same(const knn_result& got, const knn_result& want, const std::string& label)
{
  SCOPED_TRACE(label);
  ASSERT_EQ(got.indices.rows(), want.indices.rows());
  ASSERT_EQ(got.indices.cols(), want.indices.cols());
  ASSERT_EQ(got.distances.cols(), want.distances.cols());
  for (std::int64_t r = 0; r < want.indices.rows(); ++r) {
    ASSERT_EQ(row_indices(got, r), row_indices(want, r)) << "row " << r;
    ASSERT_EQ(row_bits(got, r), row_bits(want, r)) << "row " << r;
  }
}

/// The index: small integer values (equal distances are common), empty rows, and rows 40..59
/// bit-identical copies of rows 0..19 (ties at every distance, 0 among them).
csr_matrix<float, std::int32_t> index_with_copies()
{
  const auto base = random_csr<float, std::int32_t>(
      {.rows = 40, .cols = 30, .mean_degree = 5, .small_integers = true, .seed = 25});
  std::vector<offset_t> ptr{0};
  std::vector<std::int32_t> cols;
  std::vector<float> vals;
  for (std::int64_t i = 0; i < 60; ++i) {
    const std::int64_t s = i < 40 ? i : i - 40;
    for (offset_t e = base.row_ptr()[s]; e < base.row_ptr()[s + 1]; ++e) {
      cols.push_back(base.col_idx()[e]);
      vals.push_back(base.values()[e]);
    }
    ptr.push_back(offset_t(cols.size()));
  }
  return make_csr<float, std::int32_t>(host_resources{}, 60, base.cols(), ptr, cols, vals,
                                       csr_check::canonical);
}

TYPED_TEST(merge_knn_test, merge_of_blocks_equals_whole_index)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const host_resources host{};
  const auto index = index_with_copies();
  const std::int64_t n = index.rows();
  const auto other = random_csr<float, std::int32_t>(
      {.rows = 23, .cols = 30, .mean_degree = 4, .small_integers = true, .seed = 7});
  // Cut points: 2, 3 and 4 blocks, one of a single row (k exceeds it and the block of 7 rows).
  const std::vector<std::vector<std::int64_t>> cuts{{0, 30, n}, {0, 7, 45, n}, {0, 7, 30, 31, n}};
  for (const metric m : {metric::euclidean, metric::cosine, metric::inner_product}) {
    const select_order order = is_similarity(m) ? select_order::largest : select_order::smallest;
    for (const csr_matrix<float, std::int32_t>* queries : {&index, &other}) {
      for (const std::int64_t k : {std::int64_t{1}, std::int64_t{5}, std::int64_t{12}, n}) {
        const knn_params params{.k = k, .metric = m};
        // The index rows as separate queries: no self-first rule, plain ties by index.
        const knn_result whole = knn_graph(host, index.view(), queries->view(), params);
        for (const auto& cut : cuts) {
          const std::string label =
              std::string(to_string(m)) + (queries == &index ? ", queries = index" : "") +
              ", k = " + std::to_string(k) + ", " + std::to_string(cut.size() - 1) + " blocks";
          std::vector<knn_result> parts;
          std::vector<offset_t> ptr;
          for (std::size_t b = 0; b + 1 < cut.size(); ++b) {
            const auto block = row_slice(index.view(), cut[b], cut[b + 1], ptr);
            knn_params bp = params;
            bp.k = std::min(k, block.rows);
            knn_result p = knn_graph(host, block, queries->view(), bp);
            for (std::int64_t e = 0; e < p.indices.rows() * p.indices.cols(); ++e) {
              p.indices.data()[e] += cut[b];
            }
            parts.push_back(std::move(p));
          }
          expect_same(merge_on(res, parts, k, order), whole, label);
          // Well-formed parts merge the same without the row checks (merge_check::shapes).
          expect_same(merge_on(res, parts, k, order, false, merge_check::shapes), whole,
                      label + ", rows not checked");
          // The order of the parts does not matter.
          std::vector<knn_result> reversed;
          for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
            reversed.push_back({host_copy(it->indices), host_copy(it->distances)});
          }
          expect_same(merge_on(res, reversed, k, order), whole, label + ", parts reversed");
          // A tree of merges (as a distributed run does): pairs first, then their results, whose
          // rows may be padded when two blocks hold fewer than k rows.
          if (parts.size() == 4) {
            std::vector<knn_result> left;
            left.push_back(std::move(parts[0]));
            left.push_back(std::move(parts[1]));
            std::vector<knn_result> right;
            right.push_back(std::move(parts[2]));
            right.push_back(std::move(parts[3]));
            std::vector<knn_result> level;
            level.push_back(merge_on(res, left, k, order));
            level.push_back(merge_on(res, right, k, order));
            expect_same(merge_on(res, level, k, order), whole, label + ", tree");
          }
          if constexpr (std::is_same_v<TypeParam, cuda_resources>) {
            if (k == 5 && cut.size() == 3) {
              expect_same(merge_on(res, reversed, k, order, true), whole, label + ", host parts");
            }
          }
        }
      }
    }
  }
}

TYPED_TEST(merge_knn_test, pads_rows_with_fewer_than_k_candidates)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  // Two queries; part 0 has width 2, part 1 width 3, both with padding whose distance (0, NaN)
  // must be ignored. Row 0 has 3 real candidates, row 1 has none.
  std::vector<knn_result> parts;
  parts.push_back(part(2, 2, {4, -1, -1, -1}, {0.5f, 0.0f, nan, 0.0f}));
  parts.push_back(part(2, 3, {9, 2, -1, -1, -1, -1}, {0.25f, 0.5f, nan, 0.f, 0.f, 0.f}));
  const knn_result s = merge_on(res, parts, 5, select_order::smallest);
  EXPECT_EQ(row_indices(s, 0), (std::vector<std::int64_t>{9, 2, 4, -1, -1}));
  EXPECT_EQ(row_bits(s, 0), bits({0.25f, 0.5f, 0.5f, inf, inf}));
  EXPECT_EQ(row_indices(s, 1), (std::vector<std::int64_t>(5, -1)));
  EXPECT_EQ(row_bits(s, 1), bits(std::vector<float>(5, inf)));

  std::vector<knn_result> sim;
  sim.push_back(part(2, 2, {4, -1, -1, -1}, {0.5f, 9.0f, 9.0f, 9.0f}));
  sim.push_back(part(2, 3, {2, 9, -1, 3, -1, -1}, {0.5f, 0.25f, 9.f, -1.f, 9.f, 9.f}));
  const knn_result l = merge_on(res, sim, 4, select_order::largest);
  EXPECT_EQ(row_indices(l, 0), (std::vector<std::int64_t>{2, 4, 9, -1}));
  EXPECT_EQ(row_bits(l, 0), bits({0.5f, 0.5f, 0.25f, -inf}));
  EXPECT_EQ(row_indices(l, 1), (std::vector<std::int64_t>{3, -1, -1, -1}));
  EXPECT_EQ(row_bits(l, 1), bits({-1.f, -inf, -inf, -inf}));

  // k smaller than the candidates: the best k of parts of widths 3 and 2, nothing padded.
  std::vector<knn_result> wide;
  wide.push_back(part(1, 3, {5, 1, 7}, {1.0f, 2.0f, 3.0f}));
  wide.push_back(part(1, 2, {0, 4}, {1.5f, 2.0f}));
  const knn_result two = merge_on(res, wide, 2, select_order::smallest);
  EXPECT_EQ(row_indices(two, 0), (std::vector<std::int64_t>{5, 0}));
  EXPECT_EQ(row_bits(two, 0), bits({1.0f, 1.5f}));
}

TYPED_TEST(merge_knn_test, nan_last_and_signed_zeros_equal_in_both_directions)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  for (const select_order order : {select_order::smallest, select_order::largest}) {
    const bool largest = order == select_order::largest;
    SCOPED_TRACE(largest ? "largest" : "smallest");
    // Each part sorted by the order: numbers first (-0 and +0 equal: by index), NaNs last by index.
    std::vector<knn_result> parts;
    if (largest) {
      parts.push_back(part(1, 4, {3, 8, 5, 1}, {inf, 0.0f, -1.0f, nan}));
      parts.push_back(part(1, 4, {6, 2, 0, 7}, {-0.0f, -2.0f, nan, nan}));
    } else {
      parts.push_back(part(1, 4, {8, 5, 3, 1}, {0.0f, 1.0f, inf, nan}));
      parts.push_back(part(1, 4, {6, 2, 0, 7}, {-0.0f, 2.0f, nan, nan}));
    }
    const knn_result all = merge_on(res, parts, 9, order);
    if (largest) {
      EXPECT_EQ(row_indices(all, 0), (std::vector<std::int64_t>{3, 6, 8, 5, 2, 0, 1, 7, -1}));
      EXPECT_EQ(row_bits(all, 0), bits({inf, -0.0f, 0.0f, -1.0f, -2.0f, nan, nan, nan, -inf}));
    } else {
      EXPECT_EQ(row_indices(all, 0), (std::vector<std::int64_t>{6, 8, 5, 2, 3, 0, 1, 7, -1}));
      EXPECT_EQ(row_bits(all, 0), bits({-0.0f, 0.0f, 1.0f, 2.0f, inf, nan, nan, nan, inf}));
    }
    // k cuts inside the NaNs: the smaller indices among them.
    const knn_result six = merge_on(res, parts, 6, order);
    EXPECT_EQ(row_indices(six, 0).back(), 0);
  }
}

/// Runs f, expects ErrorT whose message contains every one of `parts`.
template <class ErrorT>
void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts)
{
  try {
    f();
    ADD_FAILURE() << "no exception; expected one naming " << parts.front();
  } catch (const ErrorT& e) {
    const std::string what = e.what();
    for (const std::string& p : parts) {
      EXPECT_NE(what.find(p), std::string::npos)
          << "message \"" << what << "\" lacks \"" << p << "\"";
    }
  }
}

TYPED_TEST(merge_knn_test, an_index_in_two_parts_is_an_error_naming_row_and_index)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  std::vector<knn_result> parts;
  parts.push_back(part(2, 2, {1, 2, 3, 4}, {0.f, 1.f, 0.f, 1.f}));
  parts.push_back(part(2, 2, {7, 8, 9, 10}, {0.f, 1.f, 0.f, 1.f}));
  // Index 5 in parts 0 and 2 of row 1 (at different distances: not adjacent in the merge).
  parts.push_back(part(2, 2, {11, 12, 5, 13}, {0.f, 1.f, 0.5f, 2.f}));
  parts[0].indices.data()[3] = 5;  // row 1: (3, 0), (5, 1)
  expect_error<invalid_argument>([&] { (void)merge_on(res, parts, 3, select_order::smallest); },
                                 {"row 1", "index 5", "parts 0 and 2", "disjoint"});
  // Twice within one part.
  std::vector<knn_result> one;
  one.push_back(part(1, 3, {4, 6, 4}, {0.f, 1.f, 2.f}));
  expect_error<invalid_argument>([&] { (void)merge_on(res, one, 2, select_order::smallest); },
                                 {"row 0", "index 4", "twice in part 0"});
  // Of several bad rows the message names the first, whatever the number of threads.
  std::vector<knn_result> many;
  std::vector<std::int64_t> ix(200);
  std::vector<float> d(200, 1.0f);
  for (std::int64_t r = 0; r < 100; ++r) {
    ix[std::size_t(2 * r)] = 2 * r;
    ix[std::size_t(2 * r + 1)] = r == 37 || r == 80 ? 2 * r : 2 * r + 1;
  }
  many.push_back(part(100, 2, ix, d));
  expect_error<invalid_argument>([&] { (void)merge_on(res, many, 2, select_order::smallest); },
                                 {"row 37 ", "index 74"});
}

TYPED_TEST(merge_knn_test, bad_arguments_name_the_part_and_the_value)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(TypeParam);
  TypeParam res{};
  const auto two = [] {
    std::vector<knn_result> p;
    p.push_back(part(2, 2, {0, 1, 0, 1}, {0.f, 1.f, 0.f, 1.f}));
    p.push_back(part(2, 2, {2, 3, 2, 3}, {0.f, 1.f, 0.f, 1.f}));
    return p;
  };
  const auto smallest = select_order::smallest;
  {
    auto p = two();
    expect_error<invalid_argument>([&] { (void)merge_on(res, p, 0, smallest); }, {"k = 0", ">= 1"});
    expect_error<invalid_argument>([&] { (void)merge_on(res, p, -3, smallest); }, {"k = -3"});
  }
  expect_error<invalid_argument>(
      [&] { (void)merge_on(res, std::vector<knn_result>{}, 2, smallest); }, {"no parts"});
  {
    auto p = two();
    p.push_back(part(3, 1, {4, 4, 4}, {0.f, 0.f, 0.f}));
    expect_error<dimension_mismatch>([&] { (void)merge_on(res, p, 2, smallest); },
                                     {"part 2", "3 rows", "part 0 has 2"});
  }
  {
    auto p = two();
    p[1].distances = dense_matrix<float>(host_resources{}, 2, 1);
    p[1].distances.data()[0] = p[1].distances.data()[1] = 0.f;
    expect_error<dimension_mismatch>([&] { (void)merge_on(res, p, 2, smallest); },
                                     {"part 1", "indices of 2 x 2", "distances of 2 x 1"});
  }
  {
    auto p = two();
    p[1].indices.data()[2] = -2;
    expect_error<invalid_argument>([&] { (void)merge_on(res, p, 2, smallest); },
                                   {"part 1, row 1, column 0", "index -2"});
  }
  {
    auto p = two();
    p[0].indices.data()[0] = -1;  // padding before index 1 in row 0
    expect_error<invalid_argument>([&] { (void)merge_on(res, p, 2, smallest); },
                                   {"part 0, row 0", "index 1 at column 1", "padding"});
  }
  {
    auto p = two();
    p[1].distances.data()[2] = 2.f;  // row 1 of part 1: (2, 2.0) before (3, 1.0)
    expect_error<invalid_argument>([&] { (void)merge_on(res, p, 2, smallest); },
                                   {"part 1, row 1", "not sorted", "index 2 at distance 2"});
    // The same row is sorted for the largest-first order.
    std::vector<knn_result> q;
    q.push_back(part(1, 2, {2, 3}, {2.f, 1.f}));
    const knn_result l = merge_on(res, q, 2, select_order::largest);
    EXPECT_EQ(row_indices(l, 0), (std::vector<std::int64_t>{2, 3}));
  }
  {
    auto p = two();
    p[0].distances.data()[1] = 0.f;  // a tie: index 0 before 1 is sorted
    (void)merge_on(res, p, 2, smallest);
    p[0].indices.data()[0] = 1;
    p[0].indices.data()[1] = 0;  // a tie with the larger index first is not
    expect_error<invalid_argument>([&] { (void)merge_on(res, p, 2, smallest); },
                                   {"part 0, row 0", "not sorted"});
  }
}

/// Random parts of n_q rows and the given widths: in each row every part lists a random number (0
/// to its width) of distinct indices, disjoint across the parts, sorted best first by the order,
/// then padding (index -1) whose distance varies (NaN, 0, a number) and must not be read.
/// Distances come from a few values so that ties are common, -0 and +0, infinities and NaN among
/// them.
std::vector<knn_result> random_parts(std::int64_t n_q, const std::vector<std::int64_t>& widths,
                                     bool largest, std::uint64_t seed)
{
  std::mt19937_64 rng(seed);
  const std::vector<float> values{0.0f, -0.0f, 1.0f, 1.0f, 2.0f, 0.5f, -1.0f, inf, -inf, nan, 3.0f};
  const std::vector<float> pad_values{nan, 0.0f, 7.0f, -inf};
  std::int64_t total = 0;
  for (const std::int64_t w : widths) {
    total += w;
  }
  std::vector<knn_result> parts;
  for (const std::int64_t w : widths) {
    parts.push_back({dense_matrix<std::int64_t>(host_resources{}, n_q, w),
                     dense_matrix<float>(host_resources{}, n_q, w)});
  }
  std::vector<std::int64_t> pool(std::size_t(3 * total + 1));
  for (std::int64_t r = 0; r < n_q; ++r) {
    std::iota(pool.begin(), pool.end(), std::int64_t{0});
    std::shuffle(pool.begin(), pool.end(), rng);
    std::size_t next = 0;  // the pool's next unused index: the parts stay disjoint
    for (std::size_t p = 0; p < widths.size(); ++p) {
      const std::int64_t w = widths[p];
      const std::int64_t real = w == 0 ? 0 : std::int64_t(rng() % std::uint64_t(w + 1));
      std::vector<std::pair<float, std::int64_t>> row;
      for (std::int64_t j = 0; j < real; ++j) {
        row.emplace_back(values[rng() % values.size()], pool[next++]);
      }
      std::sort(row.begin(), row.end(), [&](const auto& x, const auto& y) {
        return detail::knn_better(x.first, x.second, y.first, y.second, largest);
      });
      std::int64_t* ix = parts[p].indices.view().row(r);
      float* d = parts[p].distances.view().row(r);
      for (std::int64_t j = 0; j < w; ++j) {
        ix[j] = j < real ? row[std::size_t(j)].second : -1;
        d[j] = j < real ? row[std::size_t(j)].first : pad_values[rng() % pad_values.size()];
      }
    }
  }
  return parts;
}

TEST(merge_knn_cuda, device_parts_merge_bit_for_bit_as_on_the_host)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  const cuda_resources res{};
  const host_resources host{};
  // Widths: one part; an empty part between two; many narrow parts; mixed widths; wide parts.
  const std::vector<std::vector<std::int64_t>> shapes{
      {5}, {3, 0, 4}, {1, 1, 1, 1, 1, 1, 1}, {8, 2, 6, 1}, {40, 33}};
  std::uint64_t seed = 11;
  for (const bool largest : {false, true}) {
    const select_order order = largest ? select_order::largest : select_order::smallest;
    for (const auto& widths : shapes) {
      // More rows than a block of threads, so that several blocks merge.
      const std::int64_t n_q = 700;
      const std::vector<knn_result> parts = random_parts(n_q, widths, largest, seed++);
      std::int64_t total = 0;
      for (const std::int64_t w : widths) {
        total += w;
      }
      // k below, at and above the candidates a row can have (padding in the result).
      for (const std::int64_t k : {std::int64_t{1}, std::int64_t{3}, total, total + 5}) {
        const std::string label = std::string(largest ? "largest" : "smallest") + ", " +
                                  std::to_string(widths.size()) + " parts of " +
                                  std::to_string(total) + " columns, k = " + std::to_string(k);
        const knn_result want = merge_knn(host, std::span<const knn_result>(parts), k, order);
        expect_same(merge_on(res, parts, k, order), want, label);
      }
    }
  }
}

TEST(merge_knn_cuda, device_parts_with_a_leading_dimension_and_rows_without_candidates)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  const cuda_resources res{};
  const host_resources host{};
  for (const bool largest : {false, true}) {
    const select_order order = largest ? select_order::largest : select_order::smallest;
    std::vector<knn_result> parts = random_parts(300, {4, 7, 2}, largest, largest ? 3 : 4);
    // Rows 10..19 of every part hold padding only: those rows come back all padding.
    for (knn_result& p : parts) {
      for (std::int64_t r = 10; r < 20; ++r) {
        std::fill_n(p.indices.view().row(r), p.indices.cols(), std::int64_t{-1});
      }
    }
    // The parts in device matrices 3 columns wider than they are, read through views with that
    // leading dimension (the extra columns hold values the merge must not read).
    std::vector<dense_matrix<std::int64_t>> wide_i;
    std::vector<dense_matrix<float>> wide_d;
    std::vector<knn_result_view> views;
    for (const knn_result& p : parts) {
      const std::int64_t rows = p.indices.rows();
      const std::int64_t cols = p.indices.cols();
      const std::int64_t ld = cols + 3;
      dense_matrix<std::int64_t> hi(host, rows, ld);
      dense_matrix<float> hd(host, rows, ld);
      for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t j = 0; j < ld; ++j) {
          hi.view()(r, j) = j < cols ? p.indices.view()(r, j) : std::int64_t{5};
          hd.view()(r, j) = j < cols ? p.distances.view()(r, j) : -5.0f;
        }
      }
      wide_i.push_back(copy_to(res, memory_space::device, hi));
      wide_d.push_back(copy_to(res, memory_space::device, hd));
      views.push_back({{rows, cols, ld, wide_i.back().data(), memory_space::device},
                       {rows, cols, ld, wide_d.back().data(), memory_space::device}});
    }
    for (const std::int64_t k : {std::int64_t{2}, std::int64_t{13}, std::int64_t{20}}) {
      const knn_result want = merge_knn(host, std::span<const knn_result>(parts), k, order);
      const knn_result got = merge_knn(res, std::span<const knn_result_view>(views), k, order);
      ASSERT_EQ(got.indices.space(), memory_space::device);
      expect_same({host_copy(got.indices), host_copy(got.distances)}, want,
                  std::string(largest ? "largest" : "smallest") + ", k = " + std::to_string(k));
      for (std::int64_t r = 10; r < 20; ++r) {
        EXPECT_EQ(row_indices(want, r), std::vector<std::int64_t>(std::size_t(k), -1));
      }
    }
  }
}

TEST(merge_knn_cuda, device_check_names_the_first_bad_row_of_a_large_input)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  const cuda_resources res{};
  const host_resources host{};
  // Well-formed parts but for a few rows far apart, each bad in another way; the message names
  // the first of them, as the host's does. Both backends are asked the same.
  const auto bad_parts = [&](int kind) {
    std::vector<knn_result> parts = random_parts(5000, {6, 6}, false, 99);
    // Every row of part 1 gets at least two real entries, sorted, with fresh indices.
    for (std::int64_t r = 0; r < 5000; ++r) {
      std::int64_t* ix = parts[1].indices.view().row(r);
      float* d = parts[1].distances.view().row(r);
      ix[0] = 1000;
      ix[1] = 1001;
      d[0] = 1.0f;
      d[1] = 2.0f;
      for (std::int64_t j = 2; j < 6; ++j) {
        ix[j] = -1;
      }
    }
    const std::int64_t first = 3001;
    for (const std::int64_t r : {std::int64_t{4990}, first, std::int64_t{3500}}) {
      std::int64_t* ix = parts[1].indices.view().row(r);
      float* d = parts[1].distances.view().row(r);
      if (kind == 0) {
        ix[1] = parts[0].indices.view()(r, 0) >= 0 ? parts[0].indices.view()(r, 0) : 1000;
      } else if (kind == 1) {
        d[1] = 0.5f;  // not sorted
      } else if (kind == 2) {
        ix[0] = -7;  // below -1
      } else {
        ix[0] = -1;  // padding before a real entry
      }
    }
    return parts;
  };
  for (int kind = 0; kind < 4; ++kind) {
    SCOPED_TRACE("kind " + std::to_string(kind));
    const std::vector<knn_result> parts = bad_parts(kind);
    std::string host_message;
    try {
      (void)merge_knn(host, std::span<const knn_result>(parts), 4, select_order::smallest);
    } catch (const invalid_argument& e) {
      host_message = e.what();
    }
    ASSERT_NE(host_message.find("row 3001"), std::string::npos) << host_message;
    try {
      (void)merge_on(res, parts, 4, select_order::smallest);
      ADD_FAILURE() << "no exception on the device; expected " << host_message;
    } catch (const invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), host_message);
    }
  }
}

TEST(merge_knn, host_backend_rejects_device_parts_and_cuda_needs_a_cuda_build)
{
  const knn_result p = part(1, 1, {0}, {0.f});
  knn_result_view v = p.view();
  v.indices.space = memory_space::device;
  v.distances.space = memory_space::device;
  expect_error<invalid_argument>(
      [&] {
        (void)merge_knn(host_resources{}, std::span<const knn_result_view>(&v, 1), 1,
                        select_order::smallest);
      },
      {"device memory", "cuda_resources"});
  knn_result_view mixed = p.view();
  mixed.distances.space = memory_space::device;
  expect_error<invalid_argument>(
      [&] {
        (void)merge_knn(host_resources{}, std::span<const knn_result_view>(&mixed, 1), 1,
                        select_order::smallest);
      },
      {"part 0", "indices in host memory and distances in device memory"});
  if (!cuda_compiled()) {
    const knn_result_view h = p.view();
    EXPECT_THROW((void)merge_knn(cuda_resources{}, std::span<const knn_result_view>(&h, 1), 1,
                                 select_order::smallest),
                 not_compiled);
  }
}

}  // namespace
}  // namespace spira::test
