// Host pairwise-distance benchmark: spira's host engine against SuiteSparse:GraphBLAS (cosine as a
// plus_times mxm followed by the norm expansion into a dense matrix), both on the same threads.
// scikit-learn is timed by the Python driver (bench/pairwise/host_pairwise.py) on the same input.
//
// usage: bench_host_pairwise FILE --metric cosine|manhattan [--rows R] [--threads T]
//                            [--repeats N] [--transpose] [--sample-out PREFIX]
// Prints one JSON object: median seconds of each tool, the shapes, and the largest difference
// between spira and GraphBLAS. --sample-out writes the first 64 rows of spira's result to
// PREFIX.npy and the row indices used to PREFIX.rows.npy for the driver's cross-check.
#include <spira/spira.hpp>

extern "C" {  // GraphBLAS.h 7.4 has no C++ linkage block of its own
#include <GraphBLAS.h>
}

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using matrix = spira::csr_matrix<float, std::int32_t>;

#define GRB_TRY(call)                                                        \
  do {                                                                       \
    GrB_Info info_ = (call);                                                 \
    if (info_ != GrB_SUCCESS) {                                              \
      std::fprintf(stderr, "GraphBLAS error %d in %s\n", int(info_), #call); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

template <class F>
double median_seconds(int repeats, F&& f)
{
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = clock_type::now();
    f();
    t.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

GrB_Matrix to_graphblas(const matrix& m)
{
  std::vector<GrB_Index> p(m.row_ptr(), m.row_ptr() + m.rows() + 1);
  std::vector<GrB_Index> j(m.col_idx(), m.col_idx() + m.nnz());
  GrB_Matrix g = nullptr;
  GRB_TRY(GrB_Matrix_import_FP32(&g, GrB_FP32, m.rows(), m.cols(), p.data(), j.data(), m.values(),
                                 p.size(), j.size(), m.nnz(), GrB_CSR_FORMAT));
  return g;
}

/// cosine through GraphBLAS: dots = A * B^T (plus_times), then 1 - dot / (|a| |b|) for every pair.
void graphblas_cosine(GrB_Matrix a, GrB_Matrix b, const std::vector<float>& na,
                      const std::vector<float>& nb, std::vector<float>& out)
{
  GrB_Index ra = 0;
  GrB_Index rb = 0;
  GrB_Matrix_nrows(&ra, a);
  GrB_Matrix_nrows(&rb, b);
  GrB_Matrix c = nullptr;
  GRB_TRY(GrB_Matrix_new(&c, GrB_FP32, ra, rb));
  GRB_TRY(GrB_mxm(c, nullptr, nullptr, GrB_PLUS_TIMES_SEMIRING_FP32, a, b, GrB_DESC_T1));
  GrB_Index nvals = 0;
  GRB_TRY(GrB_Matrix_nvals(&nvals, c));
  std::vector<GrB_Index> ci(nvals);
  std::vector<GrB_Index> cj(nvals);
  std::vector<float> cx(nvals);
  GRB_TRY(GrB_Matrix_extractTuples_FP32(ci.data(), cj.data(), cx.data(), &nvals, c));
  // Expansion: pairs without a common column have dot 0.
  out.assign(ra * rb, 0.0f);
#pragma omp parallel for schedule(static)
  for (GrB_Index i = 0; i < ra; ++i) {
    for (GrB_Index j = 0; j < rb; ++j) {
      out[i * rb + j] = (na[i] == 0 && nb[j] == 0) ? 0.0f : 1.0f;  // spira's all-zero-row rule
    }
  }
#pragma omp parallel for schedule(static)
  for (GrB_Index e = 0; e < nvals; ++e) {
    const float d = 1.0f - cx[e] / (na[ci[e]] * nb[cj[e]]);
    out[ci[e] * rb + cj[e]] = std::clamp(d, 0.0f, 2.0f);
  }
  GrB_Matrix_free(&c);
}

std::vector<float> row_norms(const matrix& m)
{
  std::vector<float> n(m.rows());
  for (std::int64_t i = 0; i < m.rows(); ++i) {
    double s = 0;
    for (auto k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) {
      s += double(m.values()[k]) * m.values()[k];
    }
    n[i] = float(std::sqrt(s));
  }
  return n;
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s FILE --metric M [--rows R] [--threads T] [--repeats N] "
                 "[--transpose] [--sample-out PREFIX]\n",
                 argv[0]);
    return 2;
  }
  std::string path = argv[1];
  std::string metric_name = "cosine";
  std::string sample_out;
  std::int64_t rows = 0;
  int threads = 0;
  int repeats = 3;
  bool transpose_input = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return std::string(i + 1 < argc ? argv[++i] : ""); };
    if (a == "--metric") {
      metric_name = next();
    } else if (a == "--rows") {
      rows = std::stoll(next());
    } else if (a == "--threads") {
      threads = std::stoi(next());
    } else if (a == "--repeats") {
      repeats = std::stoi(next());
    } else if (a == "--transpose") {
      transpose_input = true;
    } else if (a == "--sample-out") {
      sample_out = next();
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  const spira::host_resources res{.threads = threads};
  matrix b = spira::io::read_matrix<float, std::int32_t>(path);
  if (transpose_input) {
    b = spira::transpose(res, b.view());
  }
  const std::int64_t ra = rows > 0 ? std::min(rows, b.rows()) : b.rows();
  // A = the first ra rows of B (a view; row pointers start at 0 already).
  const spira::csr_view<float, std::int32_t> av{
      ra,          b.cols(),   b.row_ptr()[ra],          b.row_ptr(),
      b.col_idx(), b.values(), spira::memory_space::host};
  const spira::metric metric = spira::metric_from_string(metric_name);

  spira::dense_matrix<float> out(res, ra, b.rows());
  const double spira_s = median_seconds(repeats, [&] {
    spira::pairwise_distance(res, av, b.view(), out.view(), {.metric = metric});
  });

  double graphblas_s = -1;
  double max_diff = -1;
  if (metric == spira::metric::cosine) {
    GRB_TRY(GrB_init(GrB_NONBLOCKING));
    GRB_TRY(GxB_Global_Option_set(GxB_GLOBAL_NTHREADS, res.num_threads()));
    matrix a_copy = spira::make_csr<float, std::int32_t>(
        res, ra, b.cols(), {b.row_ptr(), std::size_t(ra) + 1}, {b.col_idx(), std::size_t(av.nnz)},
        {b.values(), std::size_t(av.nnz)});
    GrB_Matrix ga = to_graphblas(a_copy);
    GrB_Matrix gb = to_graphblas(b);
    std::vector<float> gout;
    graphblas_s = median_seconds(repeats, [&] {
      const auto na = row_norms(a_copy);  // the norms are part of the expansion's cost
      const auto nb = row_norms(b);
      graphblas_cosine(ga, gb, na, nb, gout);
    });
    max_diff = 0;
    for (std::size_t e = 0; e < gout.size(); ++e) {
      max_diff = std::max(max_diff, double(std::fabs(gout[e] - out.data()[e])));
    }
    GrB_Matrix_free(&ga);
    GrB_Matrix_free(&gb);
    GrB_finalize();
  }
  if (!sample_out.empty()) {
    const std::int64_t s = std::min<std::int64_t>(64, ra);
    const spira::dense_view<const float> head{s, b.rows(), b.rows(), out.data(),
                                              spira::memory_space::host};
    spira::io::write_npy(sample_out + ".npy", head);
  }
  std::printf(
      "{\"rows_a\": %lld, \"rows_b\": %lld, \"cols\": %lld, \"nnz_b\": %lld, "
      "\"threads\": %d, \"spira_s\": %.6f, \"graphblas_s\": %.6f, "
      "\"max_abs_diff_vs_graphblas\": %.3g}\n",
      (long long)ra, (long long)b.rows(), (long long)b.cols(), (long long)b.nnz(),
      res.num_threads(), spira_s, graphblas_s, max_diff);
  return 0;
}
