// spira._core: the nanobind module behind the Python package. It converts the arrays the Python
// layer prepared (canonical CSR: int64 row pointers, int32/int64 columns, float32/float64 values)
// into library calls made with the GIL released (the long ones interruptible by Ctrl-C between
// tiles, see interrupt.hpp), and maps the library's exceptions onto Python's.
// Argument conventions and conversions of user input live in python/spira/*.py.
#include "compute.hpp"
#include "interrupt.hpp"

#include <spira/config.hpp>
#include <spira/distance.hpp>
#include <spira/error.hpp>
#include <spira/knn.hpp>
#include <spira/resources.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#if defined(SPIRA_HAS_CUDA)
#include <cuda_runtime_api.h>
#endif

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace spira::python {

namespace {

/// Arrays in host memory or in the memory of a CUDA device (NumPy, CuPy, torch, any DLPack
/// producer), read only.
using any_vector = nb::ndarray<nb::ro, nb::ndim<1>, nb::c_contig>;
using any_matrix = nb::ndarray<nb::ndim<2>, nb::c_contig>;
using index_matrix = nb::ndarray<std::int64_t, nb::ndim<2>, nb::c_contig>;

/// The CUDA device holding `a`, or -1 for host memory; other memory is refused.
template <class Array>
int device_of_array(const Array& a, const char* name)
{
  if (a.device_type() == nb::device::cpu::value) {
    return -1;
  }
  detail::expects(a.device_type() == nb::device::cuda::value, name,
                  ": the array is neither in host memory nor in CUDA device memory");
  return static_cast<int>(a.device_id());
}

/// (rows, cols, indptr, indices, data) from the Python layer as a csr_input; the tuple keeps the
/// arrays alive for the call. Checks what the library cannot: dtypes, array lengths and that all
/// three arrays are in the same memory (the row pointers' end is checked by the library's
/// validation).
csr_input csr_of(const nb::tuple& t, const char* name)
{
  if (t.size() != 5) {
    throw invalid_argument(detail::concat(name, ": expected (rows, cols, indptr, indices, data)"));
  }
  csr_input m;
  m.rows = nb::cast<std::int64_t>(t[0]);
  m.cols = nb::cast<std::int64_t>(t[1]);
  const auto indptr = nb::cast<any_vector>(t[2]);
  const auto indices = nb::cast<any_vector>(t[3]);
  const auto data = nb::cast<any_vector>(t[4]);
  detail::expects(m.rows >= 0 && m.cols >= 0, name, ": negative shape (", m.rows, ", ", m.cols,
                  ")");
  m.device = device_of_array(indptr, name);
  detail::expects(
      device_of_array(indices, name) == m.device && device_of_array(data, name) == m.device, name,
      ": the row pointers, column indices and values must be in the same memory");
  detail::expects(indptr.dtype() == nb::dtype<std::int64_t>(), name,
                  ": the row pointers must be int64");
  detail::expects(indptr.shape(0) == static_cast<std::size_t>(m.rows) + 1, name, ": ",
                  indptr.shape(0), " row pointers for ", m.rows, " rows");
  m.indptr = static_cast<const std::int64_t*>(indptr.data());
  m.nnz = m.on_device() ? static_cast<std::int64_t>(indices.shape(0)) : m.indptr[m.rows];
  const std::int64_t nnz = m.nnz;
  detail::expects(nnz >= 0 && indices.shape(0) == static_cast<std::size_t>(nnz) &&
                      data.shape(0) == static_cast<std::size_t>(nnz),
                  name, ": the row pointers end at ", nnz, " but there are ", indices.shape(0),
                  " column indices and ", data.shape(0), " values");
  if (indices.dtype() == nb::dtype<std::int64_t>()) {
    m.index64 = true;
  } else {
    detail::expects(indices.dtype() == nb::dtype<std::int32_t>(), name,
                    ": the column indices must be int32 or int64");
  }
  if (data.dtype() == nb::dtype<double>()) {
    m.value64 = true;
  } else {
    detail::expects(data.dtype() == nb::dtype<float>(), name,
                    ": the values must be float32 or float64");
  }
  m.indices = indices.data();
  m.data = data.data();
  return m;
}

void check_same_types(const csr_input& x, const csr_input& y)
{
  detail::expects(x.index64 == y.index64 && x.value64 == y.value64,
                  "X and Y must have the same value and index types");
  detail::expects<dimension_mismatch>(x.cols == y.cols, "X has ", x.cols, " columns but Y has ",
                                      y.cols);
  detail::expects(x.device == y.device, "X and Y must be in the same memory (",
                  x.on_device() ? "CUDA device " + std::to_string(x.device) : "host", " and ",
                  y.on_device() ? "CUDA device " + std::to_string(y.device) : "host", ")");
}

using knn_distances = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using knn_indices = nb::ndarray<const std::int64_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

/// The result's two arrays sharing one owner, the result, freed when the last of them is
/// collected: NumPy arrays for a result in host memory; for one on CUDA device `device`, arrays
/// the Python layer hands to its framework through DLPack (CuPy or torch), without a copy.
nb::tuple knn_arrays(std::unique_ptr<knn_result> result, int device = -1)
{
  knn_result* r = result.release();
  nb::capsule owner(r, [](void* p) noexcept { delete static_cast<knn_result*>(p); });
  const std::size_t shape[2] = {static_cast<std::size_t>(r->indices.rows()),
                                static_cast<std::size_t>(r->indices.cols())};
  if (device >= 0) {
    const auto on = nb::device::cuda::value;
    auto distances = nb::ndarray<float, nb::ndim<2>, nb::c_contig>(
        r->distances.data(), 2, shape, owner, nullptr, nb::dtype<float>(), on, device);
    auto indices = nb::ndarray<std::int64_t, nb::ndim<2>, nb::c_contig>(
        r->indices.data(), 2, shape, owner, nullptr, nb::dtype<std::int64_t>(), on, device);
    return nb::make_tuple(distances, indices);
  }
  auto distances = nb::ndarray<nb::numpy, float, nb::ndim<2>>(r->distances.data(), 2, shape, owner);
  auto indices =
      nb::ndarray<nb::numpy, std::int64_t, nb::ndim<2>>(r->indices.data(), 2, shape, owner);
  return nb::make_tuple(distances, indices);
}

/// spira::merge_knn (host backend) of (distances float32, indices int64) pairs of C-contiguous
/// n_q x k_p arrays; the list keeps them alive for the call. `check_rows` = false: the parts are
/// the library's own partial results (spira.dask), whose rows are not checked again.
nb::tuple merge_knn_py(const std::vector<std::pair<knn_distances, knn_indices>>& parts,
                       std::int64_t k, bool largest, bool check_rows)
{
  std::vector<knn_result_view> views;
  views.reserve(parts.size());
  for (const auto& [d, i] : parts) {
    const auto rows = [](const auto& a) { return static_cast<std::int64_t>(a.shape(0)); };
    const auto cols = [](const auto& a) { return static_cast<std::int64_t>(a.shape(1)); };
    views.push_back({dense_view<const std::int64_t>{rows(i), cols(i), cols(i), i.data()},
                     dense_view<const float>{rows(d), cols(d), cols(d), d.data()}});
  }
  auto result = std::make_unique<knn_result>();
  {
    nb::gil_scoped_release release;
    *result = merge_knn(host_resources{}, std::span<const knn_result_view>(views), k,
                        largest ? select_order::largest : select_order::smallest,
                        check_rows ? merge_check::rows : merge_check::shapes);
  }
  return knn_arrays(std::move(result));
}

/// spira::symmetrize or spira::fuzzy_union of a square float32 CSR graph with int64 indices, in
/// host memory or on a CUDA device (computed there); returns (indptr, indices, data) of the
/// canonical result in the input's memory, owning it (device arrays go to the Python layer's
/// framework through DLPack).
nb::tuple graph_union_py(const nb::tuple& g, const std::string& which)
{
  detail::expects(which == "symmetrize" || which == "fuzzy_union",
                  "graph_union: which must be 'symmetrize' or 'fuzzy_union', got '", which, "'");
  const csr_input m = csr_of(g, "G");
  detail::expects(!m.value64 && m.index64, "G: expected a float32 CSR matrix with int64 indices");
  const csr_view<float, std::int64_t> v{m.rows,
                                        m.cols,
                                        m.nnz,
                                        m.indptr,
                                        static_cast<const std::int64_t*>(m.indices),
                                        static_cast<const float*>(m.data),
                                        m.on_device() ? memory_space::device : memory_space::host};
  const bool fuzzy = which == "fuzzy_union";
  auto out = std::make_unique<csr_matrix<float, std::int64_t>>();
  {
    nb::gil_scoped_release release;
    if (m.on_device()) {
      const cuda_resources res{m.device};
      *out = fuzzy ? fuzzy_union(res, v) : symmetrize(res, v);
      synchronize(res);
    } else {
      *out = fuzzy ? fuzzy_union(v) : symmetrize(v);
    }
  }
  auto* r = out.release();
  nb::capsule owner(
      r, [](void* p) noexcept { delete static_cast<csr_matrix<float, std::int64_t>*>(p); });
  const std::size_t n_ptr[1] = {static_cast<std::size_t>(r->rows() + 1)};
  const std::size_t n_nz[1] = {static_cast<std::size_t>(r->nnz())};
  if (m.on_device()) {
    const auto on = nb::device::cuda::value;
    return nb::make_tuple(
        nb::ndarray<offset_t, nb::ndim<1>>(r->row_ptr(), 1, n_ptr, owner, nullptr,
                                           nb::dtype<offset_t>(), on, m.device),
        nb::ndarray<std::int64_t, nb::ndim<1>>(r->col_idx(), 1, n_nz, owner, nullptr,
                                               nb::dtype<std::int64_t>(), on, m.device),
        nb::ndarray<float, nb::ndim<1>>(r->values(), 1, n_nz, owner, nullptr, nb::dtype<float>(),
                                        on, m.device));
  }
  return nb::make_tuple(
      nb::ndarray<nb::numpy, offset_t, nb::ndim<1>>(r->row_ptr(), 1, n_ptr, owner),
      nb::ndarray<nb::numpy, std::int64_t, nb::ndim<1>>(r->col_idx(), 1, n_nz, owner),
      nb::ndarray<nb::numpy, float, nb::ndim<1>>(r->values(), 1, n_nz, owner));
}

nb::tuple kneighbors_py(const nb::tuple& x, std::optional<nb::tuple> y, std::int64_t k,
                        const std::string& metric_name, double p, bool exclude_self, bool cuda,
                        std::size_t memory_budget, nb::object progress)
{
  const csr_input index = csr_of(x, "X");
  std::optional<csr_input> queries;
  if (y) {
    queries = csr_of(*y, "Y");
    check_same_types(index, *queries);
  }
  knn_params params;
  params.k = k;
  params.metric = metric_from_string(metric_name);
  params.p = p;
  params.exclude_self = exclude_self;
  params.memory_budget = memory_budget;
  interruptible_call call(std::move(progress));
  params.progress = call.callback();
  auto result = std::make_unique<knn_result>();
  call.run([&] { *result = kneighbors(index, queries, params, cuda); });
  return knn_arrays(std::move(result), index.device);
}

void pairwise_py(const nb::tuple& x, const nb::tuple& y, any_matrix out,
                 const std::string& metric_name, double p, bool cuda, std::size_t memory_budget,
                 nb::object progress)
{
  const csr_input a = csr_of(x, "X");
  const csr_input b = csr_of(y, "Y");
  check_same_types(a, b);
  detail::expects(device_of_array(out, "out") == a.device, "out must be in the memory of X");
  detail::expects(out.shape(0) == static_cast<std::size_t>(a.rows) &&
                      out.shape(1) == static_cast<std::size_t>(b.rows),
                  "out: expected shape (", a.rows, ", ", b.rows, ")");
  detail::expects(out.dtype() == (a.value64 ? nb::dtype<double>() : nb::dtype<float>()),
                  "out: the dtype must be the inputs' value type");
  const distance_params params{.metric = metric_from_string(metric_name), .p = p};
  interruptible_call call(std::move(progress));
  const progress_fn report = call.callback();
  call.run([&] { pairwise_distances(a, b, out.data(), params, cuda, memory_budget, report); });
}

bool all_finite_py(nb::ndarray<nb::ro, nb::ndim<1>, nb::c_contig, nb::device::cpu> data)
{
  const bool value64 = data.dtype() == nb::dtype<double>();
  detail::expects(value64 || data.dtype() == nb::dtype<float>(),
                  "all_finite: the values must be float32 or float64");
  nb::gil_scoped_release release;
  return all_finite(data.data(), value64, static_cast<std::int64_t>(data.shape(0)));
}

void select_k_dense_py(nb::ndarray<nb::ro, nb::ndim<2>, nb::c_contig> in, std::int64_t k,
                       bool largest, bool sorted, any_matrix out_values, index_matrix out_indices,
                       bool cuda)
{
  const int device = device_of_array(in, "A");
  detail::expects(device_of_array(out_values, "out_values") == device &&
                      device_of_array(out_indices, "out_indices") == device,
                  "out_values and out_indices must be in the memory of A");
  const bool value64 = in.dtype() == nb::dtype<double>();
  detail::expects(value64 || in.dtype() == nb::dtype<float>(),
                  "A: the values must be float32 or float64");
  detail::expects(out_values.dtype() == in.dtype(), "out_values: the dtype must be A's");
  const auto rows = static_cast<std::int64_t>(in.shape(0));
  const auto cols = static_cast<std::int64_t>(in.shape(1));
  detail::expects(out_values.shape(0) == in.shape(0) && out_indices.shape(0) == in.shape(0) &&
                      static_cast<std::int64_t>(out_values.shape(1)) == k &&
                      static_cast<std::int64_t>(out_indices.shape(1)) == k,
                  "out_values and out_indices: expected shape (", rows, ", ", k, ")");
  nb::gil_scoped_release release;
  select_k_dense(in.data(), value64, rows, cols, k, largest, sorted, out_values.data(),
                 out_indices.data(), cuda, device);
}

void select_k_rows_py(const nb::tuple& a, std::int64_t k, bool largest, bool sorted,
                      any_matrix out_values, any_matrix out_indices, bool cuda)
{
  const csr_input m = csr_of(a, "A");
  detail::expects(device_of_array(out_values, "out_values") == m.device &&
                      device_of_array(out_indices, "out_indices") == m.device,
                  "out_values and out_indices must be in the memory of A");
  detail::expects(out_values.dtype() == (m.value64 ? nb::dtype<double>() : nb::dtype<float>()),
                  "out_values: the dtype must be A's");
  const bool index64 = !m.on_device() || m.index64;
  detail::expects(
      out_indices.dtype() == (index64 ? nb::dtype<std::int64_t>() : nb::dtype<std::int32_t>()),
      "out_indices: the dtype must be int64 (host) or A's index type (device)");
  detail::expects(static_cast<std::int64_t>(out_values.shape(0)) == m.rows &&
                      static_cast<std::int64_t>(out_indices.shape(0)) == m.rows &&
                      static_cast<std::int64_t>(out_values.shape(1)) == k &&
                      static_cast<std::int64_t>(out_indices.shape(1)) == k,
                  "out_values and out_indices: expected shape (", m.rows, ", ", k, ")");
  nb::gil_scoped_release release;
  select_k_rows(m, k, largest, sorted, out_values.data(), out_indices.data(), cuda);
}

/// The names of the GPUs this process sees (empty without CUDA or without a device).
std::vector<std::string> gpu_names()
{
  std::vector<std::string> names;
#if defined(SPIRA_HAS_CUDA)
  for (int d = 0; d < cuda_device_count(); ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) == cudaSuccess) {
      names.emplace_back(prop.name);
    }
  }
#endif
  return names;
}

void translate(const std::exception_ptr& p, void*)
{
  // Most derived first: dimension_mismatch is an invalid_argument.
  try {
    std::rethrow_exception(p);
  } catch (const invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const out_of_memory& e) {
    PyErr_SetString(PyExc_MemoryError, e.what());
  } catch (const io_error& e) {
    PyErr_SetString(PyExc_OSError, e.what());
  } catch (const error& e) {  // not_compiled, cuda_error
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

}  // namespace

}  // namespace spira::python

NB_MODULE(_core, m)
{
  using namespace spira::python;
  m.doc() = "spira's compiled core; use the functions of the spira package instead.";
  nb::register_exception_translator(translate);

  m.def("kneighbors", &kneighbors_py, nb::arg("X"), nb::arg("Y").none(), nb::arg("k"),
        nb::arg("metric"), nb::arg("p"), nb::arg("exclude_self"), nb::arg("cuda"),
        nb::arg("memory_budget"), nb::arg("progress").none() = nb::none(),
        "spira::knn_graph on canonical CSR tuples; returns (distances float32, indices int64). "
        "Ctrl-C ends it between tiles; progress(done, total) is called after each tile.");
  m.def("merge_knn", &merge_knn_py, nb::arg("parts"), nb::arg("k"), nb::arg("largest"),
        nb::arg("check_rows") = true,
        "spira::merge_knn (host) of [(distances float32, indices int64), ...] n_q x k_p arrays; "
        "returns (distances float32, indices int64) of n_q x k. check_rows=False: parts made by "
        "spira itself, whose rows are not checked again.");
  // The outputs are written in place: .noconvert() refuses arrays nanobind would have to copy.
  m.def("pairwise_distances", &pairwise_py, nb::arg("X"), nb::arg("Y"), nb::arg("out").noconvert(),
        nb::arg("metric"), nb::arg("p"), nb::arg("cuda"), nb::arg("memory_budget"),
        nb::arg("progress").none() = nb::none(),
        "spira::pairwise_distance on canonical CSR tuples into the C-contiguous array out. "
        "Ctrl-C ends it between blocks of rows; progress(done, total) is called after each.");
  m.def("all_finite", &all_finite_py, nb::arg("data"),
        "Whether every value of a contiguous float32/float64 host array is finite (one pass on "
        "the library's host threads).");
  m.def("select_k_dense", &select_k_dense_py, nb::arg("A"), nb::arg("k"), nb::arg("largest"),
        nb::arg("sorted"), nb::arg("out_values").noconvert(), nb::arg("out_indices").noconvert(),
        nb::arg("cuda"),
        "spira::select_k of each row of a C-contiguous float32/float64 matrix into the outputs.");
  m.def("select_k_rows", &select_k_rows_py, nb::arg("A"), nb::arg("k"), nb::arg("largest"),
        nb::arg("sorted"), nb::arg("out_values").noconvert(), nb::arg("out_indices").noconvert(),
        nb::arg("cuda"),
        "spira::select_k of the stored values of each row of a canonical CSR tuple.");
  m.def(
      "canonical_metric",
      [](const std::string& name) {
        return std::string(to_string(spira::metric_from_string(name)));
      },
      nb::arg("name"), "The library's name of a metric name or alias (ValueError when unknown).");
  m.def("graph_union", &graph_union_py, nb::arg("G"), nb::arg("which"));
  m.def("metric_names", [] {
    std::vector<std::string> names;
    for (const spira::metric mt : spira::all_metrics()) {
      names.emplace_back(to_string(mt));
    }
    return names;
  });
  m.def("metric_aliases", [] {
    std::vector<std::pair<std::string, std::string>> aliases;
    for (const auto& a : spira::metric_aliases()) {
      aliases.emplace_back(a.name, to_string(a.target));
    }
    return aliases;
  });
  m.def("is_similarity", [](const std::string& name) {
    return spira::is_similarity(spira::metric_from_string(name));
  });
  m.def("requires_nonnegative", [](const std::string& name) {
    return spira::requires_nonnegative(spira::metric_from_string(name));
  });
  m.def("version", [] { return std::string(spira::version()); });
  m.def("cuda_compiled", &spira::cuda_compiled);
  m.def("cuda_device_count", &spira::cuda_device_count);
  m.def("gpu_names", &gpu_names);
  m.def("host_threads", [] { return spira::host_resources{}.num_threads(); });
}
