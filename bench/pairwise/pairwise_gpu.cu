// GPU pairwise-distance benchmark: every CUDA strategy of spira's engine on one dataset, the
// cuSPARSE baseline (SpGEMM through its C API, bench/pairwise/pairwise_gpu_cusparse.cuh) for the
// dot-product metrics, and spira's host engine (OpenMP, all cores unless --host-threads), timed in
// the same run. GPU calls are timed with CUDA events, host calls with a steady clock; each output
// is checked against the first strategy's on the first rows. Driver:
// bench/pairwise/pairwise_gpu.py.
//
// usage: bench_pairwise_gpu (--file PATH [--transpose] | --synthetic NAME [--synthetic-rows N])
//                           [--query-rows R] [--metrics m1,m2,..] [--strategies s1,s2,..]
//                           [--repeats N] [--case-budget-ms MS] [--label NAME]
//                           [--host-budget-ms MS] [--host-max-rows R] [--host-threads T]
//                           [--max-hybrid-work W] [--max-dense-flops F]
//                           [--deadline-at UNIX_SECONDS] [--dry-run]
//   --file         any format spira::io::read_matrix reads (.mtx, .mtx.gz, .npz, edge lists, ...)
//   --transpose    use the transpose (e.g. pbmc3k ships genes x cells)
//   --synthetic    a Table 2 shape of bench/common/synthetic.hpp; --synthetic-rows limits
//                  its rows (B)
//   --query-rows   A = the first R rows of the matrix, B = all rows (default: A = B = all rows)
//   --strategies   spira strategies, "cusparse" and/or "host" (default: all of them, that order)
//   --repeats      timed calls after one untimed warm-up (default 5), fewer when they would take
//                  more than --case-budget-ms (default 1500) in all; a warm-up alone longer than
//                  that budget is reported as the only measurement ("timed_calls": 0)
//   --host-*       host engine: untimed calls on min(32, rows(A)) rows and then on more, until a
//                  call takes a third of --host-budget-ms (default 400) or all rows run (at most
//                  --host-max-rows, default all); the timed calls run the first H rows of A reached
//                  that way ("host_rows"), and "gpu_same_rows_ms" times spira's automatic strategy
//                  on the GPU on the same rows (the GPU/host speedup compares those two); at
//                  most 3 timed host calls. --strategies host alone makes no CUDA call (it runs
//                  on a machine without a GPU)
//   --max-*        a forced hybrid / dense run whose work (rows(A) nnz(B) [+ rows(B) nnz(A) for
//                  NAMMs]; 2 rows(A) rows(B) cols flops) exceeds the limit is skipped and reported
//                  with its estimate (defaults 4e11 and 1.5e14); `automatic` always runs
//   --deadline-at  no case starts after this time (seconds since the epoch); the cases left are
//                  reported with "skipped": "deadline"
//   --dry-run      no GPU: print the dataset's statistics and the planned cases with their sizes
// Prints one JSON object per (metric, strategy) on stdout (JSON: a missing number is null).
#include "common/json_escape.hpp"
#include "common/split.hpp"
#include "common/synthetic.hpp"
#include "pairwise_gpu_cases.hpp"
#include "pairwise_gpu_cusparse.cuh"

#include <spira/cuda/error.cuh>
#include <spira/io.hpp>
#include <spira/spira.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using spira::bench::json_string;

namespace {

using V = float;
using I = std::int32_t;

using spira::bench::split;
using spira::bench::pairwise_gpu::cusparse_serves;
using spira::bench::pairwise_gpu::is_namm;
using spira::bench::pairwise_gpu::options;
using spira::bench::pairwise_gpu::parse;
using spira::bench::pairwise_gpu::problem_stats;
using spira::bench::pairwise_gpu::skip_reason;
using spira::bench::pairwise_gpu::statistics;

/// One JSON object, built field by field; a non-finite number is written as null.
class json_record {
 public:
  json_record& str(const std::string& key, const std::string& v)
  {
    return raw(key, json_string(v));
  }
  json_record& num(const std::string& key, double v, int digits = 4)
  {
    if (!std::isfinite(v)) {
      return raw(key, "null");
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return raw(key, buf);
  }
  json_record& sci(const std::string& key, double v)
  {
    if (!std::isfinite(v)) {
      return raw(key, "null");
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return raw(key, buf);
  }
  json_record& integer(const std::string& key, std::int64_t v)
  {
    return raw(key, std::to_string(v));
  }
  json_record& strings(const std::string& key, const std::vector<std::string>& v)
  {
    std::string s = "[";
    for (std::size_t k = 0; k < v.size(); ++k) {
      s += (k ? ", " : "") + json_string(v[k]);
    }
    return raw(key, s + "]");
  }
  json_record& raw(const std::string& key, const std::string& v)
  {
    body_ += (body_.empty() ? "{\"" : ", \"") + key + "\": " + v;
    return *this;
  }
  void print() const
  {
    std::printf("%s}\n", body_.c_str());
    std::fflush(stdout);
  }

 private:
  std::string body_;
};

/// The first `rows` rows of a CSR (same arrays, fewer rows; host views only).
spira::csr_view<V, I> first_rows(spira::csr_view<V, I> m, std::int64_t rows)
{
  rows = std::min(rows, m.rows);
  m.nnz = m.row_ptr[rows];
  m.rows = rows;
  return m;
}

/// The same for a device view, with the entry count read on the host beforehand.
spira::csr_view<V, I> first_rows(spira::csr_view<V, I> m, std::int64_t rows, std::int64_t nnz)
{
  m.rows = std::min(rows, m.rows);
  m.nnz = nnz;
  return m;
}

/// Calls f(D{}) with the catalogue's operator struct for m (the metrics this benchmark runs);
/// returns false for the others.
template <class F>
bool with_distance(spira::metric m, F&& f)
{
  namespace d = spira::distances;
  using spira::metric;
  switch (m) {
    case metric::cosine:
      f(d::cosine{});
      return true;
    case metric::euclidean:
      f(d::euclidean{});
      return true;
    case metric::sqeuclidean:
      f(d::sqeuclidean{});
      return true;
    case metric::inner_product:
      f(d::inner_product{});
      return true;
    case metric::manhattan:
      f(d::manhattan{});
      return true;
    case metric::chebyshev:
      f(d::chebyshev{});
      return true;
    case metric::jensenshannon:
      f(d::jensenshannon{});
      return true;
    case metric::hellinger:
      f(d::hellinger{});
      return true;
    default:
      return false;
  }
}

/// The strategy `automatic` takes for m, when the shapes decide it ("" when it is measured on the
/// device: chebyshev and the other min / max NAMMs; or for metrics with_distance does not list).
std::string resolved_strategy(spira::metric m, spira::csr_view<V, I> a, spira::csr_view<V, I> b)
{
  std::string out;
  with_distance(m, [&](auto d) {
    using D = decltype(d);
    if constexpr (!spira::detail::selection_namm_v<D, V>) {
      out = spira::to_string(spira::resolve_strategy<D>(a, b, spira::pairwise_strategy::automatic));
    }
  });
  return out;
}

double seconds_since_epoch()
{
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// max |got - ref| over the first n entries (infinity when one side is NaN and the other is not).
double max_diff(const std::vector<V>& got, const std::vector<V>& ref, std::size_t n)
{
  double diff = 0;
  for (std::size_t e = 0; e < n; ++e) {
    if (std::isnan(got[e]) && std::isnan(ref[e])) {
      continue;
    }
    const double d = std::abs(double(got[e]) - double(ref[e]));
    if (!(d <= diff)) {
      diff = std::isnan(d) ? INFINITY : d;
    }
  }
  return diff;
}

/// Timings of one case: warm-up, then timed calls within the budget.
struct timing {
  double warmup_ms = NAN;
  std::vector<double> ms;
  [[nodiscard]] double median() const
  {
    if (ms.empty()) {
      return warmup_ms;
    }
    std::vector<double> s = ms;
    std::sort(s.begin(), s.end());
    return s[s.size() / 2];
  }
  [[nodiscard]] double min() const
  {
    return ms.empty() ? warmup_ms : *std::min_element(ms.begin(), ms.end());
  }
};

}  // namespace

int main(int argc, char** argv)
{
  const options o = parse(argc, argv);
  std::string label = o.label;
  try {
    const spira::host_resources host{o.host_threads};
    spira::csr_matrix<V, I> m;
    const auto t_load = std::chrono::steady_clock::now();
    if (!o.file.empty()) {
      m = spira::io::read_matrix<V, I>(o.file);
      if (o.transpose) {
        m = spira::transpose(host, m.view());
      }
      if (label.empty()) {
        label = o.file;
      }
    } else {
      m = spira::bench::make_synthetic<V, I>(spira::bench::table2_shape(o.synthetic),
                                             o.synthetic_rows, 42);
      if (label.empty()) {
        label = "synthetic-" + o.synthetic;
      }
    }
    const double load_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_load).count();
    std::fprintf(stderr, "bench_pairwise_gpu: %s: %lld x %lld, %lld entries, loaded in %.1f s\n",
                 label.c_str(), (long long)m.rows(), (long long)m.cols(), (long long)m.nnz(),
                 load_s);
    const auto hb = m.view();
    const auto ha = o.query_rows > 0 ? first_rows(hb, o.query_rows) : hb;
    const problem_stats st = statistics(ha, hb);
    const auto base = [&](json_record& r) -> json_record& {
      return r.str("dataset", label)
          .integer("rows_a", st.rows_a)
          .integer("rows_b", st.rows_b)
          .integer("cols", st.cols)
          .integer("nnz_a", st.nnz_a)
          .integer("nnz_b", st.nnz_b);
    };

    if (o.dry_run) {
      json_record r;
      base(r)
          .str("record", "dry-run")
          .num("load_s", load_s, 2)
          .sci("output_bytes", st.output_bytes())
          .sci("products", st.products)
          .sci("dense_flops", st.dense_flops())
          .num("min_value", st.min_value);
      std::string planned, skipped;
      for (const auto& mname : o.metrics) {
        const spira::metric mt = spira::metric_from_string(mname);
        for (const auto& sname : o.strategies) {
          const std::string why = skip_reason(o, st, mt, sname);
          std::string item = mname + "/" + sname;
          if (sname == "automatic") {
            const std::string res = resolved_strategy(mt, ha, hb);
            item += "->" + (res.empty() ? std::string("measured") : res);
          }
          if (sname == "hybrid") {
            char buf[48];
            std::snprintf(buf, sizeof buf, "(work %.3g)", st.hybrid_work(is_namm(mt)));
            item += buf;
          }
          if (why.empty()) {
            planned += (planned.empty() ? "" : " ") + item;
          } else if (why.rfind("not applicable", 0) != 0) {
            skipped += (skipped.empty() ? "" : "; ") + item + ": " + why;
          }
        }
      }
      r.str("planned", planned).str("skipped", skipped).print();
      return 0;
    }

    // Only the host engine (--strategies host): no CUDA call at all (a machine without a GPU).
    const bool use_gpu = std::any_of(o.strategies.begin(), o.strategies.end(),
                                     [](const std::string& s) { return s != "host"; });
    const spira::cuda_resources res{};
    if (use_gpu) {
      SPIRA_CUDA_TRY(cudaSetDevice(res.device));
    }
    const spira::csr_matrix<V, I> db =
        use_gpu ? spira::to_device(res, hb) : spira::csr_matrix<V, I>{};
    const spira::csr_matrix<V, I> da =
        use_gpu && o.query_rows > 0 ? spira::to_device(res, ha) : spira::csr_matrix<V, I>{};
    // a, b: the device operands (the host ones, ha and hb, when there is no GPU part).
    const auto a = !use_gpu ? ha : o.query_rows > 0 ? da.view() : db.view();
    const auto b = use_gpu ? db.view() : hb;
    spira::dense_matrix<V> out =
        use_gpu ? spira::dense_matrix<V>(res, a.rows, b.rows) : spira::dense_matrix<V>{};
    const std::int64_t check_rows = std::min<std::int64_t>(a.rows, 256);
    cudaEvent_t start{}, stop{};
    if (use_gpu) {
      SPIRA_CUDA_TRY(cudaEventCreate(&start));
      SPIRA_CUDA_TRY(cudaEventCreate(&stop));
    }
    const auto elapsed_ms = [&] {
      float ms = 0;
      SPIRA_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
      return double(ms);
    };
    // Warm-up, then timed calls until `repeats` or the case budget; event-timed on res.stream.
    const auto time_gpu = [&](const auto& call) {
      timing t;
      SPIRA_CUDA_TRY(cudaEventRecord(start, res.stream));
      call();
      SPIRA_CUDA_TRY(cudaEventRecord(stop, res.stream));
      SPIRA_CUDA_TRY(cudaEventSynchronize(stop));
      t.warmup_ms = elapsed_ms();
      double spent = 0;
      for (int r = 0; r < o.repeats && t.warmup_ms <= o.case_budget_ms; ++r) {
        if (r > 0 && spent + t.ms.back() > o.case_budget_ms) {
          break;
        }
        SPIRA_CUDA_TRY(cudaEventRecord(start, res.stream));
        call();
        SPIRA_CUDA_TRY(cudaEventRecord(stop, res.stream));
        SPIRA_CUDA_TRY(cudaEventSynchronize(stop));
        t.ms.push_back(elapsed_ms());
        spent += t.ms.back();
      }
      return t;
    };
    const auto download = [&](std::int64_t rows) {
      std::vector<V> got(std::size_t(rows * b.rows));
      spira::copy(got.data(), spira::memory_space::host, out.data(), spira::memory_space::device,
                  got.size(), res);
      return got;
    };
    std::unique_ptr<spira::bench::cusparse_pairwise> cusparse;
    std::string cusparse_setup_error;
    std::optional<spira::bench::cusparse_plan> cusparse_settled;

    for (const auto& mname : o.metrics) {
      const spira::metric mt = spira::metric_from_string(mname);
      std::vector<V> reference;
      std::string reference_strategy;
      double automatic_ms = NAN;
      for (const auto& sname : o.strategies) {
        json_record rec;
        base(rec).str("metric", mname).str("strategy", sname);
        const std::string why = skip_reason(o, st, mt, sname);
        if (why.rfind("not applicable", 0) == 0) {
          continue;
        }
        if (!why.empty()) {
          rec.str("skipped", why).str("error", "").print();
          continue;
        }
        if (o.deadline_at > 0 && seconds_since_epoch() > o.deadline_at) {
          rec.str("skipped", "deadline").str("error", "").print();
          continue;
        }
        const bool is_cusparse = sname == "cusparse";
        const bool is_host = sname == "host";
        const spira::pairwise_strategy s = is_cusparse || is_host
                                               ? spira::pairwise_strategy::automatic
                                               : spira::pairwise_strategy_from_string(sname);
        if (sname == "automatic") {
          const std::string r = resolved_strategy(mt, ha, hb);
          rec.str("resolved", r.empty() ? "measured on the device" : r);
        }
        const spira::distance_params params{.metric = mt, .strategy = s};
        std::string error;
        timing t;
        std::vector<V> got;
        std::int64_t compared_rows = check_rows;
        try {
          if (is_host) {
            // Host engine: a probe on a few rows gives the time per row; then as many rows as
            // fit the host budget per call (all rows when they do).
            const std::int64_t probe = std::min<std::int64_t>(a.rows, 32);
            const std::int64_t max_elements = std::int64_t(1) << 30;
            std::int64_t rows_cap = std::max<std::int64_t>(probe, max_elements / b.rows);
            if (o.host_max_rows > 0) {
              rows_cap = std::min(rows_cap, o.host_max_rows);
            }
            rows_cap = std::min(rows_cap, a.rows);
            spira::dense_matrix<V> hout(host, probe, b.rows);
            const auto host_call = [&](std::int64_t rows) {
              const auto t0 = std::chrono::steady_clock::now();
              spira::pairwise_distance(host, first_rows(ha, rows), hb, hout.view(), params);
              return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                               t0)
                  .count();
            };
            // Grow the row count from the probe (a call has a fixed cost too, so the first
            // extrapolation is low) until a call takes a third of the budget or all rows run.
            std::int64_t rows = probe;
            double last_ms = host_call(probe);
            while (rows < rows_cap && last_ms < o.host_budget_ms / 3) {
              const double grow =
                  std::clamp(0.8 * o.host_budget_ms / std::max(last_ms, 1e-3), 2.0, 16.0);
              rows = std::min(rows_cap, std::max<std::int64_t>(
                                            rows + 1, std::int64_t(double(rows) * grow) / 32 * 32));
              hout = spira::dense_matrix<V>(host, rows, b.rows);
              last_ms = host_call(rows);
            }
            const double probe_ms = last_ms;
            t.warmup_ms = probe_ms;
            double spent = 0;
            for (int r = 0; r < std::min(o.repeats, 3); ++r) {  // host calls: at most 3
              if (r > 0 && spent + t.ms.back() > o.case_budget_ms) {
                break;
              }
              t.ms.push_back(host_call(rows));
              spent += t.ms.back();
            }
            compared_rows = std::min(check_rows, rows);
            got.assign(hout.data(), hout.data() + compared_rows * b.rows);
            rec.integer("host_rows", rows).integer("host_threads", host.num_threads());
            // The GPU on the same rows (the automatic strategy), for the GPU/host speedup.
            if (!use_gpu) {
              rec.num("gpu_same_rows_ms", NAN);
            } else if (rows == a.rows && std::isfinite(automatic_ms)) {
              rec.num("gpu_same_rows_ms", automatic_ms);
            } else {
              std::int64_t nnz_rows = ha.row_ptr[rows];
              spira::dense_view<V> view = out.view();
              view.rows = rows;
              const spira::distance_params pa{.metric = mt};
              const timing g = time_gpu([&] {
                spira::pairwise_distance(res, first_rows(a, rows, nnz_rows), b, view, pa);
              });
              rec.num("gpu_same_rows_ms", g.median());
            }
          } else if (is_cusparse) {
            if (!cusparse) {
              if (!cusparse_setup_error.empty()) {
                throw std::runtime_error(cusparse_setup_error);
              }
              try {
                cusparse = std::make_unique<spira::bench::cusparse_pairwise>(res, a, b);
              } catch (const std::exception& e) {
                cusparse_setup_error = e.what();
                throw;
              }
            }
            const auto call = [&] {
              with_distance(mt, [&](auto d) {
                if constexpr (spira::dot_product_form<decltype(d)>::value) {
                  cusparse->run(d, out.view());
                }
              });
            };
            // Settle on the first plan that runs and agrees with spira (untimed; see
            // pairwise_gpu_cusparse.cuh), unless a previous metric settled it already.
            std::vector<std::string> attempts;
            if (!cusparse_settled) {
              const auto plans = spira::bench::cusparse_pairwise::plans(a.rows);
              std::string last;
              for (const auto& p : plans) {
                if (o.deadline_at > 0 && seconds_since_epoch() > o.deadline_at) {
                  last =
                      "stopped at the deadline after " + std::to_string(attempts.size()) + " plans";
                  break;
                }
                const std::string name =
                    p.algorithm() + " blocks of " + std::to_string(p.block_rows) + " rows";
                try {
                  cusparse->set_plan(p);
                  call();
                  spira::synchronize(res);
                  if (!reference.empty()) {
                    const auto probe = download(check_rows);
                    const double d = max_diff(probe, reference, probe.size());
                    double scale = 0;
                    for (const V x : reference) {
                      scale = std::max(scale, std::abs(double(x)));
                    }
                    if (!(d <= 1e-2 * (1.0 + scale))) {
                      throw spira::bench::cusparse_failure(
                          "result differs from spira's by " + std::to_string(d), true);
                    }
                  }
                  cusparse_settled = cusparse->plan();
                  break;
                } catch (const spira::bench::cusparse_failure& e) {
                  cudaStreamSynchronize(res.stream);
                  cudaGetLastError();
                  attempts.push_back(name + ": " + e.what());
                  last = e.what();
                  if (!e.resources()) {
                    break;
                  }
                }
              }
              rec.strings("cusparse_attempts", attempts);
              if (!cusparse_settled) {
                throw std::runtime_error("every cuSPARSE plan failed; last: " + last);
              }
            } else {
              cusparse->set_plan(*cusparse_settled);
            }
            t = time_gpu(call);
            rec.str("cusparse_alg", cusparse_settled->algorithm())
                .integer("cusparse_block_rows", cusparse_settled->block_rows)
                .integer("product_nnz", cusparse->product_nnz());
            if (cusparse->products() >= 0) {
              rec.integer("spgemm_products", cusparse->products());
            }
            got = download(check_rows);
          } else {
            t = time_gpu([&] { spira::pairwise_distance(res, a, b, out.view(), params); });
            got = download(check_rows);
            if (sname == "automatic") {
              automatic_ms = t.median();
            }
          }
        } catch (const std::exception& e) {
          error = e.what();
          // A failed call must not leave its error behind for the next one: drain the stream and
          // clear the last error (a sticky device error would fail every later call, visibly).
          if (use_gpu && cudaStreamSynchronize(res.stream) != cudaSuccess) {
            std::fprintf(stderr, "bench_pairwise_gpu: the device failed after %s: %s\n",
                         sname.c_str(), e.what());
          }
          if (use_gpu) {
            cudaGetLastError();
          }
        }
        double diff = NAN;
        if (error.empty()) {
          if (reference.empty()) {
            reference = got;
            reference_strategy = sname;
            diff = 0;
          } else {
            diff = max_diff(got, reference, std::size_t(compared_rows * b.rows));
          }
          // A baseline that returns a wrong product without an error status is a failure too
          // (CuPy's cuSPARSE path once returned an empty product for 20newsgroups). The bound
          // allows the float dot-product expansion's rounding near 0 (euclidean(x, x)).
          double scale = 0;
          for (const V r : reference) {
            scale = std::max(scale, std::abs(double(r)));
          }
          if (is_cusparse && !(diff <= 1e-2 * (1.0 + scale))) {
            error = "cuSPARSE result differs from spira's by " + std::to_string(diff);
          }
        }
        rec.num("median_ms", error.empty() ? t.median() : NAN)
            .num("min_ms", error.empty() ? t.min() : NAN)
            .num("warmup_ms", t.warmup_ms)
            .integer("timed_calls", std::int64_t(t.ms.size()))
            .sci("max_diff_vs_first", diff)
            .str("first", reference_strategy)
            .str("skipped", "")
            .str("error", error)
            .print();
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_pairwise_gpu: %s: %s\n", label.c_str(), e.what());
    return 1;
  }
  return 0;
}
