// mxv and vxm on CUDA (spira/cuda/graphblas.cuh) against the host ones (which
// tests/mxm/mxv_test.cpp checks against SuiteSparse:GraphBLAS): the same entries, bit for bit, for
// every combination of mask, complement, accumulator, replace, transposes and w given or empty; the
// push of lor_land; breadth-first levels; the pull's fold of long rows with values whose sums round
// (the order of spira/detail/pull_fold.hpp on both backends); u holding every index; vectors of
// hundreds of thousands of indices written by many tiles (spira/cuda/detail/ordered_vector.cuh).
#include "support/backend.hpp"
#include "support/sweep.hpp"

#include <semirings/graphblas.hpp>
#include <spira/cuda/graphblas.cuh>
#include <spira/mxv.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace spira::test {
namespace {

struct lor_times {  // a lor ⊕ over products that are not 0 / 1
  using add_monoid = lor_monoid;
  static constexpr bool annihilating = true;
  template <class T>
  SPIRA_HD constexpr T multiply(T a, T b) const
  {
    return a * b;
  }
};

template <class T>
class graphblas_cuda : public ::testing::Test {};
TYPED_TEST_SUITE(graphblas_cuda, cuda_value_index_types);

/// mxv and vxm, every descriptor, the CUDA ones against the host ones (mxv_test.cpp's sweep).
template <class V, class I, class S, class Accum>
void vector_sweep(const S& s, const Accum& acc, bool logical, const char* what, bool reals = false)
{
  const cuda_resources res{};
  const std::int64_t m = 37, n = 29;
  const auto vec = [&](std::int64_t size, std::uint32_t seed) {
    return reals ? real_vector<V, I>(size, seed) : vector_operand<V, I>(size, seed, logical);
  };
  for (const bool column : {true, false}) {
    for (const bool ta : {false, true}) {
      const auto a = ta ? sweep_operand<V, I>(n, m, 51, logical, reals)
                        : sweep_operand<V, I>(m, n, 51, logical, reals);
      const std::int64_t in = column ? n : m, out = column ? m : n;
      const auto u = vec(in, 52);
      const auto w = vec(out, 53);
      const auto mask = vector_operand<V, I>(out, 54, false, true);
      const auto ad = to_device(res, a.view());
      const auto ud = vector_on_device(res, u), wd = vector_on_device(res, w);
      const auto md = vector_on_device(res, mask);
      for (int bits = 0; bits < sweep_case::count; ++bits) {
        const auto k = sweep_case::nth(bits, ta);
        descriptor d = k.desc();
        d.transpose_a = column && k.transpose_a;
        d.transpose_b = !column && k.transpose_a;
        const auto run = [&](const auto& r, const auto& av, const auto& uv, const auto& wv,
                             const auto& mv) {
          const auto w_in = k.with_c ? std::optional(wv) : std::nullopt;
          const auto m_in = k.mask != 0 ? std::optional(mv) : std::nullopt;
          return with_accum(k, acc, [&](const auto& accum) {
            return column ? mxv(r, w_in, m_in, accum, s, av, uv, d)
                          : vxm(r, w_in, m_in, accum, s, uv, av, d);
          });
        };
        const auto want =
            entries_of(run(host_resources{}, a.view(), u.view(), w.view(), mask.view()).view());
        const auto got = vector_host_entries(run(res, ad.view(), ud.view(), wd.view(), md.view()));
        ASSERT_EQ(got, want) << what << (column ? " mxv: " : " vxm: ") << k.name();
      }
    }
  }
}

TYPED_TEST(graphblas_cuda, mxv_vxm_every_descriptor)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  using namespace spira::semirings;
  vector_sweep<V, I>(plus_times{}, plus_monoid{}, false, "plus_times");
  vector_sweep<V, I>(min_plus{}, min_monoid{}, false, "min_plus");
  vector_sweep<V, I>(lor_land{}, lor_monoid{}, true, "lor_land");
  vector_sweep<V, I>(lor_times{}, lor_monoid{}, false, "lor_times");
  // Reals: the pull's double folds and the push's rounded T reach the accumulator alike.
  vector_sweep<V, I>(plus_times{}, plus_monoid{}, false, "plus_times reals", true);
  vector_sweep<V, I>(min_plus{}, plus_monoid{}, false, "min_plus reals", true);
}

/// A lor ⊕ over products that are not 0 / 1: the push keeps a lone product as it is (a signed
/// zero, a NaN) and folds two or more into lor's 1, as the host does - compared bit for bit, in
/// vxm and in mxv with Aᵀ.
TEST(graphblas_cuda_vectors, lor_push_keeps_a_lone_product)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = double;
  using I = std::int64_t;
  const cuda_resources res{};
  // A (3 x 4): row 0 {1: 3, 2: 0}, row 1 {1: 2}, row 2 {3: 1}; u = {-1, 5, NaN}.
  const auto a = make_csr<V, I>(host_resources{}, 3, 4, std::vector<offset_t>{0, 2, 3, 4},
                                std::vector<I>{1, 2, 1, 3}, std::vector<V>{3, 0, 2, 1});
  const auto u = make_sparse_vector<V, I>(host_resources{}, 3, std::vector<I>{0, 1, 2},
                                          std::vector<V>{-1, 5, std::nan("")});
  const auto ad = to_device(res, a.view());
  const auto ud = vector_on_device(res, u);
  const auto bits = [](const vector_entries& e) {
    std::vector<std::pair<std::int64_t, std::uint64_t>> b;
    for (const auto& [i, v] : e) {
      std::uint64_t x = 0;
      std::memcpy(&x, &v, sizeof x);
      b.emplace_back(i, x);
    }
    return b;
  };
  const descriptor at{.transpose_a = true};
  const auto want_v = entries_of(vxm(host_resources{}, u.view(), a.view(), lor_times{}).view());
  const auto want_m = entries_of(mxv(host_resources{}, a.view(), u.view(), lor_times{}, at).view());
  ASSERT_EQ(want_v.size(), 3u);  // columns 1 (two products), 2 (-0) and 3 (NaN)
  EXPECT_TRUE(std::signbit(want_v[1].second) && want_v[1].second == 0.0);
  EXPECT_TRUE(std::isnan(want_v[2].second));
  EXPECT_EQ(bits(vector_host_entries(vxm(res, ud.view(), ad.view(), lor_times{}))), bits(want_v));
  EXPECT_EQ(bits(vector_host_entries(mxv(res, ad.view(), ud.view(), lor_times{}, at))),
            bits(want_m));
}

/// Breadth-first levels by masked vxm on the GPU equal the host's (a long frontier takes the
/// expanded path), and values whose sums round give the host's bytes in both products.
TEST(graphblas_cuda_vectors, bfs_levels_and_rounding_sums)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = double;
  using I = std::int64_t;
  const cuda_resources res{};
  const auto g = random_csr<V, I>({.rows = 3000, .cols = 3000, .mean_degree = 12, .seed = 61});
  const auto gd = to_device(res, g.view());
  // The identity, for visited ∪= frontier (the frontier accumulated into visited with lor).
  std::vector<offset_t> eye_ptr(3001);
  std::vector<I> eye_col(3000);
  std::vector<V> eye_val(3000, V(1));
  for (std::int64_t i = 0; i <= 3000; ++i) {
    eye_ptr[std::size_t(i)] = i;
  }
  for (std::int64_t i = 0; i < 3000; ++i) {
    eye_col[std::size_t(i)] = I(i);
  }
  const auto eye = make_csr<V, I>(host_resources{}, 3000, 3000, eye_ptr, eye_col, eye_val);
  const auto eye_d = to_device(res, eye.view());
  const std::vector<I> start_idx{0};
  const std::vector<V> start_val{1};
  const auto first = [&] {
    return make_sparse_vector<V, I>(host_resources{}, 3000, start_idx, start_val);
  };
  const descriptor next{.structural_mask = true, .complement_mask = true, .replace = true};
  auto frontier = first(), visited = first();
  auto frontier_d = vector_on_device(res, first()), visited_d = vector_on_device(res, first());
  for (int level = 1; frontier.nnz() > 0; ++level) {
    frontier = vxm(host_resources{}, std::nullopt, std::optional(visited.view()), no_accumulator{},
                   semirings::lor_land{}, frontier.view(), g.view(), next);
    frontier_d = vxm(res, std::nullopt, std::optional(visited_d.view()), no_accumulator{},
                     semirings::lor_land{}, frontier_d.view(), gd.view(), next);
    ASSERT_EQ(vector_host_entries(frontier_d), entries_of(frontier.view())) << "level " << level;
    visited = vxm(host_resources{}, std::optional(visited.view()), std::nullopt, lor_monoid{},
                  semirings::lor_land{}, frontier.view(), eye.view());
    visited_d = vxm(res, std::optional(visited_d.view()), std::nullopt, lor_monoid{},
                    semirings::lor_land{}, frontier_d.view(), eye_d.view());
  }
  // Rounding sums: a dense-ish u against long rows, both products, both orientations.
  std::vector<I> ui;
  std::vector<V> uv;
  for (std::int64_t j = 0; j < 3000; j += 2) {
    ui.push_back(I(j));
    uv.push_back(V(0.1 + 0.37 * double(j % 17)));
  }
  const auto u = make_sparse_vector<V, I>(host_resources{}, 3000, ui, uv);
  const auto udev = vector_on_device(res, u);
  for (const bool t : {false, true}) {
    EXPECT_EQ(vector_host_entries(mxv(res, gd.view(), udev.view(), semirings::plus_times{},
                                      descriptor{.transpose_a = t})),
              entries_of(mxv(host_resources{}, g.view(), u.view(), semirings::plus_times{},
                             descriptor{.transpose_a = t})
                             .view()));
    EXPECT_EQ(vector_host_entries(vxm(res, udev.view(), gd.view(), semirings::plus_times{},
                                      descriptor{.transpose_b = t})),
              entries_of(vxm(host_resources{}, u.view(), g.view(), semirings::plus_times{},
                             descriptor{.transpose_b = t})
                             .view()));
  }
}

/// pull_folds_long_rows_as_the_host for one mean row length.
template <class V, class I>
void pull_folds_long_rows(double mean)
{
  const cuda_resources res{};
  const std::int64_t m = 2000, n = 6000;
  const auto a = random_csr<V, I>(
      {.rows = m, .cols = n, .mean_degree = mean, .signed_values = true, .seed = 91});
  offset_t longest = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    longest = std::max(longest, a.row_ptr()[i + 1] - a.row_ptr()[i]);
  }
  ASSERT_GT(longest, mean > 32 ? 1000 : 64);  // rows of many steps of a warp
  std::vector<I> all_idx(static_cast<std::size_t>(n));
  std::vector<V> all_val(all_idx.size());
  std::mt19937_64 rng(92);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (std::int64_t j = 0; j < n; ++j) {
    all_idx[std::size_t(j)] = I(j);
    all_val[std::size_t(j)] = V(unit(rng));
  }
  const auto full = make_sparse_vector<V, I>(host_resources{}, n, all_idx, all_val);
  const auto half = real_vector<V, I>(n, 93);
  const auto w = real_vector<V, I>(m, 94);
  const auto mask = vector_operand<V, I>(m, 95, false, true);
  const auto ad = to_device(res, a.view());
  const auto wd = vector_on_device(res, w), md = vector_on_device(res, mask);
  for (const auto* u : {&full, &half}) {
    const auto ud = vector_on_device(res, *u);
    // Against a float64 sum in increasing k.
    const auto plain =
        entries_of(mxv(host_resources{}, a.view(), u->view(), semirings::plus_times{}).view());
    std::vector<double> dense_u(static_cast<std::size_t>(n), 0.0);
    std::vector<bool> has(static_cast<std::size_t>(n), false);
    for (std::int64_t p = 0; p < u->nnz(); ++p) {
      dense_u[std::size_t(u->indices()[p])] = double(u->values()[p]);
      has[std::size_t(u->indices()[p])] = true;
    }
    std::size_t at = 0;
    for (std::int64_t i = 0; i < m; ++i) {
      double sum = 0, magnitude = 0;
      bool any = false;
      for (offset_t p = a.row_ptr()[i]; p < a.row_ptr()[i + 1]; ++p) {
        const auto k = std::size_t(a.col_idx()[p]);
        if (has[k]) {
          const double x = double(a.values()[p]) * dense_u[k];
          sum += x;
          magnitude += std::abs(x);
          any = true;
        }
      }
      if (!any) {
        continue;
      }
      ASSERT_LT(at, plain.size());
      ASSERT_EQ(plain[at].first, i);
      const double tol = (sizeof(V) == 4 ? 1e-5 : 1e-12) * std::max(magnitude, 1.0);
      EXPECT_NEAR(plain[at].second, sum, tol) << "row " << i;
      ++at;
    }
    EXPECT_EQ(at, plain.size());
    for (int c = 0; c < 4; ++c) {
      const auto w_in = (c & 1) != 0 ? std::optional(w.view()) : std::nullopt;
      const auto wd_in = (c & 1) != 0 ? std::optional(wd.view()) : std::nullopt;
      const auto m_in = (c & 2) != 0 ? std::optional(mask.view()) : std::nullopt;
      const auto md_in = (c & 2) != 0 ? std::optional(md.view()) : std::nullopt;
      const std::string what = std::string(u == &full ? "u full" : "u half") +
                               ((c & 1) != 0 ? ", w + t" : "") + ((c & 2) != 0 ? ", mask" : "");
      EXPECT_EQ(vector_host_entries(mxv(res, wd_in, md_in, plus_monoid{}, semirings::plus_times{},
                                        ad.view(), ud.view())),
                entries_of(mxv(host_resources{}, w_in, m_in, plus_monoid{}, semirings::plus_times{},
                               a.view(), u->view())
                               .view()))
          << "mxv, " << what;
      const descriptor tb{.transpose_b = true};
      EXPECT_EQ(vector_host_entries(vxm(res, wd_in, md_in, plus_monoid{}, semirings::plus_times{},
                                        ud.view(), ad.view(), tb)),
                entries_of(vxm(host_resources{}, w_in, m_in, plus_monoid{}, semirings::plus_times{},
                               u->view(), a.view(), tb)
                               .view()))
          << "vxm with transpose_b, " << what;
    }
  }
}

/// The pull's fold of long rows (power-law lengths up to the 6,000 columns, signed values: sums
/// that round and cancel) gives the host's bytes, for u holding half of the indices and every
/// index, with and without a mask, w and an accumulator, in mxv and in vxm with transpose_b; the
/// host's values are those of a float64 sum up to rounding. Mean row lengths 60 (a warp per row)
/// and 8 (tiles of short rows, the long ones by the warp).
TYPED_TEST(graphblas_cuda, pull_folds_long_rows_as_the_host)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  for (const double mean : {60.0, 8.0}) {
    pull_folds_long_rows<V, I>(mean);
  }
}

/// Vectors of hundreds of thousands of indices, written in one pass by many tiles (the pull's,
/// the write-back's): the host's bytes, whether the result holds most of its indices (kept where it
/// was written) or few of them (copied to an exact allocation), for the tiled and the
/// warp-per-row pull, u half and full, with and without a mask, and lor_land's push.
TEST(graphblas_cuda_vectors, long_vectors_written_by_many_tiles)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = float;
  using I = std::int32_t;
  const cuda_resources res{};
  struct shape {
    std::int64_t n;
    double mean, empty;
  };
  // Mean rows 4 (tiled) and 40 (a warp a row); 60% empty rows: fewer entries than half the size.
  for (const shape sh : {shape{300000, 4, 0.6}, shape{300000, 4, 0.05}, shape{60000, 40, 0.1}}) {
    const auto a = random_csr<V, I>({.rows = sh.n,
                                     .cols = sh.n,
                                     .mean_degree = sh.mean,
                                     .empty_row_fraction = sh.empty,
                                     .seed = 97});
    const auto ad = to_device(res, a.view());
    std::vector<I> all_idx(static_cast<std::size_t>(sh.n));
    std::vector<V> all_val(all_idx.size());
    for (std::int64_t j = 0; j < sh.n; ++j) {
      all_idx[std::size_t(j)] = I(j);
      all_val[std::size_t(j)] = V(0.5 + double(j % 7));
    }
    const auto full = make_sparse_vector<V, I>(host_resources{}, sh.n, all_idx, all_val);
    const auto half = real_vector<V, I>(sh.n, 98);
    const auto mask = vector_operand<V, I>(sh.n, 99, false);
    const auto md = vector_on_device(res, mask);
    const descriptor unmasked{.structural_mask = true, .complement_mask = true};
    const std::string where = "n = " + std::to_string(sh.n) + ", mean row " +
                              std::to_string(sh.mean) + ", empty " + std::to_string(sh.empty);
    for (const auto* u : {&full, &half}) {
      const auto ud = vector_on_device(res, *u);
      const std::string what = where + (u == &full ? ", u full" : ", u half");
      const auto want = mxv(host_resources{}, a.view(), u->view(), semirings::plus_times{});
      if (u == &full) {
        EXPECT_EQ(want.nnz() < sh.n / 2, sh.empty > 0.5) << what;  // both sizes of result
      }
      EXPECT_EQ(vector_host_entries(mxv(res, ad.view(), ud.view(), semirings::plus_times{})),
                entries_of(want.view()))
          << what;
      EXPECT_EQ(
          vector_host_entries(mxv(res, std::nullopt, std::optional(md.view()), no_accumulator{},
                                  semirings::plus_times{}, ad.view(), ud.view(), unmasked)),
          entries_of(mxv(host_resources{}, std::nullopt, std::optional(mask.view()),
                         no_accumulator{}, semirings::plus_times{}, a.view(), u->view(), unmasked)
                         .view()))
          << what << ", mask";
    }
    const auto frontier = vector_operand<V, I>(sh.n, 100, true);
    const auto fd = vector_on_device(res, frontier);
    EXPECT_EQ(
        vector_host_entries(vxm(res, std::nullopt, std::optional(md.view()), no_accumulator{},
                                semirings::lor_land{}, fd.view(), ad.view(), unmasked)),
        entries_of(vxm(host_resources{}, std::nullopt, std::optional(mask.view()), no_accumulator{},
                       semirings::lor_land{}, frontier.view(), a.view(), unmasked)
                       .view()))
        << where << ", lor_land push";
  }
}

/// u holding every index (the pull reads it in place): a wrong index is refused with the host's
/// message, as for any u; a wrong column in a long row among short ones (the tiled pull) too.
TEST(graphblas_cuda_vectors, full_u_with_a_wrong_index_is_refused)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = float;
  using I = std::int32_t;
  const cuda_resources res{};
  const auto a = random_csr<V, I>({.rows = 9, .cols = 5, .mean_degree = 3, .seed = 96});
  const auto ad = to_device(res, a.view());
  const std::vector<V> values{1, 2, 3, 4, 5};
  for (const auto& [idx, text] :
       {std::pair{std::vector<I>{0, 1, 3, 2, 4}, "spira::mxv: u: index 2 (entry 3) follows 3"},
        std::pair{std::vector<I>{0, 1, 2, 3, 7},
                  "spira::mxv: u: index 7 (entry 4) is outside [0, 5)"},
        std::pair{std::vector<I>{0, 1, 2, 2, 4}, "spira::mxv: u: index 2 (entry 3) follows 2"}}) {
    sparse_vector<V, I> u(res, 5, 5);
    copy(u.indices(), memory_space::device, idx.data(), memory_space::host, idx.size(), res);
    copy(u.values(), memory_space::device, values.data(), memory_space::host, values.size(), res);
    expect_throw_with<invalid_argument>(
        [&] { (void)mxv(res, ad.view(), u.view(), semirings::plus_times{}); }, text);
  }
  // 20 rows of one entry but row 3, of 40 entries whose 38th (entry 37) goes back.
  std::vector<offset_t> ptr{0};
  std::vector<I> col;
  for (std::int64_t i = 0; i < 20; ++i) {
    const int len = i == 3 ? 40 : 1;
    for (int e = 0; e < len; ++e) {
      col.push_back(I(e));
    }
    ptr.push_back(offset_t(col.size()));
  }
  col[std::size_t(ptr[3]) + 37] = I(5);
  const std::vector<V> ones(col.size(), V(1));
  sparse_vector<V, I> u(res, 40, 0);
  const auto bad_d = to_device(
      res, csr_view<V, I>{20, 40, std::int64_t(col.size()), ptr.data(), col.data(), ones.data()});
  expect_throw_with<invalid_argument>(
      [&] { (void)mxv(res, bad_d.view(), u.view(), semirings::plus_times{}); },
      "spira::mxv: A: row 3 is not canonical: column 5 follows column 36");
}

/// lor_land's push (vxm, as a breadth-first step) checks what it reads before it uses it, and A
/// whole beside it; the scatters of w and of the mask check theirs, in the push and in the pull:
/// each bad operand is refused with the host's message (no fault on an index out of range).
TEST(graphblas_cuda_vectors, push_and_write_back_check_their_operands)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = float;
  using I = std::int32_t;
  const cuda_resources res{};
  const auto vec = [&](std::int64_t size, std::vector<I> idx) {
    sparse_vector<V, I> v(res, size, std::int64_t(idx.size()));
    const std::vector<V> ones(idx.size(), V(1));
    copy(v.indices(), memory_space::device, idx.data(), memory_space::host, idx.size(), res);
    copy(v.values(), memory_space::device, ones.data(), memory_space::host, idx.size(), res);
    return v;
  };
  // A (4 x 5): row 0 {1, 3}, row 1 {0}, row 2 {2, 4}, row 3 empty; `cols` replaces its columns.
  const std::vector<offset_t> ptr{0, 2, 3, 5, 5};
  const std::vector<V> vals(5, V(1));
  const auto matrix = [&](const std::vector<I>& cols) {
    return to_device(res, csr_view<V, I>{4, 5, 5, ptr.data(), cols.data(), vals.data()});
  };
  const auto a = matrix({1, 3, 0, 2, 4});
  const auto unsorted = matrix({1, 3, 0, 4, 2});  // row 2, which u = {0} does not select
  const auto wide = matrix({1, 7, 0, 2, 4});      // row 0, which it does
  const auto u0 = vec(4, {0});
  const descriptor next{.structural_mask = true, .complement_mask = true, .replace = true};
  const auto step = [&](const auto& m, const auto& u, const auto& w, const auto& mask) {
    return [&] {
      (void)vxm(res, w, mask, lor_monoid{}, semirings::lor_land{}, u.view(), m.view(), next);
    };
  };
  using opt = std::optional<sparse_vector_view<V, I>>;
  const auto far = vec(4, {0, 9}), down = vec(4, {2, 1});
  const auto bad_mask = vec(5, {0, 6}), bad_w = vec(5, {3, 1}), ok5 = vec(5, {1});
  expect_throw_with<invalid_argument>(step(a, far, opt{}, opt{}),
                                      "spira::vxm: u: index 9 (entry 1) is outside [0, 4)");
  expect_throw_with<invalid_argument>(step(a, down, opt{}, opt{}),
                                      "spira::vxm: u: index 1 (entry 1) follows 2");
  expect_throw_with<invalid_argument>(
      step(unsorted, u0, opt{}, opt{}),
      "spira::vxm: A: row 2 is not canonical: column 2 follows column 4");
  expect_throw_with<invalid_argument>(
      step(wide, u0, opt{}, opt{}),
      "spira::vxm: A: column index 7 at row 0 (entry 1) is outside [0, 5)");
  expect_throw_with<invalid_argument>(step(a, u0, opt{}, opt(bad_mask.view())),
                                      "spira::vxm: mask: index 6 (entry 1) is outside [0, 5)");
  expect_throw_with<invalid_argument>(step(a, u0, opt(bad_w.view()), opt(ok5.view())),
                                      "spira::vxm: w: index 1 (entry 1) follows 3");
  // The same w and mask checks in the pull (mxv: u of size 5, w and the mask of size 4).
  const auto bad_mask4 = vec(4, {0, 6}), bad_w4 = vec(4, {3, 1});
  const auto pull = [&](const auto& w, const auto& mask) {
    return [&] {
      (void)mxv(res, w, mask, plus_monoid{}, semirings::plus_times{}, a.view(), ok5.view());
    };
  };
  expect_throw_with<invalid_argument>(pull(opt{}, opt(bad_mask4.view())),
                                      "spira::mxv: mask: index 6 (entry 1) is outside [0, 4)");
  expect_throw_with<invalid_argument>(pull(opt(bad_w4.view()), opt{}),
                                      "spira::mxv: w: index 1 (entry 1) follows 3");
  // And a valid step still runs: row 0's columns 1 and 3, less the mask's 1.
  const auto ok = vxm(res, std::nullopt, opt(ok5.view()), no_accumulator{}, semirings::lor_land{},
                      u0.view(), a.view(), next);
  EXPECT_EQ(vector_host_entries(ok), (vector_entries{{3, 1.0}}));
}

}  // namespace
}  // namespace spira::test
