// spira Python bindings: dispatch from type-erased CSR arrays to the library's typed entry points.
#include "compute.hpp"

#include <spira/convert.hpp>
#include <spira/detail/knn_policy.hpp>
#include <spira/memory.hpp>
#include <spira/resources.hpp>

#if defined(SPIRA_HAS_CUDA)
#include <spira/detail/knn_cuda_ops.hpp>  // detail::device_row_slice
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace spira::python {

namespace {

/// Device memory for one block of distances when the caller gives no budget.
constexpr std::size_t default_cuda_block_bytes = std::size_t{1} << 30;

/// Rows of A per block of a pairwise call with a progress callback: the k-NN graph's reporting
/// rule (about knn_policy::progress_steps blocks, so that Ctrl-C is seen within a few percent of
/// the call, of at least knn_policy::progress_min_rows rows on the host and cuda_progress_min_rows
/// on CUDA: each block transposes B again, and on CUDA ends with a synchronisation).
std::int64_t progress_block_rows(std::int64_t rows, bool cuda)
{
  using policy = detail::knn_policy;
  return policy::progress_rows(rows,
                               cuda ? policy::cuda_progress_min_rows : policy::progress_min_rows);
}

template <class ValueT, class IndexT>
csr_view<ValueT, IndexT> view_of(const csr_input& m)
{
  return {m.rows,
          m.cols,
          m.nnz,
          m.indptr,
          static_cast<const IndexT*>(m.indices),
          static_cast<const ValueT*>(m.data),
          m.on_device() ? memory_space::device : memory_space::host};
}

/// The resources of the CUDA device that holds `m`.
cuda_resources device_of(const csr_input& m)
{
  return cuda_resources{.device = m.device};
}

/// Checks `m` as canonical CSR where it is (name: the argument's name in Python).
template <class ValueT, class IndexT>
void validate_input(const csr_input& m, csr_view<ValueT, IndexT> v, const char* name)
{
  if (m.on_device()) {
    validate(device_of(m), v, csr_check::canonical, name);
  } else {
    validate(host_resources{}, v, csr_check::canonical, name);
  }
}

/// Calls fn(type_identity<ValueT>, type_identity<IndexT>) for the value and index type of `m`.
template <class Fn>
decltype(auto) with_types(const csr_input& m, Fn&& fn)
{
  const auto by_index = [&]<class ValueT>(std::type_identity<ValueT> v) -> decltype(auto) {
    return m.index64 ? fn(v, std::type_identity<std::int64_t>{})
                     : fn(v, std::type_identity<std::int32_t>{});
  };
  return m.value64 ? by_index(std::type_identity<double>{}) : by_index(std::type_identity<float>{});
}

/// Device operands and a device out: one call, or blocks of rows of A with `progress` (the
/// distances are written where they belong; nothing goes through the host).
template <class ValueT, class IndexT>
void pairwise_on_device(csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b, ValueT* out,
                        const distance_params& params, const cuda_resources& res,
                        const progress_fn& progress)
{
#if !defined(SPIRA_HAS_CUDA)
  (void)a, (void)b, (void)out, (void)params, (void)res, (void)progress;
  throw not_compiled("pairwise_distances: X is in CUDA memory, but this build has no CUDA backend");
#else
  const auto out_rows = [&](std::int64_t r0, std::int64_t r1) {
    return dense_view<ValueT>{r1 - r0, b.rows, b.rows, out + r0 * b.rows, memory_space::device};
  };
  if (!progress) {
    pairwise_distance(res, a, b, out_rows(0, a.rows), params);
    synchronize(res);
    return;
  }
  const std::int64_t step = progress_block_rows(a.rows, true);
  for (std::int64_t r0 = 0; r0 < a.rows; r0 += step) {
    const std::int64_t r1 = std::min(a.rows, r0 + step);
    buffer<offset_t> ptr;
    pairwise_distance(res, detail::device_row_slice(res, a, r0, r1, ptr), b, out_rows(r0, r1),
                      params);
    synchronize(res);
    progress(r1, a.rows);
  }
#endif
}

template <class ValueT, class IndexT>
void pairwise_typed(csr_view<ValueT, IndexT> a, csr_view<ValueT, IndexT> b, ValueT* out,
                    const distance_params& params, bool cuda, const cuda_resources& res_of,
                    std::size_t memory_budget, const progress_fn& progress)
{
  if (a.space == memory_space::device) {
    pairwise_on_device(a, b, out, params, res_of, progress);
    return;
  }
  const host_resources host{};
  if (!cuda && !progress) {
    pairwise_distance(host, a, b, dense_view<ValueT>{a.rows, b.rows, b.rows, out}, params);
    return;
  }
  if (!cuda) {
    // Blocks of rows of A, each written straight into its rows of out.
    const std::int64_t step = progress_block_rows(a.rows, false);
    std::vector<offset_t> ptr;
    for (std::int64_t r0 = 0; r0 < a.rows; r0 += step) {
      const std::int64_t r1 = std::min(a.rows, r0 + step);
      pairwise_distance(host, row_slice(a, r0, r1, ptr), b,
                        dense_view<ValueT>{r1 - r0, b.rows, b.rows, out + r0 * b.rows}, params);
      progress(r1, a.rows);
    }
    return;
  }
  // CUDA: B once on the device, A in blocks of rows whose distances fit the budget; each block's
  // distances are copied straight into their rows of out.
  const cuda_resources res{};
  const std::size_t budget = memory_budget > 0
                                 ? memory_budget
                                 : std::min(default_cuda_block_bytes, cuda_free_memory(res) / 2);
  const std::size_t row_bytes =
      sizeof(ValueT) * static_cast<std::size_t>(std::max<std::int64_t>(1, b.rows));
  detail::expects<out_of_memory>(budget >= row_bytes,
                                 "pairwise_distances: memory_budget = ", budget,
                                 " bytes cannot hold one row of distances (", row_bytes, " bytes)");
  auto step = static_cast<std::int64_t>(budget / row_bytes);
  if (progress) {
    // As on the host: several blocks, so that Ctrl-C is seen during the call.
    step = std::min(step, progress_block_rows(a.rows, true));
  }
  const auto b_dev = to_device(res, b);
  std::vector<offset_t> ptr;
  for (std::int64_t r0 = 0; r0 < a.rows; r0 += step) {
    const std::int64_t r1 = std::min(a.rows, r0 + step);
    const auto a_dev = to_device(res, row_slice(a, r0, r1, ptr));
    dense_matrix<ValueT> d(res, r1 - r0, b.rows);
    pairwise_distance(res, a_dev.view(), b_dev.view(), d.view(), params);
    copy(out + r0 * b.rows, memory_space::host, d.data(), memory_space::device,
         static_cast<std::size_t>((r1 - r0) * b.rows), res);
    if (progress) {
      progress(r1, a.rows);
    }
  }
}

}  // namespace

knn_result kneighbors(const csr_input& index, const std::optional<csr_input>& queries,
                      const knn_params& params, bool cuda)
{
  return with_types(index, [&]<class ValueT, class IndexT>(std::type_identity<ValueT>,
                                                           std::type_identity<IndexT>) {
    const csr_view<ValueT, IndexT> iv = view_of<ValueT, IndexT>(index);
    validate_input(index, iv, "X");
    std::optional<csr_view<ValueT, IndexT>> qv;
    if (queries) {
      qv = view_of<ValueT, IndexT>(*queries);
      validate_input(*queries, *qv, "Y");
    }
    if (index.on_device()) {
      const cuda_resources res = device_of(index);
      knn_result r = knn_graph(res, iv, qv, params);
      synchronize(res);
      return r;
    }
    return cuda ? knn_graph(cuda_resources{}, iv, qv, params)
                : knn_graph(host_resources{}, iv, qv, params);
  });
}

void pairwise_distances(const csr_input& a, const csr_input& b, void* out,
                        const distance_params& params, bool cuda, std::size_t memory_budget,
                        const progress_fn& progress)
{
  with_types(
      a, [&]<class ValueT, class IndexT>(std::type_identity<ValueT>, std::type_identity<IndexT>) {
        const csr_view<ValueT, IndexT> av = view_of<ValueT, IndexT>(a);
        const csr_view<ValueT, IndexT> bv = view_of<ValueT, IndexT>(b);
        validate_input(a, av, "X");
        validate_input(b, bv, "Y");
        pairwise_typed(av, bv, static_cast<ValueT*>(out), params, cuda, device_of(a), memory_budget,
                       progress);
      });
}

void select_k_dense(const void* in, bool value64, std::int64_t rows, std::int64_t cols,
                    std::int64_t k, bool largest, bool sorted, void* out_values,
                    std::int64_t* out_indices, bool cuda, int device)
{
  const auto run = [&]<class T>(std::type_identity<T>) {
    const select_order order = largest ? select_order::largest : select_order::smallest;
    const select_params params{.sorted = sorted};
    const memory_space space = device >= 0 ? memory_space::device : memory_space::host;
    const dense_view<const T> x{rows, cols, cols, static_cast<const T*>(in), space};
    const dense_view<T> v{rows, k, k, static_cast<T*>(out_values), space};
    const dense_view<std::int64_t> i{rows, k, k, out_indices, space};
    if (device >= 0) {
      const cuda_resources res{.device = device};
      select_k<T, std::int64_t>(res, x, k, order, v, i, params);
      synchronize(res);
      return;
    }
    if (!cuda) {
      select_k<T, std::int64_t>(host_resources{}, x, k, order, v, i, params);
      return;
    }
    const cuda_resources res{};
    dense_matrix<T> xd(res, rows, cols);
    dense_matrix<T> vd(res, rows, k);
    dense_matrix<std::int64_t> id(res, rows, k);
    const auto n = [](std::int64_t a, std::int64_t b) { return static_cast<std::size_t>(a * b); };
    copy(xd.data(), memory_space::device, x.data, memory_space::host, n(rows, cols), res);
    select_k<T, std::int64_t>(res, dense_view<const T>(xd.view()), k, order, vd.view(), id.view(),
                              params);
    copy(v.data, memory_space::host, vd.data(), memory_space::device, n(rows, k), res);
    copy(i.data, memory_space::host, id.data(), memory_space::device, n(rows, k), res);
  };
  if (value64) {
    run(std::type_identity<double>{});
  } else {
    run(std::type_identity<float>{});
  }
}

void select_k_rows(const csr_input& m, std::int64_t k, bool largest, bool sorted, void* out_values,
                   void* out_indices, bool cuda)
{
  with_types(m, [&]<class ValueT, class IndexT>(std::type_identity<ValueT>,
                                                std::type_identity<IndexT>) {
    const host_resources host{};
    const csr_view<ValueT, IndexT> mv = view_of<ValueT, IndexT>(m);
    validate_input(m, mv, "A");
    const select_order order = largest ? select_order::largest : select_order::smallest;
    const select_params params{.sorted = sorted};
    if (m.on_device()) {
      const cuda_resources res = device_of(m);
      select_k(
          res, mv, k, order,
          dense_view<ValueT>{m.rows, k, k, static_cast<ValueT*>(out_values), memory_space::device},
          dense_view<IndexT>{m.rows, k, k, static_cast<IndexT*>(out_indices), memory_space::device},
          params);
      synchronize(res);
      return;
    }
    const auto n = static_cast<std::size_t>(m.rows * k);
    std::vector<IndexT> narrow(std::is_same_v<IndexT, std::int64_t> ? 0 : n);
    IndexT* idx = nullptr;
    if constexpr (std::is_same_v<IndexT, std::int64_t>) {
      idx = static_cast<std::int64_t*>(out_indices);
    } else {
      idx = narrow.data();
    }
    const dense_view<ValueT> v{m.rows, k, k, static_cast<ValueT*>(out_values)};
    const dense_view<IndexT> i{m.rows, k, k, idx};
    if (!cuda) {
      select_k(host, mv, k, order, v, i, params);
    } else {
      const cuda_resources res{};
      const auto md = to_device(res, mv);
      dense_matrix<ValueT> vd(res, m.rows, k);
      dense_matrix<IndexT> id(res, m.rows, k);
      select_k(res, md.view(), k, order, vd.view(), id.view(), params);
      copy(v.data, memory_space::host, vd.data(), memory_space::device, n, res);
      copy(i.data, memory_space::host, id.data(), memory_space::device, n, res);
    }
    if constexpr (!std::is_same_v<IndexT, std::int64_t>) {
      std::copy(narrow.begin(), narrow.end(), static_cast<std::int64_t*>(out_indices));
    }
  });
}

/// Whether every value is finite: a value is not when its exponent bits are all ones (infinity
/// and NaN). Tested on the bits, so that the loop is a vectorisable OR over the data.
template <class ValueT, class BitsT>
bool all_finite_typed(const ValueT* data, std::int64_t n, BitsT exponent)
{
  static_assert(sizeof(ValueT) == sizeof(BitsT));
  BitsT bad = 0;
#pragma omp parallel for num_threads(host_resources{}.num_threads()) reduction(| : bad) \
    schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    BitsT bits;
    std::memcpy(&bits, data + i, sizeof bits);
    bad |= BitsT((bits & exponent) == exponent);
  }
  return bad == 0;
}

bool all_finite(const void* data, bool value64, std::int64_t n)
{
  return value64 ? all_finite_typed(static_cast<const double*>(data), n,
                                    std::uint64_t{0x7ff0000000000000})
                 : all_finite_typed(static_cast<const float*>(data), n, std::uint32_t{0x7f800000});
}

}  // namespace spira::python
