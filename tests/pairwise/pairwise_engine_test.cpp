// The pairwise engine on both backends: every built-in metric with every strategy the backend
// offers, against the naive float64 oracle (tests/support/oracle.hpp) and, for CUDA, against the
// host engine on the same inputs. Shapes cover what the CUDA kernels treat specially: rows longer
// than the hybrid kernel's hash table, empty rows and an empty operand, a dimension above 2^20,
// power-law degrees, A and B of different shapes, int64 indices, a padded output and a declared
// dimension of 2^31 or 2^62 columns of which a few are used.
// The CUDA half skips with a visible reason when this build or this machine has no GPU.
#include "support/backend.hpp"
#include "support/oracle.hpp"
#include "support/pairwise_check.hpp"
#include "support/wide_columns.hpp"

#include <spira/distance.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace spira::test {
namespace {

template <class R>
std::vector<pairwise_strategy> strategies_of()
{
  if constexpr (std::is_same_v<R, cuda_resources>) {
    return {pairwise_strategy::automatic, pairwise_strategy::intersection,
            pairwise_strategy::hybrid, pairwise_strategy::dense};
  } else {
    return {pairwise_strategy::automatic};  // the host engine has no strategies
  }
}

std::vector<double> exponents_of(metric m)
{
  return m == metric::minkowski ? std::vector<double>{1.0, 1.5, 3.0} : std::vector<double>{2.0};
}

/// Every metric x strategy on (a, b) against the oracle, and for CUDA against the host engine.
template <class R, class V, class I>
void check_all(const R& res, const csr_matrix<V, I>& a, const csr_matrix<V, I>& b,
               const std::string& label, bool signed_values,
               const std::vector<pairwise_strategy>& strategies)
{
  const auto da = densify(a), db = densify(b);
  for (const metric m : all_metrics()) {
    if (signed_values && requires_nonnegative(m)) {
      continue;
    }
    for (const double p : exponents_of(m)) {
      const matrix want = oracle::pairwise(m, da, db, p);
      matrix host;
      if constexpr (std::is_same_v<R, cuda_resources>) {
        host = run_on(host_resources{}, m, a, b, p, pairwise_strategy::automatic);
      }
      for (const pairwise_strategy s : strategies) {
        if (!supports_strategy(m, s)) {
          continue;
        }
        const std::string what =
            label + " " + to_string(m) + " p=" + std::to_string(p) + " " + to_string(s);
        const matrix got = run_on(res, m, a, b, p, s);
        expect_near<V>(got, want, what + " vs oracle", m, p);
        if constexpr (std::is_same_v<R, cuda_resources>) {
          expect_near<V>(got, host, what + " vs host engine", m, p);
        }
      }
    }
  }
}

/// A canonical CSR with the given rows: each row a list of (column, value).
template <class V, class I>
csr_matrix<V, I> from_rows(std::int64_t cols,
                           const std::vector<std::vector<std::pair<std::int64_t, double>>>& rows)
{
  std::vector<offset_t> rp{0};
  std::vector<I> ci;
  std::vector<V> va;
  for (const auto& r : rows) {
    for (const auto& [c, v] : r) {
      ci.push_back(I(c));
      va.push_back(V(v));
    }
    rp.push_back(offset_t(ci.size()));
  }
  return make_csr<V, I>(host_resources{}, std::int64_t(rows.size()), cols, rp, ci, va,
                        csr_check::canonical);
}

/// Rows of the given degrees over `cols` columns: distinct sorted random columns, values in (0, 2]
/// (or small integers, so that equal values occur).
template <class V, class I>
csr_matrix<V, I> rows_of_degrees(std::int64_t cols, const std::vector<std::int64_t>& degrees,
                                 std::uint32_t seed, bool small_integers = false)
{
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> col(0, cols - 1);
  std::uniform_real_distribution<double> val(0.0, 1.0);
  std::vector<std::vector<std::pair<std::int64_t, double>>> rows;
  for (const std::int64_t deg : degrees) {
    std::set<std::int64_t> cs;
    while (std::int64_t(cs.size()) < deg) {
      cs.insert(col(rng));
    }
    std::vector<std::pair<std::int64_t, double>> r;
    for (const std::int64_t c : cs) {
      r.emplace_back(
          c, small_integers ? double(1 + std::int64_t(val(rng) * 3) % 3) : 2.0 * (1.0 - val(rng)));
    }
    rows.push_back(std::move(r));
  }
  return from_rows<V, I>(cols, rows);
}

template <class P>
class pairwise_engine : public ::testing::Test {};

using engine_types = ::testing::Types<std::tuple<host_resources, float, std::int32_t>,
                                      std::tuple<host_resources, double, std::int64_t>,
                                      std::tuple<cuda_resources, float, std::int32_t>,
                                      std::tuple<cuda_resources, float, std::int64_t>,
                                      std::tuple<cuda_resources, double, std::int32_t>,
                                      std::tuple<cuda_resources, double, std::int64_t>>;

struct engine_names {
  template <class P>
  static std::string GetName(int)
  {
    using R = std::tuple_element_t<0, P>;
    using V = std::tuple_element_t<1, P>;
    using I = std::tuple_element_t<2, P>;
    return std::string(std::is_same_v<R, host_resources> ? "host" : "cuda") + "_" +
           (std::is_same_v<V, float> ? "float" : "double") + "_" +
           (std::is_same_v<I, std::int32_t> ? "int32" : "int64");
  }
};
TYPED_TEST_SUITE(pairwise_engine, engine_types, engine_names);

#define SPIRA_ENGINE_TYPES                      \
  using R = std::tuple_element_t<0, TypeParam>; \
  using V = std::tuple_element_t<1, TypeParam>; \
  using I = std::tuple_element_t<2, TypeParam>; \
  SPIRA_SKIP_UNLESS_AVAILABLE(R);               \
  const R res {}

// Power-law row degrees, empty rows and columns, A (37 x 61) and B (23 x 61) of different shapes;
// positive, signed and small-integer values.
TYPED_TEST(pairwise_engine, every_metric_and_strategy_matches_the_oracle_on_random_matrices)
{
  SPIRA_ENGINE_TYPES;
  for (const int variant : {0, 1, 2}) {
    random_options oa{.rows = 37, .cols = 61, .mean_degree = 7, .seed = 21u + variant};
    random_options ob{.rows = 23, .cols = 61, .mean_degree = 5, .seed = 71u + variant};
    oa.signed_values = ob.signed_values = variant == 1;
    oa.small_integers = ob.small_integers = variant == 2;
    const auto a = random_csr<V, I>(oa);
    const auto b = random_csr<V, I>(ob);
    check_all(res, a, b, "variant " + std::to_string(variant), variant == 1, strategies_of<R>());
  }
}

// A against itself: the self-distance diagonal and the symmetric entries of every strategy.
TYPED_TEST(pairwise_engine, a_against_itself)
{
  SPIRA_ENGINE_TYPES;
  const auto a = random_csr<V, I>({.rows = 40, .cols = 50, .mean_degree = 8, .seed = 3});
  check_all(res, a, a, "self", false, strategies_of<R>());
}

// Rows far longer than the hybrid kernel's shared-memory hash table (about 1-2K entries), so they
// are split into several column ranges, in a dimension too large for the dense layout; plus short
// and empty rows.
TYPED_TEST(pairwise_engine, rows_longer_than_the_hash_table)
{
  SPIRA_ENGINE_TYPES;
  const std::int64_t cols = 40000;
  const auto a = rows_of_degrees<V, I>(cols, {5000, 0, 3, 2500, 700, 1}, 9);
  const auto b = rows_of_degrees<V, I>(cols, {0, 4100, 12, 1900, 2}, 10);
  check_all(res, a, b, "long rows", false, strategies_of<R>());
}

// A dimension above 2^20 (sparse rows; the hash layout with 20+-bit column keys).
TYPED_TEST(pairwise_engine, dimension_above_two_to_the_twenty)
{
  SPIRA_ENGINE_TYPES;
  const std::int64_t cols = (std::int64_t(1) << 20) + 77;
  // Shared columns so that intersections are not empty: the same seed gives the same columns.
  const auto a = rows_of_degrees<V, I>(cols, {30, 0, 300, 7, 1}, 5, true);
  const auto b = rows_of_degrees<V, I>(cols, {30, 300, 2, 0}, 5, true);
  std::vector<pairwise_strategy> strategies = strategies_of<R>();
  // Densified tiles of 2^20 columns are legal but slow to test; the dense path is covered above.
  std::erase(strategies, pairwise_strategy::dense);
  check_all(res, a, b, "dim > 2^20", false, strategies);
}

// An operand without any stored entry (every row empty) against an ordinary one, both ways.
TYPED_TEST(pairwise_engine, an_empty_operand)
{
  SPIRA_ENGINE_TYPES;
  const auto empty = from_rows<V, I>(20, {{}, {}, {}});
  const auto b = rows_of_degrees<V, I>(20, {4, 0, 20, 1}, 2);
  check_all(res, empty, b, "empty A", false, strategies_of<R>());
  check_all(res, b, empty, "empty B", false, strategies_of<R>());
}

// Explicitly stored zeros and a constant row follow the documented rules on every backend.
TYPED_TEST(pairwise_engine, explicit_zeros_and_constant_rows)
{
  SPIRA_ENGINE_TYPES;
  const auto a = from_rows<V, I>(3, {{{0, 2}, {1, 2}, {2, 2}}, {{0, 0}, {2, 0}}, {{0, 1}, {1, 3}}});
  check_all(res, a, a, "explicit zeros", false, strategies_of<R>());
}

// An output with a leading dimension larger than its width: the padding is never written.
TYPED_TEST(pairwise_engine, padded_output_keeps_its_padding)
{
  SPIRA_ENGINE_TYPES;
  const auto a = random_csr<V, I>({.rows = 9, .cols = 30, .mean_degree = 5, .seed = 12});
  const auto b = random_csr<V, I>({.rows = 7, .cols = 30, .mean_degree = 5, .seed = 13});
  const auto da = densify(a), db = densify(b);
  for (const metric m : {metric::cosine, metric::manhattan, metric::chebyshev, metric::jaccard}) {
    for (const pairwise_strategy s : strategies_of<R>()) {
      if (!supports_strategy(m, s)) {
        continue;
      }
      expect_near<V>(run_on(res, m, a, b, 2.0, s, 5), oracle::pairwise(m, da, db),
                     std::string(to_string(m)) + " " + to_string(s) + " padded", m);
    }
  }
}

// ---- a declared dimension far beyond the columns in use
// ------------------------------------------

// A and B declare 2^31 columns (int32 indices: the widest they hold) or 2^62 (int64) and store a
// few entries in 11 of them, spread from column 0 to the last: hashed feature ids, or a file whose
// header declares 2^31 columns. Every metric and strategy gives the values of the padded oracle
// (the narrow rows plus dim - 11 zero coordinates: hamming, russellrao and correlation count them),
// A != B and A against itself. Memory follows the used columns: on the host the peak resident
// memory grows by less than 64 MiB (a CSC of B over the declared columns would take 16 GiB for 2^31
// columns and cannot be allocated for 2^62, on either backend).
TYPED_TEST(pairwise_engine, declared_columns_far_beyond_the_used_ones)
{
  SPIRA_ENGINE_TYPES;
  const std::int64_t dim =
      std::is_same_v<I, std::int32_t> ? std::int64_t(1) << 31 : std::int64_t(1) << 62;
  const std::vector<std::int64_t> used{0,       1,       5,          4096,    1 << 20, dim / 5,
                                       dim / 3, dim / 2, dim - 1000, dim - 2, dim - 1};
  const std::int64_t u = std::int64_t(used.size());
  const auto narrow_a = random_csr<V, I>({.rows = 13, .cols = u, .mean_degree = 4, .seed = 101});
  const auto narrow_b = random_csr<V, I>({.rows = 9, .cols = u, .mean_degree = 3, .seed = 102});
  const auto a = widen(narrow_a, used, dim);
  const auto b = widen(narrow_b, used, dim);
  const peak_memory_probe probe;
  for (const auto* other : {&b, &a}) {
    const auto* narrow_other = other == &a ? &narrow_a : &narrow_b;
    const std::string pair = other == &a ? "A = B" : "A != B";
    const auto da = densify(narrow_a), db = densify(*narrow_other);
    for (const metric m : all_metrics()) {
      for (const double p : exponents_of(m)) {
        const matrix want = oracle::pairwise_padded(m, da, db, dim, p);
        for (const pairwise_strategy s : strategies_of<R>()) {
          if (!supports_strategy(m, s)) {
            continue;
          }
          expect_near<V>(run_on(res, m, a, *other, p, s), want,
                         "dim = " + std::to_string(dim) + " " + pair + " " + to_string(m) +
                             " p=" + std::to_string(p) + " " + to_string(s),
                         m, p);
        }
      }
    }
  }
  if constexpr (std::is_same_v<R, host_resources>) {
    EXPECT_LT(probe.growth(), std::int64_t(64) << 20)
        << "peak resident memory grew by " << probe.growth() << " bytes";
  }
}

// ---- tiling: more output columns than one shared-memory tile, workspace caps
// ----------------------

// More rows of B than one shared-memory tile of the intersection kernel holds (6,912 float or
// 3,456 double accumulators): 15,000 rows take 3 tiles (float accumulators: cosine, chebyshev in
// float) to 5 (double accumulators: manhattan, jensenshannon, everything in double), so blocks
// start at j0 > 0 (a binary search into each column of B's CSC) and stop their column walk at the
// tile's end. cosine (annihilating), manhattan (sum NAMM with corrections), jensenshannon (prepared
// rows) and chebyshev (max NAMM with the per-pair fix-up); every strategy on CUDA.
TYPED_TEST(pairwise_engine, more_rows_of_b_than_one_shared_memory_tile)
{
  SPIRA_ENGINE_TYPES;
  // About 280 entries per column of B: every tile of every row of A meets several of them. Short
  // rows keep the hybrid strategy's rows(A) x nnz(B) small for the sanitizer runs.
  const auto a = random_csr<V, I>({.rows = 40, .cols = 500, .mean_degree = 8, .seed = 61});
  const auto b = random_csr<V, I>({.rows = 15000, .cols = 500, .mean_degree = 8, .seed = 62});
  const auto da = densify(a), db = densify(b);
  for (const metric m :
       {metric::cosine, metric::manhattan, metric::jensenshannon, metric::chebyshev}) {
    const matrix want = oracle::pairwise(m, da, db);
    for (const pairwise_strategy s : strategies_of<R>()) {
      if (!supports_strategy(m, s)) {
        continue;
      }
      expect_near<V>(run_on(res, m, a, b, 2.0, s), want,
                     std::string("rows(B) = 15,000 ") + to_string(m) + " " + to_string(s), m);
    }
  }
}

// The hybrid strategy's accumulator tile (a distance with several terms: braycurtis accumulates
// |a - b| and |a + b|) under a workspace cap of exactly one row (rows(B) x 2 x sizeof(V) bytes),
// of 3.5 rows (a cap that does not divide into rows) and of 16 rows: each tile of rows of A runs
// both passes and its finalize, the last tile is short. A != B and A against itself. One-term
// distances accumulate in the output, so any cap (1 byte here) is accepted and changes nothing.
// The host engine ignores strategy and cap.
TYPED_TEST(pairwise_engine, hybrid_accumulator_in_several_tiles_under_a_workspace_cap)
{
  SPIRA_ENGINE_TYPES;
  const auto a = random_csr<V, I>({.rows = 37, .cols = 61, .mean_degree = 7, .seed = 81});
  const auto b = random_csr<V, I>({.rows = 23, .cols = 61, .mean_degree = 5, .seed = 82});
  for (const auto* other : {&b, &a}) {
    const std::string pair = other == &a ? "A = B" : "A != B";
    const auto da = densify(a), db = densify(*other);
    const std::size_t row_bytes = std::size_t(other->rows()) * 2 * sizeof(V);
    const matrix want = oracle::pairwise(metric::braycurtis, da, db);
    for (const std::size_t cap : {row_bytes, 3 * row_bytes + row_bytes / 2, 16 * row_bytes}) {
      expect_near<V>(run_on(res, a, *other,
                            {.metric = metric::braycurtis,
                             .strategy = pairwise_strategy::hybrid,
                             .workspace_bytes = cap}),
                     want,
                     "braycurtis hybrid " + pair + " workspace_bytes = " + std::to_string(cap),
                     metric::braycurtis);
    }
    for (const metric m : {metric::manhattan, metric::chebyshev, metric::cosine}) {
      expect_near<V>(
          run_on(res, a, *other,
                 {.metric = m, .strategy = pairwise_strategy::hybrid, .workspace_bytes = 1}),
          oracle::pairwise(m, da, db),
          std::string(to_string(m)) + " hybrid " + pair + " workspace_bytes = 1", m);
    }
  }
}

// The dense strategy's densified tiles under a workspace cap of one row of A and one of B (the
// smallest tile, 2 x cols x sizeof(V) bytes), of 5 rows plus 3 bytes and of 20 rows: the GEMMs
// run over many tile pairs with short last tiles. Then a short A (3 rows), whose single tile is
// densified once for all tiles of B. Every metric the dense strategy evaluates; the host engine
// ignores strategy and cap.
TYPED_TEST(pairwise_engine, dense_strategy_in_several_tiles_under_a_workspace_cap)
{
  SPIRA_ENGINE_TYPES;
  const std::int64_t cols = 61;
  const auto a = random_csr<V, I>({.rows = 37, .cols = cols, .mean_degree = 7, .seed = 91});
  const auto short_a = random_csr<V, I>(
      {.rows = 3, .cols = cols, .mean_degree = 9, .empty_row_fraction = 0, .seed = 93});
  const auto b = random_csr<V, I>({.rows = 23, .cols = cols, .mean_degree = 5, .seed = 92});
  const std::size_t row_bytes = std::size_t(cols) * sizeof(V);
  const auto db = densify(b);
  for (const auto* left : {&a, &short_a}) {
    const auto dl = densify(*left);
    for (const metric m : all_metrics()) {
      if (!supports_strategy(m, pairwise_strategy::dense)) {
        continue;
      }
      const matrix want = oracle::pairwise(m, dl, db);
      for (const std::size_t cap : {2 * row_bytes, 5 * row_bytes + 3, 20 * row_bytes}) {
        expect_near<V>(
            run_on(res, *left, b,
                   {.metric = m, .strategy = pairwise_strategy::dense, .workspace_bytes = cap}),
            want,
            std::string(to_string(m)) + " dense rows(A) = " + std::to_string(left->rows()) +
                " workspace_bytes = " + std::to_string(cap),
            m);
      }
    }
  }
}

// A workspace cap below one tile of the strategy it bounds is an invalid argument on CUDA that
// names params.workspace_bytes and the least cap that works: one row of the hybrid accumulator
// tile (braycurtis: rows(B) x 2 terms x sizeof(V)), one densified row of A and one of B
// (2 x cols x sizeof(V)). `automatic` passes over `dense` when the cap cannot hold its smallest
// tiles (and takes the intersection strategy). The host engine ignores the cap: the same calls
// succeed there.
TYPED_TEST(pairwise_engine, a_workspace_cap_below_one_tile_is_an_invalid_argument)
{
  SPIRA_ENGINE_TYPES;
  const std::int64_t cols = 61;
  // Densities of about 10%: `automatic` takes `dense` for dot-product metrics without a cap.
  const auto a = random_csr<V, I>({.rows = 37, .cols = cols, .mean_degree = 7, .seed = 95});
  const auto b = random_csr<V, I>({.rows = 23, .cols = cols, .mean_degree = 5, .seed = 96});
  const auto da = densify(a), db = densify(b);
  const std::size_t hybrid_least = std::size_t(b.rows()) * 2 * sizeof(V);
  const std::size_t dense_least = 2 * std::size_t(cols) * sizeof(V);
  const std::vector<std::tuple<metric, pairwise_strategy, std::size_t>> cases{
      {metric::braycurtis, pairwise_strategy::hybrid, hybrid_least},
      {metric::cosine, pairwise_strategy::dense, dense_least},
      {metric::hellinger, pairwise_strategy::dense, dense_least}};
  for (const auto& [m, s, least] : cases) {
    const distance_params params{.metric = m, .strategy = s, .workspace_bytes = least - 1};
    const std::string what = std::string(to_string(m)) + " " + to_string(s) +
                             " workspace_bytes = " + std::to_string(least - 1);
    if constexpr (std::is_same_v<R, cuda_resources>) {
      std::string msg = "no exception";
      try {
        (void)run_on(res, a, b, params);
      } catch (const invalid_argument& e) {
        msg = e.what();
      }
      EXPECT_NE(msg.find("params.workspace_bytes = " + std::to_string(least - 1)),
                std::string::npos)
          << what << ": " << msg;
      EXPECT_NE(msg.find("at least " + std::to_string(least)), std::string::npos)
          << what << ": " << msg;
      EXPECT_NE(msg.find(std::string(to_string(s)) + " strategy"), std::string::npos)
          << what << ": " << msg;
    } else {
      expect_near<V>(run_on(res, a, b, params), oracle::pairwise(m, da, db),
                     what + " (host engine: cap ignored)", m);
    }
  }
  for (const metric m : {metric::cosine, metric::euclidean, metric::dice}) {
    expect_near<V>(run_on(res, a, b, {.metric = m, .workspace_bytes = dense_least - 1}),
                   oracle::pairwise(m, da, db),
                   std::string(to_string(m)) + " automatic under a cap too small for dense", m);
  }
}

// ---- arguments
// -----------------------------------------------------------------------------------

TEST(pairwise_strategy_names, round_trip_and_support)
{
  for (const auto s : {pairwise_strategy::automatic, pairwise_strategy::intersection,
                       pairwise_strategy::hybrid, pairwise_strategy::dense}) {
    EXPECT_EQ(pairwise_strategy_from_string(to_string(s)), s);
  }
  EXPECT_THROW((void)pairwise_strategy_from_string("fast"), invalid_argument);
  for (const metric m : all_metrics()) {
    EXPECT_TRUE(supports_strategy(m, pairwise_strategy::automatic));
    EXPECT_TRUE(supports_strategy(m, pairwise_strategy::hybrid));
    EXPECT_TRUE(supports_strategy(m, pairwise_strategy::intersection));
  }
  EXPECT_TRUE(supports_strategy(metric::cosine, pairwise_strategy::dense));
  EXPECT_FALSE(supports_strategy(metric::manhattan, pairwise_strategy::dense));
  EXPECT_FALSE(supports_strategy(metric::jaccard, pairwise_strategy::dense));
}

template <class Fn>
std::string message_of(Fn fn)
{
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no exception";
}

TEST(pairwise_engine_cuda, arguments_are_validated_with_clear_messages)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  const cuda_resources res{};
  using V = float;
  using I = std::int32_t;
  const auto ha = random_csr<V, I>({.rows = 4, .cols = 6, .seed = 1});
  const auto hb = random_csr<V, I>({.rows = 5, .cols = 6, .seed = 2});
  const auto a = to_device(res, ha.view());
  const auto b = to_device(res, hb.view());
  dense_matrix<V> out(res, 4, 5);

  auto msg = message_of([&] {
    pairwise_distance(res, a.view(), b.view(), out.view(),
                      {.metric = metric::manhattan, .strategy = pairwise_strategy::dense});
  });
  EXPECT_NE(msg.find("dense"), std::string::npos) << msg;
  EXPECT_NE(msg.find("manhattan"), std::string::npos) << msg;

  // Host inputs on the CUDA overload.
  msg = message_of([&] { pairwise_distance(res, ha.view(), b.view(), out.view(), {}); });
  EXPECT_NE(msg.find("host memory"), std::string::npos) << msg;

  dense_matrix<V> bad(res, 5, 4);
  EXPECT_THROW(pairwise_distance(res, a.view(), b.view(), bad.view(), {}), dimension_mismatch);

  const auto negative =
      to_device(res, make_csr<V, I>(host_resources{}, 5, 6, std::vector<offset_t>{0, 0, 1, 1, 1, 1},
                                    std::vector<I>{4}, std::vector<V>{-0.5f})
                         .view());
  msg = message_of([&] {
    pairwise_distance(res, a.view(), negative.view(), out.view(),
                      {.metric = metric::kl_divergence});
  });
  EXPECT_NE(msg.find("non-negative"), std::string::npos) << msg;
  EXPECT_NE(msg.find("row 1, column 4"), std::string::npos) << msg;

  msg = message_of([&] {
    pairwise_distance(res, a.view(), b.view(), out.view(), {.metric = metric::minkowski, .p = 0.5});
  });
  EXPECT_NE(msg.find("p >= 1"), std::string::npos) << msg;
}

// An output of more than 2^31 elements (8.6 GB of float) on the GPU: entries at the far end are
// checked against the oracle. Skips without a GPU or without the memory. Its name leaves out
// "cuda" on purpose: scripts/gpu-check.sh selects the tests it runs under compute-sanitizer with
// '*cuda*', and racecheck over this many shared-memory accesses would take hours.
TEST(pairwise_engine_large, output_beyond_two_to_the_31_elements_on_the_gpu)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  const cuda_resources res{};
  using V = float;
  using I = std::int32_t;
  const std::int64_t m = 50000, n = 43000, cols = 64;
  ASSERT_GT(m * n, std::int64_t(1) << 31);
  auto mk = [&](std::int64_t rows, std::uint32_t seed) {
    return random_csr<V, I>({.rows = rows,
                             .cols = cols,
                             .mean_degree = 3,
                             .empty_row_fraction = 0.05,
                             .empty_col_fraction = 0.0,
                             .seed = seed});
  };
  const auto ha = mk(m, 31), hb = mk(n, 32);
  const auto a = to_device(res, ha.view());
  const auto b = to_device(res, hb.view());
  std::unique_ptr<dense_matrix<V>> out;
  try {
    out = std::make_unique<dense_matrix<V>>(res, m, n);
  } catch (const out_of_memory&) {
    GTEST_SKIP() << "not enough device memory for a " << m << " x " << n << " output";
  }
  const auto da = densify(ha), db = densify(hb);
  for (const auto& [mt, s] : {std::pair{metric::cosine, pairwise_strategy::intersection},
                              std::pair{metric::manhattan, pairwise_strategy::hybrid},
                              std::pair{metric::chebyshev, pairwise_strategy::automatic}}) {
    pairwise_distance(res, a.view(), b.view(), out->view(), {.metric = mt, .strategy = s});
    synchronize(res);
    // The last rows (far beyond element 2^31) and one row in the middle.
    for (const std::int64_t i : {std::int64_t(1), m / 2, m - 2, m - 1}) {
      std::vector<V> row(static_cast<std::size_t>(n));
      copy(row.data(), memory_space::host, out->data() + i * n, memory_space::device,
           std::size_t(n), res);
      for (std::int64_t j = 0; j < n; j += 997) {
        const double want = oracle::distance(mt, da.value[i], db.value[j]);
        ASSERT_NEAR(row[std::size_t(j)], want, tolerance<V>(want))
            << to_string(mt) << " " << to_string(s) << " at (" << i << ", " << j << ")";
      }
      const double want_last = oracle::distance(mt, da.value[i], db.value[n - 1]);
      ASSERT_NEAR(row[std::size_t(n - 1)], want_last, tolerance<V>(want_last));
    }
  }
}

}  // namespace
}  // namespace spira::test
