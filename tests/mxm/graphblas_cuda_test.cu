// The GraphBLAS-style operations on CUDA (spira/cuda/graphblas.cuh) against the host ones (which
// tests/mxm, tests/ewise, tests/select and tests/apply check against SuiteSparse:GraphBLAS): the
// same entries, bit for bit, for every combination of mask (none, valued with explicit zeros,
// structural), complement, accumulator, replace, transposes and C given or empty; mxm through
// each of its three paths (sorted in shared memory, dense accumulators, expanded and sorted on
// the device), also with values whose sums round; bad operands give the host's messages.
#include "support/backend.hpp"
#include "support/sweep.hpp"

#include <semirings/graphblas.hpp>
#include <spira/apply.hpp>
#include <spira/cuda/graphblas.cuh>
#include <spira/ewise.hpp>
#include <spira/knn.hpp>
#include <spira/mxm.hpp>
#include <spira/mxv.hpp>
#include <spira/ops.hpp>
#include <spira/select.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

namespace spira::test {
namespace {

struct minus_op {  // not commutative: the argument order shows
  SPIRA_HD double operator()(double x, double y) const { return x - y; }
};
struct fuzzy_op {  // UMAP's a + b - ab: a product beside a sum
  SPIRA_HD double operator()(double x, double y) const { return x + y - x * y; }
};
struct negate_op {
  SPIRA_HD double operator()(double x) const { return -x; }
};
struct index_op {
  SPIRA_HD double operator()(double x, std::int64_t i, std::int64_t j) const
  {
    return x + double(i) - 2.0 * double(j);
  }
};

template <class V, class I>
std::optional<csr_view<V, I>> opt(bool given, const csr_matrix<V, I>& m)
{
  return given ? std::optional(m.view()) : std::nullopt;
}

template <class V, class I>
entry_list host_entries(const csr_matrix<V, I>& m)
{
  return entries_of(to_host(m.view(), m.cuda()).view());
}

/// The operands of one sweep on both sides: host matrices and their device copies.
template <class V, class I>
struct operands {
  csr_matrix<V, I> host;
  csr_matrix<V, I> dev;
  explicit operands(csr_matrix<V, I> h, const cuda_resources& res)
      : host(std::move(h)), dev(to_device(res, host.view()))
  {
  }
};

/// For every case of the sweep (with transposes of A and B as `transposes` allows): the host
/// operation host(k, a, b, c, mask) and the CUDA one cuda(k, a, b, c, mask) give the same entries.
template <class V, class I, class Host, class Cuda>
void sweep(std::int64_t m, std::int64_t inner, std::int64_t n, bool product, int transposes,
           bool logical, const Host& host, const Cuda& cuda, const std::string& what,
           bool reals = false)
{
  const cuda_resources res{};
  const auto make = [&](std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
    return sweep_operand<V, I>(rows, cols, seed, logical, reals);
  };
  for (int t = 0; t < transposes; ++t) {
    const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
    // mxm: A is m x inner, B inner x n; element-wise: both m x n.
    const std::int64_t ar = m, ac = product ? inner : n;
    const std::int64_t br = product ? inner : m, bc = n;
    const operands<V, I> a(ta ? make(ac, ar, 11) : make(ar, ac, 11), res);
    const operands<V, I> b(tb ? make(bc, br, 12) : make(br, bc, 12), res);
    const operands<V, I> c(make(m, n, 13), res);
    const operands<V, I> mask(operand<V, I>(m, n, 14, false, true), res);
    for (int bits = 0; bits < sweep_case::count; ++bits) {
      const auto k = sweep_case::nth(bits, ta, tb);
      const auto want = entries_of(host(k, a.host, b.host, c.host, mask.host).view());
      const auto got = host_entries(cuda(k, a.dev, b.dev, c.dev, mask.dev));
      ASSERT_EQ(got, want) << what << ": " << k.name();
    }
  }
}

template <class T>
class graphblas_cuda : public ::testing::Test {};
TYPED_TEST_SUITE(graphblas_cuda, cuda_value_index_types);

template <class V, class I, class S, class Accum>
void mxm_sweep(const S& s, const Accum& acc, bool logical, const char* what, bool reals = false)
{
  for (const auto path :
       {detail::mxm_path::automatic, detail::mxm_path::sorted, detail::mxm_path::dense,
        detail::mxm_path::dense_global, detail::mxm_path::expanded, detail::mxm_path::masked_dot}) {
    sweep<V, I>(
        37, 29, 41, true, 4, logical,
        [&](const sweep_case& k, const auto& a, const auto& b, const auto& c, const auto& m) {
          return with_accum(k, acc, [&](const auto& accum) {
            return mxm(host_resources{}, k.c_of(c.view()), k.mask_of(m.view()), accum, s, a.view(),
                       b.view(), k.desc());
          });
        },
        [&](const sweep_case& k, const auto& a, const auto& b, const auto& c, const auto& m) {
          return with_accum(k, acc, [&](const auto& accum) {
            return detail::mxm_cuda(cuda_resources{}, k.c_of(c.view()), k.mask_of(m.view()), accum,
                                    s, a.view(), b.view(), k.desc(), path);
          });
        },
        std::string(what) + " path " + std::to_string(int(path)), reals);
  }
}

TYPED_TEST(graphblas_cuda, mxm_every_descriptor_and_path)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  using namespace spira::semirings;
  mxm_sweep<V, I>(plus_times{}, plus_monoid{}, false, "plus_times");
  mxm_sweep<V, I>(min_plus{}, min_monoid{}, false, "min_plus");
  mxm_sweep<V, I>(plus_pair{}, plus_monoid{}, false, "plus_pair");
  mxm_sweep<V, I>(lor_land{}, lor_monoid{}, true, "lor_land");
  // Reals: an accumulator reads T rounded to the value type on both backends.
  mxm_sweep<V, I>(plus_times{}, plus_monoid{}, false, "plus_times reals", true);
}

/// Values whose sums round (uniform random reals) and rows long enough for every path: the host's
/// bytes, so ⊕ folds the products in the host's order, unfused.
TYPED_TEST(graphblas_cuda, mxm_rounding_sums_give_the_host_bytes)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const cuda_resources res{};
  // Rows of 150 entries on average against columns shared by ~260 rows: ~39,000 products per row,
  // and more dense-path rows than the device's blocks (each block takes several in turn).
  const auto a = random_csr<V, I>({.rows = 1200, .cols = 700, .mean_degree = 150, .seed = 5});
  const auto a_dev = to_device(res, a.view());
  const descriptor o{.transpose_b = true};
  const auto want =
      entries_of(mxm(host_resources{}, a.view(), a.view(), semirings::plus_times{}, o).view());
  ASSERT_GT(want.size(), 10000u);
  for (const auto path : {detail::mxm_path::automatic, detail::mxm_path::dense,
                          detail::mxm_path::dense_global, detail::mxm_path::expanded}) {
    const auto got = detail::mxm_cuda(res, std::nullopt, std::nullopt, no_accumulator{},
                                      semirings::plus_times{}, a_dev.view(), a_dev.view(), o, path);
    ASSERT_EQ(host_entries(got), want) << "path " << int(path);
  }
  // Short rows through the sorted path.
  const auto s = random_csr<V, I>({.rows = 500, .cols = 400, .mean_degree = 6, .seed = 6});
  const auto s_dev = to_device(res, s.view());
  EXPECT_EQ(
      host_entries(mxm(res, s_dev.view(), s_dev.view(), semirings::plus_times{}, o)),
      entries_of(mxm(host_resources{}, s.view(), s.view(), semirings::plus_times{}, o).view()));
}

/// The masked dot product (triangle counting's C⟨L⟩ = L ⊕.⊗ Lᵀ) with values whose sums round.
TYPED_TEST(graphblas_cuda, masked_dot_product_gives_the_host_bytes)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  const cuda_resources res{};
  const auto a = random_csr<V, I>({.rows = 400, .cols = 300, .mean_degree = 40, .seed = 31});
  const auto m = random_csr<V, I>({.rows = 400, .cols = 400, .mean_degree = 30, .seed = 32});
  const auto ad = to_device(res, a.view()), md = to_device(res, m.view());
  for (const bool structural : {false, true}) {
    const descriptor o{.transpose_b = true, .structural_mask = structural};
    const auto want =
        entries_of(mxm(host_resources{}, std::nullopt, std::optional(m.view()), no_accumulator{},
                       semirings::plus_times{}, a.view(), a.view(), o)
                       .view());
    for (const auto path :
         {detail::mxm_path::automatic, detail::mxm_path::masked_dot, detail::mxm_path::sorted}) {
      const auto got =
          detail::mxm_cuda(res, std::nullopt, std::optional(md.view()), no_accumulator{},
                           semirings::plus_times{}, ad.view(), ad.view(), o, path);
      ASSERT_EQ(host_entries(got), want) << "path " << int(path) << " structural " << structural;
    }
  }
}

/// B much wider than the products: the expanded path, automatically; a mask on top.
TEST(graphblas_cuda_mxm, wide_b_takes_the_expanded_path)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = double;
  using I = std::int64_t;
  const cuda_resources res{};
  const auto a = random_csr<V, I>({.rows = 60, .cols = 3000, .mean_degree = 400, .seed = 7});
  const auto b = random_csr<V, I>({.rows = 3000,
                                   .cols = std::int64_t(1) << 22,
                                   .mean_degree = 12,
                                   .empty_col_fraction = 0.0,
                                   .seed = 8});
  const auto mask = random_csr<V, I>(
      {.rows = 60, .cols = std::int64_t(1) << 22, .mean_degree = 20000, .seed = 9});
  const auto ad = to_device(res, a.view()), bd = to_device(res, b.view());
  const auto md = to_device(res, mask.view());
  EXPECT_EQ(host_entries(mxm(res, ad.view(), bd.view(), semirings::plus_times{})),
            entries_of(mxm(host_resources{}, a.view(), b.view(), semirings::plus_times{}).view()));
  const descriptor o{.structural_mask = true};
  EXPECT_EQ(host_entries(mxm(res, std::nullopt, std::optional(md.view()), no_accumulator{},
                             semirings::plus_times{}, ad.view(), bd.view(), o)),
            entries_of(mxm(host_resources{}, std::nullopt, std::optional(mask.view()),
                           no_accumulator{}, semirings::plus_times{}, a.view(), b.view(), o)
                           .view()));
}

/// Long rows of a narrow B take the dense path with the row's array in shared memory; more rows
/// than the device runs blocks at once (a few thousand products a row over 1,000 columns: each
/// block takes several rows in turn, its flags cleared between them), with and without a mask.
TEST(graphblas_cuda_mxm, dense_rows_share_blocks)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = float;
  using I = std::int32_t;
  const cuda_resources res{};
  const auto a = random_csr<V, I>({.rows = 1000, .cols = 20, .mean_degree = 10, .seed = 21});
  const auto mask = random_csr<V, I>({.rows = 1000, .cols = 1000, .mean_degree = 300, .seed = 22});
  const auto ad = to_device(res, a.view()), md = to_device(res, mask.view());
  for (const bool complement : {false, true}) {
    const descriptor o{.transpose_b = true, .complement_mask = complement};
    const auto want =
        entries_of(mxm(host_resources{}, std::nullopt, std::optional(mask.view()), no_accumulator{},
                       semirings::plus_times{}, a.view(), a.view(), o)
                       .view());
    const auto got =
        detail::mxm_cuda(res, std::nullopt, std::optional(md.view()), no_accumulator{},
                         semirings::plus_times{}, ad.view(), ad.view(), o, detail::mxm_path::dense);
    ASSERT_EQ(host_entries(got), want) << "complement " << complement;
  }
  const descriptor o{.transpose_b = true};
  EXPECT_EQ(
      host_entries(mxm(res, ad.view(), ad.view(), semirings::plus_times{}, o)),
      entries_of(mxm(host_resources{}, a.view(), a.view(), semirings::plus_times{}, o).view()));
}

/// B too wide for a row's dense array in shared memory (40,000 columns of 9 bytes) yet narrow
/// against the rows' products: the dense path in global memory, automatically.
TEST(graphblas_cuda_mxm, wide_dense_rows_take_global_memory)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = double;
  using I = std::int64_t;
  const cuda_resources res{};
  const auto a = random_csr<V, I>({.rows = 300, .cols = 3000, .mean_degree = 100, .seed = 23});
  const auto b = random_csr<V, I>({.rows = 3000, .cols = 40000, .mean_degree = 150, .seed = 24});
  EXPECT_EQ(host_entries(mxm(res, to_device(res, a.view()).view(), to_device(res, b.view()).view(),
                             semirings::plus_times{})),
            entries_of(mxm(host_resources{}, a.view(), b.view(), semirings::plus_times{}).view()));
}

template <class V, class I, class Op, class Accum>
void ewise_sweep(const Op& op, const Accum& acc, const char* what)
{
  const auto run = [&](const auto& res, int kind, const sweep_case& k, const auto& a, const auto& b,
                       const auto& c, const auto& m) {
    return with_accum(k, acc, [&](const auto& accum) {
      if (kind == 0) {
        return ewise_add(res, k.c_of(c.view()), k.mask_of(m.view()), accum, op, a.view(), b.view(),
                         k.desc());
      }
      if (kind == 1) {
        return ewise_mult(res, k.c_of(c.view()), k.mask_of(m.view()), accum, op, a.view(), b.view(),
                          k.desc());
      }
      return ewise_union(res, k.c_of(c.view()), k.mask_of(m.view()), accum, op, a.view(), V(2),
                         b.view(), V(-1), k.desc());
    });
  };
  for (int kind = 0; kind < 3; ++kind) {
    sweep<V, I>(
        31, 0, 23, false, 4, false,
        [&](const sweep_case& k, const auto& a, const auto& b, const auto& c, const auto& m) {
          return run(host_resources{}, kind, k, a, b, c, m);
        },
        [&](const sweep_case& k, const auto& a, const auto& b, const auto& c, const auto& m) {
          return run(cuda_resources{}, kind, k, a, b, c, m);
        },
        std::string(what) + " kind " + std::to_string(kind));
  }
}

TYPED_TEST(graphblas_cuda, ewise_every_descriptor)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  ewise_sweep<V, I>(plus_monoid{}, plus_monoid{}, "plus");
  ewise_sweep<V, I>(minus_op{}, minus_op{}, "minus");
  ewise_sweep<V, I>(fuzzy_op{}, max_monoid{}, "fuzzy");
}

TYPED_TEST(graphblas_cuda, apply_select_transpose_every_descriptor)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = typename TypeParam::first_type;
  using I = typename TypeParam::second_type;
  // op(A) is 31 x 23 (A itself 23 x 31 with transpose_a); transpose's T is op(A)ᵀ, so its A is
  // taken the other way round.
  const auto unary = [&](const char* what, bool flip, const auto& fn) {
    const std::int64_t r = flip ? 23 : 31, c = flip ? 31 : 23;
    sweep<V, I>(
        31, 0, 23, false, 2, false,
        [&](const sweep_case& k, const auto&, const auto&, const auto& cm, const auto& m) {
          const auto a =
              k.transpose_a ? operand<V, I>(c, r, 15, false) : operand<V, I>(r, c, 15, false);
          return fn(host_resources{}, k, a.view(), cm.view(), m.view());
        },
        [&](const sweep_case& k, const auto&, const auto&, const auto& cm, const auto& m) {
          const cuda_resources res{};
          const auto a =
              k.transpose_a ? operand<V, I>(c, r, 15, false) : operand<V, I>(r, c, 15, false);
          const auto ad = to_device(res, a.view());
          return fn(res, k, ad.view(), cm.view(), m.view());
        },
        what);
  };
  unary("apply", false, [](const auto& res, const sweep_case& k, auto a, auto c, auto m) {
    return with_accum(k, minus_op{}, [&](const auto& accum) {
      return apply(res, k.c_of(c), k.mask_of(m), accum, negate_op{}, a, k.desc());
    });
  });
  unary("apply_index", false, [](const auto& res, const sweep_case& k, auto a, auto c, auto m) {
    return with_accum(k, plus_monoid{}, [&](const auto& accum) {
      return apply_index(res, k.c_of(c), k.mask_of(m), accum, index_op{}, a, k.desc());
    });
  });
  unary("select tril", false, [](const auto& res, const sweep_case& k, auto a, auto c, auto m) {
    return with_accum(k, plus_monoid{}, [&](const auto& accum) {
      return select(res, k.c_of(c), k.mask_of(m), accum, select_ops::tril{-1}, a, k.desc());
    });
  });
  unary("select value", false, [](const auto& res, const sweep_case& k, auto a, auto c, auto m) {
    return with_accum(k, minus_op{}, [&](const auto& accum) {
      return select(res, k.c_of(c), k.mask_of(m), accum, select_ops::value_gt{1.5}, a, k.desc());
    });
  });
  unary("select_top_k", false, [](const auto& res, const sweep_case& k, auto a, auto c, auto m) {
    return with_accum(k, plus_monoid{}, [&](const auto& accum) {
      return select_top_k(res, k.c_of(c), k.mask_of(m), accum, a, 3,
                          k.replace ? select_order::smallest : select_order::largest, k.desc());
    });
  });
  // Index lists with repeats, out of order; 31 rows and 23 columns, the sweep's shape.
  std::vector<std::int64_t> rows(31), cols(23);
  for (std::int64_t i = 0; i < 31; ++i) {
    rows[std::size_t(i)] = (i * i + 3) % 31;
  }
  for (std::int64_t j = 0; j < 23; ++j) {
    cols[std::size_t(j)] = (3 * j * j + 1) % 23;
  }
  for (const bool all_rows : {false, true}) {
    for (const bool all_cols : {false, true}) {
      const auto r = all_rows ? std::nullopt : std::optional(std::span<const std::int64_t>(rows));
      const auto cl = all_cols ? std::nullopt : std::optional(std::span<const std::int64_t>(cols));
      unary("extract", false, [&](const auto& res, const sweep_case& k, auto a, auto c, auto m) {
        return with_accum(k, minus_op{}, [&](const auto& accum) {
          return extract(res, k.c_of(c), k.mask_of(m), accum, a, r, cl, k.desc());
        });
      });
    }
  }
  unary("transpose", true, [](const auto& res, const sweep_case& k, auto a, auto c, auto m) {
    return with_accum(k, plus_monoid{}, [&](const auto& accum) {
      return transpose(res, k.c_of(c), k.mask_of(m), accum, a, k.desc());
    });
  });
}

/// The k-NN graph's follow-up on the GPU (spira/knn.hpp, src/knn/graph_cuda.cu): symmetrize and
/// fuzzy_union of a graph with unsorted rows equal the host's, bit for bit (a + b - ab rounds);
/// a column listed twice in a row is refused with the host's message.
TEST(graphblas_cuda_graphs, symmetrize_and_fuzzy_union_equal_the_host)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  const cuda_resources res{};
  auto g =
      random_csr<float, std::int64_t>({.rows = 400, .cols = 400, .mean_degree = 10, .seed = 71});
  for (std::int64_t i = 0; i < g.rows(); ++i) {  // strengths in (0, 1], rows in reverse order
    std::reverse(g.col_idx() + g.row_ptr()[i], g.col_idx() + g.row_ptr()[i + 1]);
    std::reverse(g.values() + g.row_ptr()[i], g.values() + g.row_ptr()[i + 1]);
  }
  for (std::int64_t p = 0; p < g.nnz(); ++p) {
    g.values()[p] = g.values()[p] / 2.0f;
  }
  const auto gd = to_device(res, g.view());
  EXPECT_EQ(host_entries(symmetrize(res, gd.view())), entries_of(symmetrize(g.view()).view()));
  EXPECT_EQ(host_entries(fuzzy_union(res, gd.view())), entries_of(fuzzy_union(g.view()).view()));
  const std::vector<offset_t> ptr{0, 3, 3, 3, 3};
  const std::vector<std::int64_t> cols{3, 1, 3};
  const std::vector<float> vals{0.5f, 0.25f, 0.5f};
  const csr_view<float, std::int64_t> twice{4, 4, 3, ptr.data(), cols.data(), vals.data()};
  const auto twice_d = to_device(res, twice);
  expect_throw_with<invalid_argument>([&] { (void)symmetrize(res, twice_d.view()); },
                                      "symmetrize: graph row 0 lists column 3 twice");
  expect_throw_with<invalid_argument>([&] { (void)fuzzy_union(res, g.view()); },
                                      "fuzzy_union: graph is in host memory");
}

TEST(graphblas_cuda_errors, operands_name_what_is_wrong)
{
  SPIRA_SKIP_UNLESS_AVAILABLE(cuda_resources);
  using V = float;
  using I = std::int32_t;
  const cuda_resources res{};
  const auto a = operand<V, I>(10, 8, 1, false);
  const auto b = operand<V, I>(9, 6, 2, false);
  const auto ad = to_device(res, a.view()), bd = to_device(res, b.view());
  expect_throw_with<invalid_argument>(
      [&] { (void)mxm(res, a.view(), bd.view(), semirings::plus_times{}); },
      "spira::mxm: A is in host memory");
  expect_throw_with<dimension_mismatch>(
      [&] { (void)mxm(res, ad.view(), bd.view(), semirings::plus_times{}); },
      "spira::mxm: A is 10 x 8 but B is 9 x 6 (inner dimensions differ)");
  const auto m = to_device(res, operand<V, I>(10, 7, 3, false).view());
  const auto b2 = to_device(res, operand<V, I>(8, 6, 4, false).view());
  expect_throw_with<dimension_mismatch>(
      [&] {
        (void)mxm(res, std::nullopt, std::optional(m.view()), no_accumulator{},
                  semirings::plus_times{}, ad.view(), b2.view());
      },
      "spira::mxm: mask is 10 x 7 but A B is 10 x 6");
  expect_throw_with<dimension_mismatch>(
      [&] {
        (void)ewise_add(res, std::nullopt, std::nullopt, no_accumulator{}, plus_monoid{}, ad.view(),
                        bd.view());
      },
      "spira::ewise_add: A is 10 x 8 but B is 9 x 6");
  // Not canonical: columns out of order in row 0.
  std::vector<offset_t> ptr{0, 2, 2, 2, 2};
  std::vector<I> cols{3, 1};
  std::vector<V> vals{1, 2};
  const csr_view<V, I> unsorted{4, 5, 2, ptr.data(), cols.data(), vals.data()};
  const auto ud = to_device(res, unsorted);
  expect_throw_with<invalid_argument>(
      [&] {
        (void)select(res, std::nullopt, std::nullopt, no_accumulator{}, select_ops::tril{0},
                     ud.view());
      },
      "spira::select: A");
  const std::vector<std::int64_t> far{0, 10};
  expect_throw_with<invalid_argument>(
      [&] {
        (void)extract(res, std::nullopt, std::nullopt, no_accumulator{}, ad.view(),
                      std::optional(std::span<const std::int64_t>(far)), std::nullopt);
      },
      "spira::extract: rows[1] = 10 is outside [0, 10)");
  // Vectors: an index outside the size, indices that do not increase (the host's messages).
  const std::vector<I> out_idx{1, 4, 12}, down_idx{1, 4, 3};
  const std::vector<V> three{1, 2, 3};
  for (const auto& [idx, text] :
       {std::pair{out_idx, "spira::mxv: u: index 12 (entry 2) is outside [0, 8)"},
        std::pair{down_idx, "spira::mxv: u: index 3 (entry 2) follows 4"}}) {
    sparse_vector<V, I> u(res, 8, 3);
    copy(u.indices(), memory_space::device, idx.data(), memory_space::host, 3, res);
    copy(u.values(), memory_space::device, three.data(), memory_space::host, 3, res);
    expect_throw_with<invalid_argument>(
        [&] { (void)mxv(res, ad.view(), u.view(), semirings::plus_times{}); }, text);
  }
  // A checked by the pull's own kernel (the host's messages), also in a row the mask leaves out.
  const auto device_vector = [&](std::int64_t size, const std::vector<I>& idx) {
    sparse_vector<V, I> v(res, size, std::int64_t(idx.size()));
    const std::vector<V> ones(idx.size(), V(1));
    copy(v.indices(), memory_space::device, idx.data(), memory_space::host, idx.size(), res);
    copy(v.values(), memory_space::device, ones.data(), memory_space::host, idx.size(), res);
    return v;
  };
  const auto u5 = device_vector(5, {0, 1, 2, 3, 4});
  const auto rows_1_2 = device_vector(4, {1, 2});
  const std::vector<offset_t> down_ptr{0, 2, 1, 2, 2};
  const std::vector<I> sorted{1, 3}, far_col{1, 7};
  const auto sorted_d =
      to_device(res, csr_view<V, I>{4, 5, 2, down_ptr.data(), sorted.data(), vals.data()});
  const auto far_d =
      to_device(res, csr_view<V, I>{4, 5, 2, ptr.data(), far_col.data(), vals.data()});
  for (const auto& [matrix, text] :
       {std::pair{ud.view(), "spira::mxv: A: row 0 is not canonical: column 1 follows column 3"},
        std::pair{
            sorted_d.view(),
            "spira::mxv: A: row pointers decrease at row 1 (row_ptr[1] = 2 > row_ptr[2] = 1)"},
        std::pair{far_d.view(),
                  "spira::mxv: A: column index 7 at row 0 (entry 1) is outside [0, 5)"}}) {
    expect_throw_with<invalid_argument>(
        [&] { (void)mxv(res, matrix, u5.view(), semirings::plus_times{}); }, text);
    expect_throw_with<invalid_argument>(
        [&] {
          (void)mxv(res, std::nullopt, std::optional(rows_1_2.view()), no_accumulator{},
                    semirings::plus_times{}, matrix, u5.view());
        },
        text);
  }
}

}  // namespace
}  // namespace spira::test
