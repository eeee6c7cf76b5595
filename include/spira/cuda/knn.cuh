// spira: k-nearest neighbours with the top-k fused into the intersection kernel (CUDA).
//
// For rows of bounded degree the distance tile of a k-NN query never needs to exist: one block
// walks the index in tiles of output columns exactly as the intersection strategy of the pairwise
// engine does (spira/cuda/pairwise.cuh: a shared-memory accumulator per tile, the CSC of the index
// built once), and instead of writing a finalized tile it keeps the best k of the row in shared
// memory. Memory: O(nnz) for the index's CSC and the per-row statistics, plus n_q x k outputs,
// whatever the number of index rows.
//
// Selection inside a block: the best k so far, sorted, followed by a candidate buffer. A finalized
// distance becomes a candidate when it beats the current k-th best under the total order of
// spira::select_k (value, then index; NaN worst). When the buffer may overflow, when it could fill
// a list not yet full (until then there is no bar), and at the end of the row, list and buffer are
// sorted together (a bitonic sort of (key, index) pairs in shared memory, over the smallest power
// of two that holds them) and the first k kept. The pairs are unique, so the result does not depend
// on the order in which threads appended candidates: it is deterministic for given distances, and
// equal to select_k over the tile the unfused path would have written.
//
// The accuracy guard (spira/accuracy.hpp) only tests pairs here: a pair whose fast value it does
// not trust is queued instead of ranked, and after the launch the queued pairs are evaluated
// directly (their own kernel) and merged into their rows' lists the same way (knn_deferred). The
// best k of the trusted pairs and of the queued ones are the best k of the row. Pairs of equal
// rows, which the guard never trusts, take the direct value 0 without the queue where the distance
// declares zero_self_distance (knn_equal_rows.cuh).
//
// Pairs whose rows share no column: for a distance that gives them all one value (cosine: 1,
// inner_product: 0; `disjoint_distance` in spira/accuracy.hpp), a row ranks the first k of them and
// skips the others, which tie with those and come later in the index order. On short rows over
// many columns (character n-grams) nearly every pair is such a pair: a row with few products goes
// by its products alone (sorted (index row, product) pairs in shared memory), a longer one walks
// the index reading the accumulator tile, and its cost follows the pairs that share a column.
// Where most pairs share a column (products beside the index's rows, knn_fused_gates) the walk
// does not look for such pairs: it ranks every pair. Such a pair whose fast value the guard does
// not trust (against an all-zero index row) takes the declared value instead of being queued. An
// all-zero query row, where the distance declares zero_rows_distance (cosine: 0 with another
// all-zero row, 1 with the others), does not walk: its list comes from the index rows' all-zero
// flags alone.
//
// Entry points: spira::knn_fused on device operands, and spira::knn_graph for a user's semiring
// struct (host operands and result, like the built-in metrics' knn_graph of spira/knn.hpp), which
// fuses where it can and tiles otherwise:
//
//   #include <spira/cuda/knn.cuh>
//   auto g = spira::knn_graph(cuda_res, index.view(), std::nullopt, my_distance{},
//                             spira::select_order::smallest, {.k = 15});
#pragma once

#include <spira/cuda/detail/knn_deferred.cuh>
#include <spira/cuda/detail/knn_equal_rows.cuh>
#include <spira/cuda/detail/knn_fused_kernel.cuh>  // also spira::knn_fused_max_k
#include <spira/cuda/pairwise.cuh>
#include <spira/detail/knn_cuda_ops.hpp>
#include <spira/detail/knn_policy.hpp>
#include <spira/knn.hpp>
#include <spira/ops.hpp>
#include <spira/selection/keys.hpp>

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace spira {

#if defined(__CUDACC__)

namespace detail {

/// knn_fused on checked arguments (canonical device operands, contiguous outputs, 1 <= k <=
/// knn_fused_max_k). With exclude_self and `self_values` (device, rows(queries) values), the
/// pair (i, i) is still evaluated and its value, rounded to float, stored in self_values[i].
/// `gates`: the ways rows are taken (knn_fused_gates: the policy's unless a test or a profile says
/// otherwise) and their counters.
template <class D, class ValueT, class IndexT>
void knn_fused_run(const cuda_resources& res, csr_view<ValueT, IndexT> queries,
                   csr_view<ValueT, IndexT> index, const D& d, std::int64_t k, bool largest,
                   bool exclude_self, ValueT* self_values, dense_view<ValueT> out_values,
                   dense_view<std::int64_t> out_indices,
                   const std::function<void(std::int64_t, std::int64_t)>& progress,
                   const knn_fused_gates& gates = {})
{
  detail::device_guard scope(res.device);
  if (queries.rows == 0 || index.rows == 0) {
    return;
  }
  detail::pairwise_context<D, ValueT, IndexT> ctx(res, d, queries, index, dense_view<ValueT>{});
  detail::intersection_setup<D, ValueT, IndexT> setup(ctx);
  detail::knn_fused_select s{};
  s.k = int(k);
  s.sort_size = detail::knn_fused_sort_size(k);
  s.largest = largest;
  s.exclude_self = exclude_self;
  s.self_values = exclude_self ? self_values : nullptr;
  s.gates = gates;
  constexpr bool guarded = accuracy_traits<D, double>::guarded;
  std::optional<buffer<unsigned char>> untrusted;
  if (guarded && s.self_values != nullptr) {
    untrusted.emplace(res, std::size_t(queries.rows), "untrusted self distances");
    fill_zero_bytes(untrusted->data(), memory_space::device, std::size_t(queries.rows), res);
    s.self_untrusted = untrusted->data();
  }
  std::optional<buffer<unsigned>> blocked;
  std::optional<buffer<unsigned char>> zero_rows;  // all-zero query rows, then index rows
  if constexpr (accuracy_traits<D, double>::disjoint) {
    blocked.emplace(res, 1, "disjoint pairs flag");
    fill_zero_bytes(blocked->data(), memory_space::device, sizeof(unsigned), res);
    unsigned char* zero_queries = nullptr;
    unsigned char* zero_index = nullptr;
    if constexpr (accuracy_traits<D, double>::zero_rows) {
      zero_rows.emplace(res, std::size_t(queries.rows + index.rows), "all-zero row flags");
      zero_queries = zero_rows->data();
      zero_index = zero_queries + queries.rows;
      s.zero_queries = zero_queries;
      s.zero_index = zero_index;
    }
    knn_disjoint_index_kernel<D, ValueT, IndexT>
        <<<elementwise_grid(std::max(index.rows, queries.rows), ctx.sms),
           cuda_pairwise_policy::row_threads, 0, res.stream>>>(setup.args, blocked->data(),
                                                               zero_queries, zero_index);
    SPIRA_CHECK_LAUNCH();
    s.disjoint_blocked = blocked->data();
  }
  std::optional<knn_equal_rows<D, ValueT, IndexT>> equal;
  if (knn_equal_rows<D, ValueT, IndexT>::used && gates.equal_rows) {
    equal.emplace(res, setup.args, same_matrix(queries, index), ctx.sms);
    s.equal_queries = equal->queries();
    s.equal_index = equal->index();
  }
  s.acc_bytes = ((setup.accumulator_bytes() + 15) / 16) * 16;
  s.out_values = out_values.data;
  s.out_indices = out_indices.data;
  const std::size_t shared = s.acc_bytes +
                             ((std::size_t(s.sort_size) * sizeof(ValueT) + 15) / 16) * 16 +
                             std::size_t(s.sort_size) * sizeof(std::int64_t);
  const auto kernel = detail::knn_fused_kernel<D, ValueT, IndexT>;
  SPIRA_CUDA_TRY(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
  // One launch for all rows; with a progress callback the calling thread follows it (reports and
  // a stop when the callback throws) instead of splitting it.
  detail::knn_deferred_queue<D, ValueT, IndexT> deferred(res, queries.rows);
  std::optional<detail::launch_progress> watch;
  if (progress) {
    watch.emplace(res);
    s.watch = watch->device();
  }
  const auto run_rows = [&](const auto& again, std::int64_t r0, std::int64_t r1,
                            const unsigned char* only) -> void {
    s.row_begin = r0;
    s.row_end = r1;
    s.only = only;
    s.deferred = deferred.reset(r1 - r0);
    const unsigned grid =
        unsigned(std::min<std::int64_t>(r1 - r0, std::numeric_limits<int>::max()));
    kernel<<<grid, cuda_pairwise_policy::intersection_threads, shared, res.stream>>>(setup.args, s);
    SPIRA_CHECK_LAUNCH();
    if (s.watch != nullptr) {
      watch->follow(queries.rows, progress);
      s.watch = nullptr;  // rows launched again below are neither counted nor stopped
    }
    // Rows that lost queued pairs to a full queue run again, in ranges whose pairs fit it.
    const detail::knn_rerun rerun = deferred.resolve(setup.args, s, ctx.sms);
    for (const auto& [g0, g1] : rerun.ranges) {
      again(again, g0, g1, rerun.rows.data() + (g0 - rerun.row_begin));
    }
  };
  run_rows(run_rows, 0, queries.rows, nullptr);
  if (untrusted) {
    // A warp per row where the distance vanishes on the diagonal, else a thread per row.
    const std::int64_t threads = queries.rows * (accuracy_traits<D, double>::zero_self ? 32 : 1);
    knn_self_direct_kernel<D, ValueT, IndexT>
        <<<elementwise_grid(threads, ctx.sms), cuda_pairwise_policy::row_threads, 0, res.stream>>>(
            setup.args, queries.rows, untrusted->data(), self_values);
    SPIRA_CHECK_LAUNCH();
  }
  if (progress) {
    SPIRA_CUDA_TRY(cudaStreamSynchronize(res.stream));
    progress(queries.rows, queries.rows);
  }
  // The setup's buffers are released stream-ordered when it goes out of scope.
}

}  // namespace detail

/// The k nearest rows of `index` (by D, smallest values first, or largest with `largest`) for
/// every row of `queries`, with the top-k fused into the intersection kernel. Both canonical CSR in
/// device memory with the same columns; D must admit the intersection strategy (annihilating, a
/// NAMM with a sum ⊕, or a one-term NAMM with min / max ⊕); 1 <= k <= knn_fused_max_k. With
/// exclude_self (queries == index), index row i is skipped for query row i. out_values and
/// out_indices: rows(queries) x k, device, contiguous; each row sorted best first (value, then
/// index; NaN last); a row with fewer than k candidates is padded with index -1 and +-inf.
/// Queued on res.stream. With a `progress` callback the call waits for its end, calling
/// progress(rows done, rows) about knn_policy::progress_steps times while the one launch runs and
/// once at the end; when progress throws, the rows not yet begun are skipped and the exception
/// propagates (spira/cuda/detail/launch_progress.cuh).
template <class D, class ValueT, class IndexT>
void knn_fused(const cuda_resources& res, csr_view<ValueT, IndexT> queries,
               csr_view<ValueT, IndexT> index, const D& d, std::int64_t k, bool largest,
               bool exclude_self, dense_view<ValueT> out_values,
               dense_view<std::int64_t> out_indices,
               const std::function<void(std::int64_t, std::int64_t)>& progress = {})
{
  constexpr const char* op = "spira::knn_fused";
  static_assert(detail::intersection_capable_v<D, ValueT>,
                "spira::knn_fused: D must admit the intersection strategy (annihilating, a NAMM "
                "with a sum add monoid, or a one-term NAMM with a min / max add monoid)");
  detail::require_device_space(queries.space, op, "queries");
  detail::require_device_space(index.space, op, "index");
  detail::require_device_space(out_values.space, op, "out_values");
  detail::require_device_space(out_indices.space, op, "out_indices");
  detail::expects<dimension_mismatch>(queries.cols == index.cols, op, ": the queries have ",
                                      queries.cols, " columns but the index has ", index.cols);
  detail::expects(k >= 1 && k <= knn_fused_max_k, op, ": k = ", k, " must be in [1, ",
                  knn_fused_max_k, "]");
  detail::expects(!exclude_self || queries.rows == index.rows, op,
                  ": exclude_self needs the queries to be the index");
  detail::expects<dimension_mismatch>(
      out_values.rows == queries.rows && out_values.cols == k && out_values.ld == k &&
          out_indices.rows == queries.rows && out_indices.cols == k && out_indices.ld == k,
      op, ": out_values and out_indices must be contiguous ", queries.rows, " x ", k);
  detail::device_guard scope(res.device);
  validate(res, queries, csr_check::canonical, "spira::knn_fused: queries");
  validate(res, index, csr_check::canonical, "spira::knn_fused: index");
  detail::knn_fused_run(res, queries, index, d, k, largest, exclude_self, nullptr, out_values,
                        out_indices, progress);
}

namespace detail {

/// Whether knn_graph on CUDA takes the fused algorithm for D on these operands (host views: only
/// shapes and nnz are read) within `budget` device bytes. Throws invalid_argument (out_of_memory)
/// when params.algo forces `fused` where it cannot run.
template <class D, class ValueT, class IndexT>
bool knn_fused_applies(csr_view<ValueT, IndexT> queries, csr_view<ValueT, IndexT> index,
                       const knn_params& params, std::size_t budget)
{
  if (params.algo == knn_algo::tiled) {
    return false;
  }
  const bool forced = params.algo == knn_algo::fused;
  const bool tiles_forced = params.query_tile > 0 || params.index_tile > 0;
  expects(!forced || !tiles_forced,
          "knn_graph: query_tile and index_tile size the tiles of the "
          "tiled algorithm; they cannot be combined with the fused one");
  if (tiles_forced) {
    return false;
  }
  constexpr bool intersection_capable = intersection_capable_v<D, ValueT>;
  const pairwise_strategy s = resolve_strategy<D>(queries, index, params.strategy);
  expects(!forced || (intersection_capable && s == pairwise_strategy::intersection),
          "knn_graph: the fused algorithm needs the intersection strategy; ", to_string(s), " was ",
          params.strategy == pairwise_strategy::automatic ? "chosen" : "requested");
  expects(!forced || params.k <= knn_fused_max_k,
          "knn_graph: the fused algorithm serves k <= ", knn_fused_max_k, ", got k = ", params.k);
  if (!intersection_capable || s != pairwise_strategy::intersection || params.k > knn_fused_max_k) {
    return false;
  }
  const std::size_t need =
      knn_fused_bytes(queries, index, params.k, accuracy_traits<D, double>::zero_self);
  expects<out_of_memory>(!forced || need <= budget, "knn_graph: the fused algorithm needs about ",
                         need, " device bytes, more than the memory budget of ", budget);
  return need <= budget;
}

}  // namespace detail

/// The exact k-NN graph for a user-defined semiring or distance struct D on the GPU, with the
/// contract of spira::knn_graph (spira/knn.hpp): index and queries (default: the index) canonical
/// CSR, both in host memory (result in host memory) or both in device memory of res.device (result
/// in device memory); rows best first with the smaller index first among ties; `order` says which
/// end D's values are kept from (smallest for distances, largest for similarities); params.metric
/// and params.p are not used. Fused (spira::knn_fused) where D admits the intersection strategy
/// and params allow it, else tiled through spira::pairwise (with params.strategy) and select_k.
template <class D, class ValueT, class IndexT>
knn_result knn_graph(const cuda_resources& res, csr_view<ValueT, IndexT> index,
                     std::type_identity_t<std::optional<csr_view<ValueT, IndexT>>> queries,
                     const D& d, select_order order, const knn_params& params)
{
  const csr_view<ValueT, IndexT> q = detail::check_knn_args(index, queries, params, true);
  const bool largest = order == select_order::largest;
  detail::device_guard scope(res.device);
  detail::knn_validate(res, index, queries);
  const std::size_t budget = detail::knn_cuda_budget(res, params);
  constexpr bool capable = detail::intersection_capable_v<D, ValueT>;
  // (A forced `fused` that cannot run is rejected here in either case.)
  const bool use_fused = detail::knn_fused_applies<D>(q, index, params, budget) && capable;
  return detail::knn_cuda(
      res, index, queries, params, largest, budget, use_fused,
      [&](csr_view<ValueT, IndexT> qv, csr_view<ValueT, IndexT> iv, dense_view<ValueT> out,
          detail::pairwise_prepared<D, ValueT, IndexT>* prepared) {
        detail::pairwise_cuda(res, qv, iv, out, d, params.strategy, 0, "workspace_bytes", false,
                              prepared);
      },
      [&](csr_view<ValueT, IndexT> iv) {
        return std::make_unique<detail::pairwise_prepared<D, ValueT, IndexT>>(res, d, iv);
      },
      [&](csr_view<ValueT, IndexT> qv, csr_view<ValueT, IndexT> iv, std::int64_t k, bool skip_self,
          ValueT* self_values, dense_view<ValueT> dv, dense_view<std::int64_t> di) {
        if constexpr (capable) {
          detail::knn_fused_run(res, qv, iv, d, k, largest, skip_self, self_values, dv, di,
                                params.progress);
        }
      });
}

#endif  // __CUDACC__

}  // namespace spira
