// GraphBLAS operations on the host: spira against SuiteSparse:GraphBLAS on the same number of
// threads and the same data, in one process. Cases (--cases, default all three):
//
//   aat        C = A ⊕.⊗ Aᵀ with plus_times: the sparse product of the rows with each other
//   triangles  the triangles of the undirected graph of A's pattern: C⟨L⟩ = L ⊕.⊗ Lᵀ with plus_pair
//              and L (the strictly lower triangle) as a structural mask, then the sum of C
//   bfs        breadth-first levels from vertex 0 of the same undirected graph: each frontier is
//              the last one ⊕.⊗ A with lor_land under the complement of the visited set (vxm)
//
// Each case runs once to warm up, then --repeats times per tool (alternating); the results of
// the two tools are compared (aat: the entries' count and sum; triangles: the count; bfs: every
// vertex's level). Prints one JSON line per case with the medians and the fastest times in ms.
//
// usage: bench_graphblas --file PATH [--transpose] [--label NAME] [--threads N] [--repeats 5]
//                        [--cases aat,triangles,bfs]
#include "common/alternate.hpp"
#include "common/json_escape.hpp"
#include "common/split.hpp"

#include <spira/convert.hpp>
#include <spira/graphblas_interop.hpp>
#include <spira/io.hpp>
#include <spira/mxm.hpp>
#include <spira/mxv.hpp>
#include <spira/semirings/graphblas.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using V = float;
using I = std::int32_t;
using clock_type = std::chrono::steady_clock;

void grb(GrB_Info info, const char* what)
{
  spira::detail::grb_check(info, what);
}

void report(const std::string& label, const std::string& name, const spira::csr_matrix<V, I>& a,
            int threads, const spira::bench::timing& t, bool same, const std::string& extra)
{
  const auto fastest = [](const std::vector<double>& v) {
    return *std::min_element(v.begin(), v.end());
  };
  std::printf(
      "{\"dataset\": %s, \"case\": \"%s\", \"rows\": %lld, \"cols\": %lld, \"nnz\": %lld, "
      "\"threads\": %d, \"spira_ms\": %.3f, \"graphblas_ms\": %.3f, \"spira_min_ms\": %.3f, "
      "\"graphblas_min_ms\": %.3f, \"same\": %s%s}\n",
      spira::bench::json_string(label).c_str(), name.c_str(), (long long)a.rows(),
      (long long)a.cols(), (long long)a.nnz(), threads, spira::bench::median(t.mine_ms),
      spira::bench::median(t.theirs_ms), fastest(t.mine_ms), fastest(t.theirs_ms),
      same ? "true" : "false", extra.c_str());
  std::fflush(stdout);
}

double sum_of(const spira::csr_matrix<V, I>& c)
{
  double s = 0;
  for (std::int64_t p = 0; p < c.nnz(); ++p) {
    s += c.values()[p];
  }
  return s;
}

void case_aat(const std::string& label, const spira::csr_matrix<V, I>& a, int threads, int repeats)
{
  const spira::host_resources res{.threads = threads};
  GrB_Matrix ga = spira::to_graphblas(a.view());
  GrB_Matrix gc = nullptr;
  GrB_Descriptor d = nullptr;
  grb(GrB_Descriptor_new(&d), "GrB_Descriptor_new");
  grb(GrB_Descriptor_set(d, GrB_INP1, GrB_TRAN), "GrB_Descriptor_set");
  spira::csr_matrix<V, I> c;
  const auto t = spira::bench::alternate(
      repeats,
      [&] {
        c = spira::mxm(res, a.view(), a.view(), spira::semirings::plus_times{},
                       {.transpose_b = true});
      },
      [&] {
        GrB_Matrix_free(&gc);
        grb(GrB_Matrix_new(&gc, GrB_FP32, GrB_Index(a.rows()), GrB_Index(a.rows())), "new");
        grb(GrB_mxm(gc, nullptr, nullptr, GrB_PLUS_TIMES_SEMIRING_FP32, ga, ga, d), "GrB_mxm");
        GrB_Index nvals = 0;
        grb(GrB_Matrix_nvals(&nvals, gc), "nvals");  // finishes the pending work
      });
  GrB_Index nvals = 0;
  grb(GrB_Matrix_nvals(&nvals, gc), "nvals");
  double theirs = 0;
  grb(GrB_Matrix_reduce_FP64(&theirs, nullptr, GrB_PLUS_MONOID_FP64, gc, nullptr), "reduce");
  const double mine = sum_of(c);
  const bool same = GrB_Index(c.nnz()) == nvals &&
                    std::abs(mine - theirs) <= 1e-4 * std::max(1.0, std::abs(theirs));
  std::ostringstream extra;
  extra << ", \"result_nnz\": " << c.nnz();
  report(label, "aat", a, threads, t, same, extra.str());
  GrB_Matrix_free(&ga);
  GrB_Matrix_free(&gc);
  GrB_Descriptor_free(&d);
}

void case_triangles(const std::string& label, const spira::csr_matrix<V, I>& a, int threads,
                    int repeats)
{
  const spira::host_resources res{.threads = threads};
  const auto l = spira::bench::lower_pattern(a);
  GrB_Matrix gl = spira::to_graphblas(l.view());
  GrB_Matrix gc = nullptr;
  GrB_Descriptor d = nullptr;
  grb(GrB_Descriptor_new(&d), "GrB_Descriptor_new");
  grb(GrB_Descriptor_set(d, GrB_INP1, GrB_TRAN), "GrB_Descriptor_set");
  grb(GrB_Descriptor_set(d, GrB_MASK, GrB_STRUCTURE), "GrB_Descriptor_set");
  double mine = 0, theirs = 0;
  const spira::descriptor o{.transpose_b = true, .structural_mask = true};
  const auto t = spira::bench::alternate(
      repeats,
      [&] {
        const auto c =
            spira::mxm(res, std::nullopt, std::optional(l.view()), spira::no_accumulator{},
                       spira::semirings::plus_pair{}, l.view(), l.view(), o);
        mine = sum_of(c);
      },
      [&] {
        GrB_Matrix_free(&gc);
        grb(GrB_Matrix_new(&gc, GrB_FP64, GrB_Index(l.rows()), GrB_Index(l.rows())), "new");
        grb(GrB_mxm(gc, gl, nullptr, GxB_PLUS_PAIR_FP64, gl, gl, d), "GrB_mxm");
        grb(GrB_Matrix_reduce_FP64(&theirs, nullptr, GrB_PLUS_MONOID_FP64, gc, nullptr), "reduce");
      });
  std::ostringstream extra;
  extra << ", \"triangles\": " << std::int64_t(mine);
  report(label, "triangles", a, threads, t, mine == theirs, extra.str());
  GrB_Matrix_free(&gl);
  GrB_Matrix_free(&gc);
  GrB_Descriptor_free(&d);
}

void case_bfs(const std::string& label, const spira::csr_matrix<V, I>& a, int threads, int repeats)
{
  const spira::host_resources res{.threads = threads};
  const auto g = spira::bench::graph_pattern(a, false);
  const std::int64_t n = g.rows();
  GrB_Matrix gg = spira::to_graphblas(g.view());
  std::vector<std::int64_t> mine(static_cast<std::size_t>(n), -1), theirs = mine;
  const std::vector<I> source{0};
  const std::vector<V> one{1};
  const spira::descriptor unvisited{
      .structural_mask = true, .complement_mask = true, .replace = true};
  GrB_Descriptor d = nullptr;
  grb(GrB_Descriptor_new(&d), "GrB_Descriptor_new");
  grb(GrB_Descriptor_set(d, GrB_MASK, GrB_STRUCTURE), "set");
  grb(GrB_Descriptor_set(d, GrB_MASK, GrB_COMP), "set");
  grb(GrB_Descriptor_set(d, GrB_OUTP, GrB_REPLACE), "set");
  const auto t = spira::bench::alternate(
      repeats,
      [&] {
        std::fill(mine.begin(), mine.end(), -1);
        mine[0] = 0;
        auto frontier = spira::make_sparse_vector<V, I>(res, n, source, one);
        std::vector<I> seen{0};
        for (std::int64_t depth = 1; frontier.nnz() > 0; ++depth) {
          const auto visited =
              spira::make_sparse_vector<V, I>(res, n, seen, std::vector<V>(seen.size(), V(1)));
          frontier =
              spira::vxm(res, std::nullopt, std::optional(visited.view()), spira::no_accumulator{},
                         spira::semirings::lor_land{}, frontier.view(), g.view(), unvisited);
          for (std::int64_t p = 0; p < frontier.nnz(); ++p) {
            mine[std::size_t(frontier.indices()[p])] = depth;
          }
          std::vector<I> merged(seen.size() + std::size_t(frontier.nnz()));
          std::merge(seen.begin(), seen.end(), frontier.indices(),
                     frontier.indices() + frontier.nnz(), merged.begin());
          seen.swap(merged);
        }
      },
      [&] {
        // The same steps: q = q ⊕.⊗ G under ¬visited, then visited ∪= q (GrB_assign with q as
        // mask).
        std::fill(theirs.begin(), theirs.end(), -1);
        GrB_Vector q = nullptr, visited = nullptr;
        grb(GrB_Vector_new(&q, GrB_BOOL, GrB_Index(n)), "new");
        grb(GrB_Vector_new(&visited, GrB_BOOL, GrB_Index(n)), "new");
        grb(GrB_Vector_setElement_BOOL(q, true, 0), "set");
        grb(GrB_Vector_setElement_BOOL(visited, true, 0), "set");
        theirs[0] = 0;
        GrB_Index nq = 1;
        std::vector<GrB_Index> idx(static_cast<std::size_t>(n));
        for (std::int64_t depth = 1; nq > 0; ++depth) {
          grb(GrB_vxm(q, visited, nullptr, GrB_LOR_LAND_SEMIRING_BOOL, q, gg, d), "GrB_vxm");
          grb(GrB_Vector_nvals(&nq, q), "nvals");
          GrB_Index got = nq;
          grb(GrB_Vector_extractTuples_BOOL(idx.data(), nullptr, &got, q), "extract");
          for (GrB_Index p = 0; p < got; ++p) {
            theirs[std::size_t(idx[p])] = depth;
          }
          grb(GrB_Vector_assign_BOOL(visited, q, nullptr, true, GrB_ALL, GrB_Index(n), nullptr),
              "assign");
        }
        GrB_Vector_free(&q);
        GrB_Vector_free(&visited);
      });
  const std::int64_t levels = *std::max_element(mine.begin(), mine.end());
  const auto reached = std::count_if(mine.begin(), mine.end(), [](auto x) { return x >= 0; });
  std::ostringstream extra;
  extra << ", \"levels\": " << levels << ", \"reached\": " << reached;
  report(label, "bfs", a, threads, t, mine == theirs, extra.str());
  GrB_Matrix_free(&gg);
  GrB_Descriptor_free(&d);
}

using spira::bench::split;

}  // namespace

int main(int argc, char** argv)
{
  std::string file, label, cases = "aat,triangles,bfs";
  bool transpose = false;
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  int repeats = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_graphblas: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--file") {
      file = next();
    } else if (arg == "--transpose") {
      transpose = true;
    } else if (arg == "--label") {
      label = next();
    } else if (arg == "--threads") {
      threads = std::stoi(next());
    } else if (arg == "--repeats") {
      repeats = std::stoi(next());
    } else if (arg == "--cases") {
      cases = next();
    } else {
      std::fprintf(stderr, "bench_graphblas: unknown argument %s (see the header comment)\n",
                   arg.c_str());
      return 2;
    }
  }
  if (file.empty() || repeats < 1 || threads < 1) {
    std::fprintf(stderr, "bench_graphblas: --file is required; --repeats and --threads >= 1\n");
    return 2;
  }
  try {
    auto a = spira::io::read_matrix<V, I>(file);
    if (transpose) {
      a = spira::transpose(spira::host_resources{}, a.view());
    }
    if (label.empty()) {
      label = file;
    }
    grb(GrB_init(GrB_NONBLOCKING), "GrB_init");
    grb(GxB_Global_Option_set_INT32(GxB_GLOBAL_NTHREADS, threads), "GxB_NTHREADS");
    for (const auto& c : split(cases)) {
      const bool square = a.rows() == a.cols();
      if (c == "aat") {
        case_aat(label, a, threads, repeats);
      } else if ((c == "triangles" || c == "bfs") && !square) {
        std::fprintf(stderr, "bench_graphblas: %s needs a square matrix (a graph)\n", c.c_str());
      } else if (c == "triangles") {
        case_triangles(label, a, threads, repeats);
      } else if (c == "bfs") {
        case_bfs(label, a, threads, repeats);
      } else {
        std::fprintf(stderr, "bench_graphblas: unknown case %s\n", c.c_str());
        return 2;
      }
    }
    GrB_finalize();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_graphblas: %s\n", e.what());
    return 1;
  }
  return 0;
}
