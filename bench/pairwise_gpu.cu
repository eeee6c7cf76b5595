// GPU pairwise-distance benchmark: every CUDA strategy of spira's engine on one dataset, and the
// cuSPARSE baseline (SpGEMM through its C API, bench/pairwise_gpu_cusparse.cuh) for the
// dot-product metrics, timed in the same run with CUDA events (median of --repeats after one
// warm-up call), each output checked against the first strategy's on the first rows. A cuSPARSE
// failure (an error status, or a result that differs from spira's) is reported in "error".
//
// usage: bench_pairwise_gpu (--file PATH [--transpose] | --synthetic NAME [--synthetic-rows N])
//                           [--query-rows R] [--metrics m1,m2,..] [--strategies s1,s2,..]
//                           [--repeats N] [--label NAME]
//   --file        any format spira::read_matrix reads (.mtx, .mtx.gz, .npz, svmlight, ...)
//   --transpose   use the transpose (e.g. pbmc3k ships genes x cells)
//   --synthetic   a Table 2 shape of bench/synthetic.hpp; --synthetic-rows limits its rows (B)
//   --query-rows  A = the first R rows of the matrix, B = all rows (default: A = B = all rows)
//   --strategies  spira strategies and/or "cusparse" (default: all of them)
// Prints one JSON object per (metric, strategy) on stdout.
#include "pairwise_gpu_cusparse.cuh"
#include "synthetic.hpp"

#include <spira/cuda/error.cuh>
#include <spira/io.hpp>
#include <spira/spira.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace {

using V = float;
using I = std::int32_t;

std::vector<std::string> split(const std::string& s)
{
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) { out.push_back(item); }
  }
  return out;
}

/// s with the characters JSON strings cannot hold literally escaped.
std::string json_escape(const std::string& s)
{
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

spira::csr_matrix<V, I> first_rows(const spira::csr_matrix<V, I>& m, std::int64_t rows)
{
  rows = std::min(rows, m.rows());
  const std::int64_t nnz = m.row_ptr()[rows];
  return spira::make_csr<V, I>(spira::host_resources{}, rows, m.cols(),
                               std::span<const spira::offset_t>(m.row_ptr(), std::size_t(rows) + 1),
                               std::span<const I>(m.col_idx(), std::size_t(nnz)),
                               std::span<const V>(m.values(), std::size_t(nnz)),
                               spira::csr_check::canonical);
}

}  // namespace

int main(int argc, char** argv)
{
  std::string file, synthetic, label;
  bool transpose = false;
  std::int64_t query_rows = 0, synthetic_rows = 0;
  int repeats = 5;
  std::vector<std::string> metrics{"cosine", "manhattan", "chebyshev", "jensenshannon"};
  std::vector<std::string> strategies{"automatic", "intersection", "hybrid", "dense", "cusparse"};
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto next = [&]() -> std::string {
      if (k + 1 >= argc) {
        std::fprintf(stderr, "bench_pairwise_gpu: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++k];
    };
    if (a == "--file") { file = next(); }
    else if (a == "--transpose") { transpose = true; }
    else if (a == "--synthetic") { synthetic = next(); }
    else if (a == "--synthetic-rows") { synthetic_rows = std::stoll(next()); }
    else if (a == "--query-rows") { query_rows = std::stoll(next()); }
    else if (a == "--metrics") { metrics = split(next()); }
    else if (a == "--strategies") { strategies = split(next()); }
    else if (a == "--repeats") { repeats = std::max(1, std::stoi(next())); }
    else if (a == "--label") { label = next(); }
    else {
      std::fprintf(stderr, "bench_pairwise_gpu: unknown argument %s (see the header comment)\n",
                   a.c_str());
      return 2;
    }
  }
  if (file.empty() == synthetic.empty()) {
    std::fprintf(stderr, "bench_pairwise_gpu: give exactly one of --file and --synthetic\n");
    return 2;
  }
  try {
    const spira::host_resources host{};
    spira::csr_matrix<V, I> m;
    const auto t_load = std::chrono::steady_clock::now();
    if (!file.empty()) {
      m = spira::io::read_matrix<V, I>(file);
      if (transpose) { m = spira::transpose(host, m.view()); }
      if (label.empty()) { label = file; }
    } else {
      m = spira::bench::make_synthetic<V, I>(spira::bench::table2_shape(synthetic), synthetic_rows,
                                             42);
      if (label.empty()) { label = "synthetic:" + synthetic; }
    }
    std::fprintf(stderr, "bench_pairwise_gpu: %s: %lld x %lld, %lld entries, loaded in %.1f s\n",
                 label.c_str(), (long long)m.rows(), (long long)m.cols(), (long long)m.nnz(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t_load).count());
    const spira::csr_matrix<V, I> q = query_rows > 0 ? first_rows(m, query_rows)
                                                      : spira::csr_matrix<V, I>{};
    const spira::cuda_resources res{};
    SPIRA_CUDA_TRY(cudaSetDevice(res.device));
    const auto db = spira::to_device(res, m.view());
    const auto da = query_rows > 0 ? spira::to_device(res, q.view()) : spira::csr_matrix<V, I>{};
    const auto a = query_rows > 0 ? da.view() : db.view();
    const auto b = db.view();
    spira::dense_matrix<V> out(res, a.rows, b.rows);
    const std::int64_t check_rows = std::min<std::int64_t>(a.rows, 256);
    cudaEvent_t start, stop;
    SPIRA_CUDA_TRY(cudaEventCreate(&start));
    SPIRA_CUDA_TRY(cudaEventCreate(&stop));
    std::unique_ptr<spira::bench::cusparse_pairwise> cusparse;
    std::string cusparse_setup_error;
    for (const auto& mname : metrics) {
      const spira::metric mt = spira::metric_from_string(mname);
      std::vector<V> reference;
      for (const auto& sname : strategies) {
        const bool is_cusparse = sname == "cusparse";
        const spira::pairwise_strategy s = is_cusparse
                                             ? spira::pairwise_strategy::automatic
                                             : spira::pairwise_strategy_from_string(sname);
        if (!is_cusparse && !spira::supports_strategy(mt, s)) { continue; }
        // cuSPARSE computes A Bᵀ: the metrics that are a finalize of the plain dot product.
        if (is_cusparse && mt != spira::metric::cosine && mt != spira::metric::euclidean &&
            mt != spira::metric::sqeuclidean && mt != spira::metric::inner_product) {
          continue;
        }
        const spira::distance_params params{.metric = mt, .strategy = s};
        const auto call = [&] {
          if (!is_cusparse) {
            spira::pairwise_distance(res, a, b, out.view(), params);
            return;
          }
          namespace d = spira::distances;
          switch (mt) {
            case spira::metric::cosine: cusparse->run(d::cosine{}, out.view()); break;
            case spira::metric::euclidean: cusparse->run(d::euclidean{}, out.view()); break;
            case spira::metric::sqeuclidean: cusparse->run(d::sqeuclidean{}, out.view()); break;
            default: cusparse->run(d::inner_product{}, out.view()); break;
          }
        };
        std::string error;
        std::vector<double> times;
        try {
          if (is_cusparse && !cusparse) {
            if (!cusparse_setup_error.empty()) { throw std::runtime_error(cusparse_setup_error); }
            try {
              cusparse = std::make_unique<spira::bench::cusparse_pairwise>(res, a, b);
            } catch (const std::exception& e) {
              cusparse_setup_error = e.what();
              throw;
            }
          }
          call();  // warm-up
          spira::synchronize(res);
          for (int r = 0; r < repeats; ++r) {
            SPIRA_CUDA_TRY(cudaEventRecord(start, res.stream));
            call();
            SPIRA_CUDA_TRY(cudaEventRecord(stop, res.stream));
            SPIRA_CUDA_TRY(cudaEventSynchronize(stop));
            float ms = 0;
            SPIRA_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
            times.push_back(ms);
          }
        } catch (const std::exception& e) {
          error = e.what();
          // A failed call must not leave its error behind for the next one: drain the stream and
          // clear the last error (a sticky device error would fail every later call, visibly).
          if (cudaStreamSynchronize(res.stream) != cudaSuccess) {
            std::fprintf(stderr, "bench_pairwise_gpu: the device failed after %s: %s\n",
                         sname.c_str(), e.what());
          }
          cudaGetLastError();
        }
        double diff = 0;
        if (error.empty()) {
          std::vector<V> got(std::size_t(check_rows * b.rows));
          spira::copy(got.data(), spira::memory_space::host, out.data(),
                      spira::memory_space::device, got.size(), res);
          if (reference.empty()) {
            reference = got;
          } else {
            for (std::size_t e = 0; e < got.size(); ++e) {
              const double d = std::abs(double(got[e]) - double(reference[e]));
              if (!(d <= diff)) { diff = std::isnan(d) ? INFINITY : d; }
            }
          }
          // A baseline that returns a wrong product without an error status is a failure too
          // (CuPy's cuSPARSE path once returned an empty product for 20newsgroups).
          // The bound allows the float dot-product expansion's rounding near 0 (euclidean(x, x)).
          double scale = 0;
          for (const V r : reference) { scale = std::max(scale, std::abs(double(r))); }
          if (is_cusparse && !(diff <= 1e-2 * (1.0 + scale))) {
            error = "cuSPARSE result differs from spira's by " + std::to_string(diff);
          }
        }
        std::sort(times.begin(), times.end());
        // JSON has no NaN: a call that failed before any timing reports null times.
        const auto ms = [](double x) {
          char buf[32];
          if (!std::isfinite(x)) { return std::string("null"); }
          std::snprintf(buf, sizeof buf, "%.4f", x);
          return std::string(buf);
        };
        const double median = times.empty() ? NAN : times[times.size() / 2];
        std::printf("{\"dataset\": \"%s\", \"rows_a\": %lld, \"rows_b\": %lld, \"cols\": %lld, "
                    "\"nnz_a\": %lld, \"nnz_b\": %lld, \"metric\": \"%s\", \"strategy\": \"%s\", "
                    "\"median_ms\": %s, \"min_ms\": %s, \"max_diff_vs_first\": %s, "
                    "\"error\": \"%s\"}\n",
                    label.c_str(), (long long)a.rows, (long long)b.rows, (long long)a.cols,
                    (long long)a.nnz, (long long)b.nnz, mname.c_str(), sname.c_str(),
                    ms(median).c_str(), ms(times.empty() ? NAN : times.front()).c_str(),
                    std::isfinite(diff) ? std::to_string(diff).c_str() : "null",
                    json_escape(error).c_str());
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_pairwise_gpu: %s\n", e.what());
    return 1;
  }
  return 0;
}
