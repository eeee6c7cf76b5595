// symmetrize and fuzzy_union of a graph in device memory (spira/knn.hpp): the same compositions
// of the element-wise operations as on the host (knn.cpp), with the CUDA operations of
// spira/cuda/graphblas.cuh, and the same results, bit for bit.
#include <spira/convert.hpp>
#include <spira/cuda/device.cuh>
#include <spira/cuda/graphblas.cuh>
#include <spira/knn.hpp>

#include <string>

namespace spira {

namespace {

/// a + b - ab, rounded after each operation as the host computes it (never fused).
struct fuzzy_op {
  SPIRA_HD double operator()(double a, double b) const
  {
#if defined(__CUDA_ARCH__)
    return __dsub_rn(__dadd_rn(a, b), __dmul_rn(a, b));
#else
    return a + b - a * b;
#endif
  }
};

/// g square, valid, in device memory, each row's columns sorted: a column listed twice in a row is
/// an error, named as the host names it (its check runs on a host copy in that case only).
csr_matrix<float, std::int64_t> square_graph(const cuda_resources& res,
                                             csr_view<float, std::int64_t> g, const char* op)
{
  detail::expects(g.rows == g.cols, op, ": the graph must be square, got ", g.rows, " x ", g.cols);
  detail::require_device_space(g.space, op, "graph");
  validate(res, g, csr_check::valid, (std::string(op) + ": graph").c_str());
  auto sorted = canonicalize(res, g);
  if (sorted.nnz() != g.nnz) {  // duplicates were summed: the host's check says where
    const auto host = to_host(g, res);
    (void)(std::string(op) == "symmetrize" ? symmetrize(host.view()) : fuzzy_union(host.view()));
    detail::expects(false, op, ": graph has a column listed twice in a row");
  }
  return sorted;
}

}  // namespace

csr_matrix<float, std::int64_t> symmetrize(const cuda_resources& res,
                                           csr_view<float, std::int64_t> input)
{
  const detail::device_guard guard(res.device);
  const auto g = square_graph(res, input, "symmetrize");
  return ewise_add(res, std::nullopt, std::nullopt, no_accumulator{}, max_monoid{}, g.view(),
                   g.view(), descriptor{.transpose_b = true});
}

csr_matrix<float, std::int64_t> fuzzy_union(const cuda_resources& res,
                                            csr_view<float, std::int64_t> input)
{
  const detail::device_guard guard(res.device);
  const auto g = square_graph(res, input, "fuzzy_union");
  return ewise_union(res, std::nullopt, std::nullopt, no_accumulator{}, fuzzy_op{}, g.view(), 0.0f,
                     g.view(), 0.0f, descriptor{.transpose_b = true});
}

}  // namespace spira
