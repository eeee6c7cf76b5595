// k-NN graph benchmark: full self-k-NN graphs through spira::knn_graph, in-process, on the CUDA or
// the host backend. Each (dataset, metric) is warmed up once on the first rows of the dataset (CUDA
// context, memory pool, kernels), then timed whole - the library call, inputs and result in host
// memory - up to --repeats times while the timed calls stay under --max-seconds (at least once);
// the median is reported.
//
// usage: bench_knn (--file PATH [--transpose] | --synthetic NAME [--synthetic-rows N])
//                  [--backend cuda|host] [--threads T] [--k K] [--metrics m1,m2,..]
//                  [--repeats N] [--max-seconds S] [--label NAME]
//                  [--memory-budget BYTES] [--query-tile R] [--index-tile R]
//                  [--algo automatic|fused|tiled] [--strategy automatic|intersection|...]
//                  [--save-matrix PATH.npz] [--save-graph PREFIX]
//   --file          any format spira::io::read_matrix reads (.mtx, .mtx.gz, edge lists, .npz, ...)
//   --transpose     use the transpose (pbmc3k ships genes x cells; the samples are the cells)
//   --synthetic     a Table 2 shape of bench/common/synthetic.hpp (seed 42); --synthetic-rows keeps
//                   its first N rows (the columns and the degree law of the full set stay)
//   --threads       host backend threads (0 = all cores)
//   --memory-budget, --query-tile, --index-tile: the knn_params overrides (0 = the library's
//   choice)
//   --algo, --strategy: knn_params::algo and knn_params::strategy (CUDA backend; default automatic)
//   --save-matrix   the benchmarked matrix (float32, int32, canonical CSR) as arrays data, indices,
//                   indptr and shape of an .npz, so that peers time exactly the same data
//   --save-graph    PREFIX-METRIC.npz with spira's indices and distances (for recall checks)
// Prints one JSON object per metric on stdout; a failure is reported in "error", not hidden.
#include "common/json_escape.hpp"
#include "common/split.hpp"
#include "common/synthetic.hpp"

#include <spira/io.hpp>
#include <spira/spira.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using spira::bench::json_string;

namespace {

using V = float;
using I = std::int32_t;
using clock_type = std::chrono::steady_clock;

using spira::bench::split;

template <class R>
spira::knn_result run(const R& res, const spira::csr_matrix<V, I>& m,
                      const spira::knn_params& params)
{
  return spira::knn_graph(res, m.view(), std::optional<spira::csr_view<V, I>>{}, params);
}

void save_matrix(const std::string& path, const spira::csr_matrix<V, I>& m)
{
  const std::vector<std::int64_t> shape{m.rows(), m.cols()};
  const std::vector<std::int64_t> indptr(m.row_ptr(), m.row_ptr() + m.rows() + 1);
  const std::vector<spira::io::npz_entry> entries{
      spira::io::npz_entry::of("data", std::span<const V>(m.values(), std::size_t(m.nnz()))),
      spira::io::npz_entry::of("indices", std::span<const I>(m.col_idx(), std::size_t(m.nnz()))),
      spira::io::npz_entry::of("indptr", std::span<const std::int64_t>(indptr)),
      spira::io::npz_entry::of("shape", std::span<const std::int64_t>(shape)),
  };
  spira::io::write_npz(path, entries);
}

}  // namespace

int main(int argc, char** argv)
{
  std::string file, synthetic, label, backend = "cuda", save_matrix_path, save_graph;
  bool transpose = false;
  std::int64_t synthetic_rows = 0, k = 15, query_tile = 0, index_tile = 0;
  std::size_t memory_budget = 0;
  spira::knn_algo algo = spira::knn_algo::automatic;
  spira::pairwise_strategy strategy = spira::pairwise_strategy::automatic;
  int repeats = 5, threads = 0;
  double max_seconds = 10;
  std::vector<std::string> metrics{"cosine", "manhattan"};
  // Bad values (a number that does not parse, an unknown metric, algorithm or strategy) end here
  // with the library's message, not in std::terminate.
  try {
    for (int a = 1; a < argc; ++a) {
      const std::string arg = argv[a];
      auto next = [&]() -> std::string {
        if (a + 1 >= argc) {
          std::fprintf(stderr, "bench_knn: %s needs a value\n", arg.c_str());
          std::exit(2);
        }
        return argv[++a];
      };
      if (arg == "--file") {
        file = next();
      } else if (arg == "--transpose") {
        transpose = true;
      } else if (arg == "--synthetic") {
        synthetic = next();
      } else if (arg == "--synthetic-rows") {
        synthetic_rows = std::stoll(next());
      } else if (arg == "--backend") {
        backend = next();
      } else if (arg == "--threads") {
        threads = std::stoi(next());
      } else if (arg == "--k") {
        k = std::stoll(next());
      } else if (arg == "--metrics") {
        metrics = split(next());
      } else if (arg == "--repeats") {
        repeats = std::max(1, std::stoi(next()));
      } else if (arg == "--max-seconds") {
        max_seconds = std::stod(next());
      } else if (arg == "--label") {
        label = next();
      } else if (arg == "--memory-budget") {
        memory_budget = std::stoull(next());
      } else if (arg == "--query-tile") {
        query_tile = std::stoll(next());
      } else if (arg == "--index-tile") {
        index_tile = std::stoll(next());
      } else if (arg == "--algo") {
        algo = spira::knn_algo_from_string(next());
      } else if (arg == "--strategy") {
        strategy = spira::pairwise_strategy_from_string(next());
      } else if (arg == "--save-matrix") {
        save_matrix_path = next();
      } else if (arg == "--save-graph") {
        save_graph = next();
      } else {
        std::fprintf(stderr, "bench_knn: unknown argument %s (see the header comment)\n",
                     arg.c_str());
        return 2;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_knn: bad argument value: %s\n", e.what());
    return 2;
  }
  if (file.empty() == synthetic.empty()) {
    std::fprintf(stderr, "bench_knn: give exactly one of --file and --synthetic\n");
    return 2;
  }
  if (backend != "cuda" && backend != "host") {
    std::fprintf(stderr, "bench_knn: --backend must be cuda or host, got '%s'\n", backend.c_str());
    return 2;
  }
  spira::csr_matrix<V, I> m;
  double load_s = 0;
  try {
    const auto t0 = clock_type::now();
    if (!file.empty()) {
      m = spira::io::read_matrix<V, I>(file);
      if (transpose) {
        m = spira::transpose(spira::host_resources{}, m.view());
      }
      if (label.empty()) {
        label = file;
      }
    } else {
      m = spira::bench::make_synthetic<V, I>(spira::bench::table2_shape(synthetic), synthetic_rows,
                                             42);
      if (label.empty()) {
        label = "synthetic-" + synthetic;
      }
    }
    load_s = std::chrono::duration<double>(clock_type::now() - t0).count();
    if (!save_matrix_path.empty()) {
      save_matrix(save_matrix_path, m);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_knn: %s\n", e.what());
    return 1;
  }
  const spira::host_resources host{.threads = threads};
  const spira::cuda_resources cuda{};
  // Warm-up input: the first rows (the whole matrix when it is small).
  std::vector<spira::offset_t> ptr;
  const std::int64_t warm_rows = std::min<std::int64_t>(m.rows(), 2048);
  const auto warm_view = spira::row_slice(m.view(), 0, warm_rows, ptr);
  const auto warm = spira::make_csr<V, I>(
      spira::host_resources{}, warm_view.rows, warm_view.cols,
      std::span<const spira::offset_t>(warm_view.row_ptr, std::size_t(warm_rows) + 1),
      std::span<const I>(warm_view.col_idx, std::size_t(warm_view.nnz)),
      std::span<const V>(warm_view.values, std::size_t(warm_view.nnz)), spira::csr_check::valid);

  for (const auto& mname : metrics) {
    std::string error;
    std::vector<double> times_ms;
    try {
      const spira::metric mt = spira::metric_from_string(mname);
      spira::knn_params params{.k = k,
                               .metric = mt,
                               .memory_budget = memory_budget,
                               .query_tile = query_tile,
                               .index_tile = index_tile};
      params.algo = algo;
      params.strategy = strategy;
      spira::knn_params warm_params{.k = std::min(k, warm.rows()), .metric = mt};
      std::optional<spira::knn_result> g;
      auto call = [&](const spira::csr_matrix<V, I>& x, const spira::knn_params& p) {
        return backend == "cuda" ? run(cuda, x, p) : run(host, x, p);
      };
      (void)call(warm, warm_params);
      double total = 0;
      for (int r = 0; r < repeats && (r == 0 || total < max_seconds); ++r) {
        g.reset();  // the previous graph is not kept alive during the next call
        const auto t0 = clock_type::now();
        g = call(m, params);
        const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
        total += s;
        times_ms.push_back(1e3 * s);
      }
      if (!save_graph.empty()) {
        const std::vector<spira::io::npz_entry> entries{
            spira::io::npz_entry::of("indices",
                                     spira::dense_view<const std::int64_t>(g->indices.view())),
            spira::io::npz_entry::of("distances",
                                     spira::dense_view<const float>(g->distances.view())),
        };
        spira::io::write_npz(save_graph + "-" + mname + ".npz", entries);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::vector<double> sorted = times_ms;
    std::sort(sorted.begin(), sorted.end());
    std::string times = "[";
    for (std::size_t t = 0; t < times_ms.size(); ++t) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.3f", t ? ", " : "", times_ms[t]);
      times += buf;
    }
    times += "]";
    char median[32] = "null", fastest[32] = "null";
    if (!sorted.empty()) {
      std::snprintf(median, sizeof median, "%.3f", sorted[sorted.size() / 2]);
      std::snprintf(fastest, sizeof fastest, "%.3f", sorted.front());
    }
    std::printf(
        "{\"tool\": \"spira\", \"backend\": \"%s\", \"threads\": %d, \"dataset\": %s, "
        "\"rows\": %lld, \"cols\": %lld, \"nnz\": %lld, \"k\": %lld, \"metric\": %s, "
        "\"median_ms\": %s, \"min_ms\": %s, \"times_ms\": %s, \"load_s\": %.3f, "
        "\"memory_budget\": %llu, \"query_tile\": %lld, \"index_tile\": %lld, "
        "\"algo\": \"%s\", \"strategy\": \"%s\", \"error\": %s}\n",
        backend.c_str(), backend == "host" ? host.num_threads() : 0, json_string(label).c_str(),
        (long long)m.rows(), (long long)m.cols(), (long long)m.nnz(), (long long)k,
        json_string(mname).c_str(), median, fastest, times.c_str(), load_s,
        (unsigned long long)memory_budget, (long long)query_tile, (long long)index_tile,
        spira::to_string(algo), spira::to_string(strategy),
        error.empty() ? "null" : json_string(error).c_str());
    std::fflush(stdout);
  }
  return 0;
}
