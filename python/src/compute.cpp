// spira Python bindings: dispatch from type-erased CSR arrays to the library's typed entry points.
#include "compute.hpp"

#include <spira/convert.hpp>
#include <spira/memory.hpp>
#include <spira/resources.hpp>

#include <algorithm>
#include <type_traits>
#include <vector>

namespace spira::python {

namespace {

/// Device memory for one block of distances when the caller gives no budget.
constexpr std::size_t default_cuda_block_bytes = std::size_t{1} << 30;

/// With a progress callback, host pairwise distances run in about this many blocks of rows of A
/// (the k-NN graph's knn_policy::progress_steps), so that Ctrl-C is seen within a few percent
/// of the call...
constexpr std::int64_t pairwise_progress_steps = 20;
/// ...but never fewer rows per block than this: each block transposes B again (O(nnz(B))).
constexpr std::int64_t pairwise_progress_min_rows = 256;

template <class V, class I>
csr_view<V, I> view_of(const csr_input& m)
{
  const std::int64_t nnz = m.indptr[m.rows];
  return {m.rows,
          m.cols,
          nnz,
          m.indptr,
          static_cast<const I*>(m.indices),
          static_cast<const V*>(m.data),
          memory_space::host};
}

/// Calls fn(type_identity<V>, type_identity<I>) for the value and index type of `m`.
template <class Fn>
decltype(auto) with_types(const csr_input& m, Fn&& fn)
{
  const auto by_index = [&]<class V>(std::type_identity<V> v) -> decltype(auto) {
    return m.index64 ? fn(v, std::type_identity<std::int64_t>{})
                     : fn(v, std::type_identity<std::int32_t>{});
  };
  return m.value64 ? by_index(std::type_identity<double>{}) : by_index(std::type_identity<float>{});
}

template <class V, class I>
void pairwise_typed(csr_view<V, I> a, csr_view<V, I> b, V* out, const distance_params& params,
                    bool cuda, std::size_t memory_budget, const progress_fn& progress)
{
  const host_resources host{};
  if (!cuda && !progress) {
    pairwise_distance(host, a, b, dense_view<V>{a.rows, b.rows, b.rows, out}, params);
    return;
  }
  if (!cuda) {
    // Blocks of rows of A, each written straight into its rows of out.
    const std::int64_t step =
        std::max((a.rows + pairwise_progress_steps - 1) / pairwise_progress_steps,
                 pairwise_progress_min_rows);
    std::vector<offset_t> ptr;
    for (std::int64_t r0 = 0; r0 < a.rows; r0 += step) {
      const std::int64_t r1 = std::min(a.rows, r0 + step);
      pairwise_distance(host, row_slice(a, r0, r1, ptr), b,
                        dense_view<V>{r1 - r0, b.rows, b.rows, out + r0 * b.rows}, params);
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
      sizeof(V) * static_cast<std::size_t>(std::max<std::int64_t>(1, b.rows));
  detail::expects<out_of_memory>(budget >= row_bytes,
                                 "pairwise_distances: memory_budget = ", budget,
                                 " bytes cannot hold one row of distances (", row_bytes, " bytes)");
  const auto step = static_cast<std::int64_t>(budget / row_bytes);
  const auto b_dev = to_device(res, b);
  std::vector<offset_t> ptr;
  for (std::int64_t r0 = 0; r0 < a.rows; r0 += step) {
    const std::int64_t r1 = std::min(a.rows, r0 + step);
    const auto a_dev = to_device(res, row_slice(a, r0, r1, ptr));
    dense_matrix<V> d(res, r1 - r0, b.rows);
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
  return with_types(index, [&]<class V, class I>(std::type_identity<V>, std::type_identity<I>) {
    const host_resources host{};
    const csr_view<V, I> iv = view_of<V, I>(index);
    validate(host, iv, csr_check::canonical, "X");
    std::optional<csr_view<V, I>> qv;
    if (queries) {
      qv = view_of<V, I>(*queries);
      validate(host, *qv, csr_check::canonical, "Y");
    }
    return cuda ? knn_graph(cuda_resources{}, iv, qv, params) : knn_graph(host, iv, qv, params);
  });
}

void pairwise_distances(const csr_input& a, const csr_input& b, void* out,
                        const distance_params& params, bool cuda, std::size_t memory_budget,
                        const progress_fn& progress)
{
  with_types(a, [&]<class V, class I>(std::type_identity<V>, std::type_identity<I>) {
    const host_resources host{};
    const csr_view<V, I> av = view_of<V, I>(a);
    const csr_view<V, I> bv = view_of<V, I>(b);
    validate(host, av, csr_check::canonical, "X");
    validate(host, bv, csr_check::canonical, "Y");
    pairwise_typed(av, bv, static_cast<V*>(out), params, cuda, memory_budget, progress);
  });
}

void select_k_dense(const void* in, bool value64, std::int64_t rows, std::int64_t cols,
                    std::int64_t k, bool largest, bool sorted, void* out_values,
                    std::int64_t* out_indices, bool cuda)
{
  const auto run = [&]<class T>(std::type_identity<T>) {
    const select_order order = largest ? select_order::largest : select_order::smallest;
    const select_params params{.sorted = sorted};
    const dense_view<const T> x{rows, cols, cols, static_cast<const T*>(in)};
    const dense_view<T> v{rows, k, k, static_cast<T*>(out_values)};
    const dense_view<std::int64_t> i{rows, k, k, out_indices};
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
                   std::int64_t* out_indices, bool cuda)
{
  with_types(m, [&]<class V, class I>(std::type_identity<V>, std::type_identity<I>) {
    const host_resources host{};
    const csr_view<V, I> mv = view_of<V, I>(m);
    validate(host, mv, csr_check::canonical, "A");
    const select_order order = largest ? select_order::largest : select_order::smallest;
    const select_params params{.sorted = sorted};
    const auto n = static_cast<std::size_t>(m.rows * k);
    std::vector<I> narrow(std::is_same_v<I, std::int64_t> ? 0 : n);
    I* idx = nullptr;
    if constexpr (std::is_same_v<I, std::int64_t>) {
      idx = out_indices;
    } else {
      idx = narrow.data();
    }
    const dense_view<V> v{m.rows, k, k, static_cast<V*>(out_values)};
    const dense_view<I> i{m.rows, k, k, idx};
    if (!cuda) {
      select_k(host, mv, k, order, v, i, params);
    } else {
      const cuda_resources res{};
      const auto md = to_device(res, mv);
      dense_matrix<V> vd(res, m.rows, k);
      dense_matrix<I> id(res, m.rows, k);
      select_k(res, md.view(), k, order, vd.view(), id.view(), params);
      copy(v.data, memory_space::host, vd.data(), memory_space::device, n, res);
      copy(i.data, memory_space::host, id.data(), memory_space::device, n, res);
    }
    if constexpr (!std::is_same_v<I, std::int64_t>) {
      std::copy(narrow.begin(), narrow.end(), out_indices);
    }
  });
}

}  // namespace spira::python
