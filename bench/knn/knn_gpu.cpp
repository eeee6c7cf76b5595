// k-NN graph benchmark: full self-k-NN graphs through spira::knn_graph, in-process, on the CUDA or
// the host backend. Each (dataset, metric) is warmed up once on the first rows of the dataset (CUDA
// context, memory pool, kernels), then timed whole - the library call, inputs and result in host
// memory - up to --repeats times while the timed calls stay under --max-seconds (at least once);
// the median is reported. With --resident (CUDA) the same is then timed device-resident.
//
// usage: bench_knn (--file PATH [--transpose] | --synthetic NAME [--synthetic-rows N])
//                  [--backend cuda|host] [--threads T] [--k K] [--metrics m1,m2,..]
//                  [--repeats N] [--max-seconds S] [--label NAME] [--resident]
//                  [--memory-budget BYTES] [--query-tile R] [--index-tile R]
//                  [--algo automatic|fused|tiled] [--strategy automatic|intersection|...]
//                  [--save-matrix PATH.npz] [--save-graph PREFIX]
//   --file          any format spira::io::read_matrix reads (.mtx, .mtx.gz, edge lists, .npz, ...)
//   --transpose     use the transpose (pbmc3k ships genes x cells; the samples are the cells)
//   --synthetic     a Table 2 shape of bench/common/synthetic.hpp (seed 42); --synthetic-rows keeps
//                   its first N rows (the columns and the degree law of the full set stay); more
//                   rows than the full set are more rows of the same distribution (e.g. sec-edgar
//                   --synthetic-rows 2000000), the first rows unchanged
//   --resident      CUDA backend only (with --backend host: an argument error, exit 2): after the
//                   host-in/host-out calls, the CSR is copied to device memory once (not timed) and
//                   knn_graph is timed from the device CSR to the graph in device memory, up to
//                   the call's completion (spira::synchronize): "resident_median_ms" etc.
//                   beside "median_ms". The device copy lives only during those calls, so the
//                   host-in calls see the same free memory (their default budget) as without
//                   --resident.
//   --threads       host backend threads (0 = all cores)
//   --memory-budget, --query-tile, --index-tile: the knn_params overrides (0 = the library's
//   choice)
//   --algo, --strategy: knn_params::algo and knn_params::strategy (CUDA backend; default automatic)
//   --save-matrix   the benchmarked matrix (float32, int32, canonical CSR) as arrays data, indices,
//                   indptr and shape of an .npz, so that peers time exactly the same data
//   --save-graph    PREFIX-METRIC.npz with spira's indices and distances (for recall checks)
// Peak device memory (CUDA backend, both kinds of calls): the high-water mark of the bytes in use
// in the device's current stream-ordered memory pool - where every allocation of spira with a
// default cuda_resources comes from: operands copied or resident, workspaces, the graph - reset
// before each timed call ("peak_device_bytes", "resident_peak_device_bytes": the largest over the
// calls; the resident figure includes the device CSR, "resident_input_bytes"). Not counted: the
// CUDA context and the cuBLAS handle's workspace (dense strategy), which are not allocated per
// call. "device_free_bytes": free device memory before the first device-resident call (the CSR
// already copied); the default memory budget is half of it ("budget_bytes", or --memory-budget).
// Prints one JSON object per metric on stdout; a failure is reported in "error" (a failure of the
// device-resident calls in "resident_error", beside the host-in/host-out result), not hidden.
#include "common/json_escape.hpp"
#include "common/split.hpp"
#include "common/synthetic.hpp"

#include <spira/detail/knn_policy.hpp>
#include <spira/io.hpp>
#include <spira/spira.hpp>

#if defined(SPIRA_HAS_CUDA)
#include <cuda_runtime_api.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
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

/// The high-water mark of the bytes in use in the current memory pool of `device` (the pool of
/// spira's stream-ordered allocations with a default cuda_resources): reset() starts a window,
/// peak() is the largest use since then (at least the use at the reset). -1 without CUDA or when
/// the driver does not report it.
class pool_peak {
 public:
  explicit pool_peak(int device) : device_(device) {}

  void reset()
  {
#if defined(SPIRA_HAS_CUDA)
    std::uint64_t zero = 0;
    pool_ = nullptr;
    start_ = 0;
    if (cudaDeviceGetMemPool(&pool_, device_) != cudaSuccess ||
        cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &start_) != cudaSuccess ||
        cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &zero) != cudaSuccess) {
      (void)cudaGetLastError();
      pool_ = nullptr;
    }
#endif
  }

  [[nodiscard]] std::int64_t peak() const
  {
#if defined(SPIRA_HAS_CUDA)
    std::uint64_t high = 0;
    if (pool_ == nullptr ||
        cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &high) != cudaSuccess) {
      (void)cudaGetLastError();
      return -1;
    }
    return std::int64_t(std::max(high, start_));
#else
    return -1;
#endif
  }

 private:
  [[maybe_unused]] int device_;
#if defined(SPIRA_HAS_CUDA)
  cudaMemPool_t pool_ = nullptr;
  std::uint64_t start_ = 0;
#endif
};

/// Times call() up to `repeats` times while the calls so far take less than max_seconds (at least
/// once); setup() runs before each call, untimed (it frees the previous graph). With a pool, its
/// high-water mark is reset before each call and `peak` is the largest after them (else -1).
/// Returns the milliseconds of each call.
template <class Setup, class Call>
std::vector<double> time_calls(int repeats, double max_seconds, pool_peak* pool, std::int64_t& peak,
                               Setup&& setup, Call&& call)
{
  std::vector<double> ms;
  double total = 0;
  peak = -1;
  for (int r = 0; r < repeats && (r == 0 || total < max_seconds); ++r) {
    setup();
    if (pool != nullptr) {
      pool->reset();
    }
    const auto t0 = clock_type::now();
    call();
    const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    total += s;
    ms.push_back(1e3 * s);
    if (pool != nullptr) {
      peak = std::max(peak, pool->peak());
    }
  }
  return ms;
}

std::string number_or_null(double v, bool ok, const char* fmt = "%.3f")
{
  if (!ok) {
    return "null";
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string bytes_or_null(std::int64_t b)
{
  return b < 0 ? "null" : std::to_string(b);
}

/// "median_ms", "min_ms" and "times_ms" (with `prefix`) of the calls' milliseconds.
std::string times_json(const std::string& prefix, const std::vector<double>& times_ms)
{
  std::vector<double> sorted = times_ms;
  std::sort(sorted.begin(), sorted.end());
  std::string times = "[";
  for (std::size_t t = 0; t < times_ms.size(); ++t) {
    times += (t ? ", " : "") + number_or_null(times_ms[t], true);
  }
  times += "]";
  const bool any = !sorted.empty();
  return "\"" + prefix +
         "median_ms\": " + number_or_null(any ? sorted[sorted.size() / 2] : 0, any) + ", \"" +
         prefix + "min_ms\": " + number_or_null(any ? sorted.front() : 0, any) + ", \"" + prefix +
         "times_ms\": " + times;
}

/// The distances of a graph (a dense_matrix: contiguous) in host memory, in one copy.
std::vector<float> host_distances(const spira::knn_result& g, const spira::cuda_resources& res)
{
  std::vector<float> d(std::size_t(g.distances.rows() * g.distances.cols()));
  spira::copy(d.data(), spira::memory_space::host, g.distances.data(), g.distances.space(),
              d.size(), res);
  return d;
}

/// Largest difference between the distances of two graphs of the same shape, any memory spaces.
double max_distance_diff(const spira::knn_result& a, const spira::knn_result& b,
                         const spira::cuda_resources& res)
{
  const std::vector<float> da = host_distances(a, res), db = host_distances(b, res);
  double diff = 0;
  for (std::size_t e = 0; e < da.size(); ++e) {
    const double d = std::abs(double(da[e]) - double(db[e]));
    diff = std::isnan(d) ? diff : std::max(diff, d);
  }
  return diff;
}

/// The device-resident calls of one metric: device CSR in (copied once, not timed), graph in
/// device memory out, each call timed to its completion.
struct resident_result {
  std::vector<double> times_ms;
  std::int64_t peak_bytes = -1, input_bytes = -1, free_bytes = -1, budget_bytes = -1;
  double max_dist_diff = -1;  ///< against the host-in/host-out graph; -1: not compared
  std::string error;
};

resident_result time_resident(const spira::cuda_resources& cuda, const spira::csr_matrix<V, I>& m,
                              const spira::knn_params& params, int repeats, double max_seconds,
                              const std::optional<spira::knn_result>& host_graph)
{
  resident_result out;
  try {
    const auto dev = spira::to_device(cuda, m.view());
    out.input_bytes =
        std::int64_t((m.rows() + 1) * sizeof(spira::offset_t) + m.nnz() * (sizeof(I) + sizeof(V)));
    spira::synchronize(cuda);
    out.free_bytes = std::int64_t(spira::cuda_free_memory(cuda));
    out.budget_bytes = params.memory_budget > 0
                           ? std::int64_t(params.memory_budget)
                           : std::int64_t(std::size_t(out.free_bytes) /
                                          spira::detail::knn_policy::device_budget_divisor);
    std::optional<spira::knn_result> g;
    pool_peak pool(cuda.device);
    out.times_ms = time_calls(
        repeats, max_seconds, &pool, out.peak_bytes,
        [&] {
          g.reset();  // stream-ordered frees, completed before the next call's window
          spira::synchronize(cuda);
        },
        [&] {
          g = run(cuda, dev, params);
          spira::synchronize(cuda);
        });
    if (host_graph && g->distances.rows() == host_graph->distances.rows() &&
        g->distances.cols() == host_graph->distances.cols()) {
      out.max_dist_diff = max_distance_diff(*g, *host_graph, cuda);
    }
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

}  // namespace

int main(int argc, char** argv)
{
  std::string file, synthetic, label, backend = "cuda", save_matrix_path, save_graph;
  bool transpose = false, resident = false;
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
      } else if (arg == "--resident") {
        resident = true;
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
  if (resident && backend != "cuda") {
    std::fprintf(stderr,
                 "bench_knn: --resident times device memory in and out: it needs "
                 "--backend cuda (got '%s')\n",
                 backend.c_str());
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
                                             42, 0, spira::bench::past_full::extend);
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
    std::int64_t peak_bytes = -1;
    std::optional<resident_result> res_out;
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
      pool_peak pool(cuda.device);
      times_ms = time_calls(
          repeats, max_seconds, backend == "cuda" ? &pool : nullptr, peak_bytes,
          [&] { g.reset(); },  // the previous graph is not kept alive during the next call
          [&] { g = call(m, params); });
      if (!save_graph.empty()) {
        const std::vector<spira::io::npz_entry> entries{
            spira::io::npz_entry::of("indices",
                                     spira::dense_view<const std::int64_t>(g->indices.view())),
            spira::io::npz_entry::of("distances",
                                     spira::dense_view<const float>(g->distances.view())),
        };
        spira::io::write_npz(save_graph + "-" + mname + ".npz", entries);
      }
      if (resident) {
        res_out = time_resident(cuda, m, params, repeats, max_seconds, g);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::ostringstream resident_json;
    if (res_out) {
      const resident_result& r = *res_out;
      resident_json << times_json("resident_", r.times_ms)
                    << ", \"resident_peak_device_bytes\": " << bytes_or_null(r.peak_bytes)
                    << ", \"resident_input_bytes\": " << bytes_or_null(r.input_bytes)
                    << ", \"device_free_bytes\": " << bytes_or_null(r.free_bytes)
                    << ", \"budget_bytes\": " << bytes_or_null(r.budget_bytes)
                    << ", \"resident_max_dist_diff\": "
                    << number_or_null(r.max_dist_diff, r.max_dist_diff >= 0, "%.3g")
                    << ", \"resident_error\": " << (r.error.empty() ? "null" : json_string(r.error))
                    << ", ";
    }
    std::printf(
        "{\"tool\": \"spira\", \"backend\": \"%s\", \"threads\": %d, \"dataset\": %s, "
        "\"rows\": %lld, \"cols\": %lld, \"nnz\": %lld, \"k\": %lld, \"metric\": %s, "
        "%s, \"load_s\": %.3f, \"peak_device_bytes\": %s, \"resident\": %s, %s"
        "\"memory_budget\": %llu, \"query_tile\": %lld, \"index_tile\": %lld, "
        "\"algo\": \"%s\", \"strategy\": \"%s\", \"error\": %s}\n",
        backend.c_str(), backend == "host" ? host.num_threads() : 0, json_string(label).c_str(),
        (long long)m.rows(), (long long)m.cols(), (long long)m.nnz(), (long long)k,
        json_string(mname).c_str(), times_json("", times_ms).c_str(), load_s,
        bytes_or_null(peak_bytes).c_str(), resident ? "true" : "false", resident_json.str().c_str(),
        (unsigned long long)memory_budget, (long long)query_tile, (long long)index_tile,
        spira::to_string(algo), spira::to_string(strategy),
        error.empty() ? "null" : json_string(error).c_str());
    std::fflush(stdout);
  }
  return 0;
}
