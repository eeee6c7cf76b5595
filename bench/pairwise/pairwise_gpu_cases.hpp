// bench_pairwise_gpu's cases: the command line (options, parse), each problem's statistics and
// the rules that skip a (metric, strategy) pair on it (bench/pairwise/pairwise_gpu.cu). Host code.
#pragma once

#include "common/split.hpp"

#include <spira/spira.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace spira::bench::pairwise_gpu {

using V = float;
using I = std::int32_t;

/// Per-problem statistics of the dry run and of the skip rules.
struct problem_stats {
  std::int64_t rows_a = 0, rows_b = 0, cols = 0, nnz_a = 0, nnz_b = 0;
  double products = 0;  ///< Σ_c nnz(A[:,c]) nnz(B[:,c]): the intersection strategy's products
  double min_value = 0;
  [[nodiscard]] double hybrid_work(bool namm) const
  {
    return double(rows_a) * double(nnz_b) + (namm ? double(rows_b) * double(nnz_a) : 0.0);
  }
  [[nodiscard]] double dense_flops() const
  {
    return 2.0 * double(rows_a) * double(rows_b) * double(cols);
  }
  [[nodiscard]] double output_bytes() const { return double(rows_a) * double(rows_b) * sizeof(V); }
};

inline problem_stats statistics(spira::csr_view<V, I> a, spira::csr_view<V, I> b)
{
  problem_stats s{a.rows, b.rows, a.cols, a.nnz, b.nnz};
  std::vector<std::int64_t> ca(std::size_t(a.cols), 0), cb(std::size_t(b.cols), 0);
  for (std::int64_t e = 0; e < a.nnz; ++e) {
    ++ca[std::size_t(a.col_idx[e])];
  }
  for (std::int64_t e = 0; e < b.nnz; ++e) {
    ++cb[std::size_t(b.col_idx[e])];
  }
  for (std::size_t c = 0; c < ca.size(); ++c) {
    s.products += double(ca[c]) * double(cb[c]);
  }
  for (std::int64_t e = 0; e < b.nnz; ++e) {
    s.min_value = std::min(s.min_value, double(b.values[e]));
  }
  return s;
}

/// True when the metric's semiring is a NAMM (the union of the two rows: two hybrid passes).
inline bool is_namm(spira::metric m)
{
  using spira::metric;
  return m == metric::manhattan || m == metric::chebyshev || m == metric::minkowski ||
         m == metric::canberra || m == metric::braycurtis || m == metric::hamming ||
         m == metric::jaccard || m == metric::jensenshannon || m == metric::kl_divergence;
}

/// The cuSPARSE baseline's metrics: a finalize of the plain dot product.
inline bool cusparse_serves(spira::metric m)
{
  using spira::metric;
  return m == metric::cosine || m == metric::euclidean || m == metric::sqeuclidean ||
         m == metric::inner_product;
}

struct options {
  std::string file, synthetic, label;
  bool transpose = false, dry_run = false;
  std::int64_t query_rows = 0, synthetic_rows = 0, host_max_rows = 0;
  int repeats = 5, host_threads = 0;
  double case_budget_ms = 1500, host_budget_ms = 400;
  double max_hybrid_work = 4e11, max_dense_flops = 1.5e14;
  double deadline_at = 0;  ///< 0: none
  std::vector<std::string> metrics{"cosine", "euclidean", "manhattan", "chebyshev",
                                   "jensenshannon"};
  std::vector<std::string> strategies{"automatic", "intersection", "hybrid",
                                      "dense",     "cusparse",     "host"};
};

inline options parse(int argc, char** argv)
{
  options o;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto next = [&]() -> std::string {
      if (k + 1 >= argc) {
        std::fprintf(stderr, "bench_pairwise_gpu: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++k];
    };
    if (a == "--file") {
      o.file = next();
    } else if (a == "--transpose") {
      o.transpose = true;
    } else if (a == "--synthetic") {
      o.synthetic = next();
    } else if (a == "--synthetic-rows") {
      o.synthetic_rows = std::stoll(next());
    } else if (a == "--query-rows") {
      o.query_rows = std::stoll(next());
    } else if (a == "--metrics") {
      o.metrics = split(next());
    } else if (a == "--strategies") {
      o.strategies = split(next());
    } else if (a == "--repeats") {
      o.repeats = std::max(1, std::stoi(next()));
    } else if (a == "--case-budget-ms") {
      o.case_budget_ms = std::stod(next());
    } else if (a == "--host-budget-ms") {
      o.host_budget_ms = std::stod(next());
    } else if (a == "--host-max-rows") {
      o.host_max_rows = std::stoll(next());
    } else if (a == "--host-threads") {
      o.host_threads = std::stoi(next());
    } else if (a == "--max-hybrid-work") {
      o.max_hybrid_work = std::stod(next());
    } else if (a == "--max-dense-flops") {
      o.max_dense_flops = std::stod(next());
    } else if (a == "--deadline-at") {
      o.deadline_at = std::stod(next());
    } else if (a == "--dry-run") {
      o.dry_run = true;
    } else if (a == "--label") {
      o.label = next();
    } else {
      std::fprintf(stderr, "bench_pairwise_gpu: unknown argument %s (see the header comment)\n",
                   a.c_str());
      std::exit(2);
    }
  }
  if (o.file.empty() == o.synthetic.empty()) {
    std::fprintf(stderr, "bench_pairwise_gpu: give exactly one of --file and --synthetic\n");
    std::exit(2);
  }
  for (const auto& s : o.strategies) {
    if (s != "cusparse" && s != "host") {
      (void)spira::pairwise_strategy_from_string(s);
    }
  }
  for (const auto& m : o.metrics) {
    (void)spira::metric_from_string(m);
  }
  return o;
}

/// Why (metric, strategy) is not run on this problem ("" when it is run).
inline std::string skip_reason(const options& o, const problem_stats& st, spira::metric mt,
                               const std::string& sname)
{
  if (spira::requires_nonnegative(mt) && st.min_value < 0) {
    return std::string(spira::to_string(mt)) +
           " requires non-negative values; the matrix has negative entries";
  }
  if (sname == "cusparse") {
    return cusparse_serves(mt) ? "" : "not applicable: cuSPARSE SpGEMM computes dot products only";
  }
  if (sname == "host") {
    return "";
  }
  const spira::pairwise_strategy s = spira::pairwise_strategy_from_string(sname);
  if (!spira::supports_strategy(mt, s)) {
    return "not applicable: the strategy does not serve this metric";
  }
  if (s == spira::pairwise_strategy::hybrid && st.hybrid_work(is_namm(mt)) > o.max_hybrid_work) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "budget: hybrid work %.3g > --max-hybrid-work %.3g",
                  st.hybrid_work(is_namm(mt)), o.max_hybrid_work);
    return buf;
  }
  if (s == spira::pairwise_strategy::dense && st.dense_flops() > o.max_dense_flops) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "budget: dense %.3g flops > --max-dense-flops %.3g",
                  st.dense_flops(), o.max_dense_flops);
    return buf;
  }
  return "";
}

}  // namespace spira::bench::pairwise_gpu
