// spira: SuiteSparse:GraphBLAS matrices to and from spira's CSR matrices in host memory.
//
//   to_graphblas(a)                   a new GrB_Matrix (GrB_FP32 or GrB_FP64, as a's values) with
//                                     a's entries (copied; GrB_Matrix_import)
//   from_graphblas<ValueT, IndexT>(res, m)      a canonical csr_matrix<ValueT, IndexT> with m's
//   entries (copied; any
//                                     format or storage, values typecast to ValueT by GraphBLAS)
//   with_csr_view<ValueT>(m, fn)           fn(csr_view<ValueT, std::int64_t>) over m's own CSR
//   arrays, no
//                                     copy: m is unpacked (GxB_Matrix_unpack_CSR, which converts
//                                     it to sorted CSR first if it is stored otherwise) for the
//                                     call and packed back after it, also when fn throws
//
// GraphBLAS's indices are 64-bit, so the zero-copy view has int64 column indices; its values
// type must be GrB_FP32 for float, GrB_FP64 for double (else with_csr_view works on a typecast
// copy); an iso-valued m (one stored value) gets that value repeated in a values array. This header
// needs <GraphBLAS.h> and libgraphblas (Debian: libgraphblas-dev) in the program that includes it;
// the spira library itself does not depend on GraphBLAS. GraphBLAS must be initialised (GrB_init).
#pragma once

#include <spira/convert.hpp>
#include <spira/error.hpp>
#include <spira/matrix.hpp>
#include <spira/resources.hpp>

extern "C" {
#include <GraphBLAS.h>
}

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace spira {

namespace detail {

inline void grb_check(GrB_Info info, const char* what)
{
  expects(info == GrB_SUCCESS, "GraphBLAS: ", what, " failed with GrB_Info ", int(info));
}

template <class ValueT>
GrB_Type grb_type_of()
{
  static_assert(std::is_same_v<ValueT, float> || std::is_same_v<ValueT, double>,
                "spira's GraphBLAS interop takes float or double values");
  return std::is_same_v<ValueT, float> ? GrB_FP32 : GrB_FP64;
}

}  // namespace detail

/// A new GrB_Matrix with the entries of `a` (a valid CSR in host memory; duplicates are an error,
/// as for GrB_Matrix_import). The caller frees it with GrB_Matrix_free.
template <class ValueT, class IndexT>
[[nodiscard]] GrB_Matrix to_graphblas(csr_view<ValueT, IndexT> a)
{
  detail::expects(a.space == memory_space::host, "to_graphblas: the matrix must be in host memory");
  validate(host_resources{}, a, csr_check::valid, "to_graphblas: the matrix");
  std::vector<GrB_Index> ptr(a.row_ptr, a.row_ptr + a.rows + 1);
  std::vector<GrB_Index> cols(a.col_idx, a.col_idx + a.nnz);
  GrB_Matrix m = nullptr;
  const GrB_Info info =
      std::is_same_v<ValueT, float>
          ? GrB_Matrix_import_FP32(&m, GrB_FP32, GrB_Index(a.rows), GrB_Index(a.cols), ptr.data(),
                                   cols.data(), reinterpret_cast<const float*>(a.values),
                                   ptr.size(), cols.size(), GrB_Index(a.nnz), GrB_CSR_FORMAT)
          : GrB_Matrix_import_FP64(&m, GrB_FP64, GrB_Index(a.rows), GrB_Index(a.cols), ptr.data(),
                                   cols.data(), reinterpret_cast<const double*>(a.values),
                                   ptr.size(), cols.size(), GrB_Index(a.nnz), GrB_CSR_FORMAT);
  detail::grb_check(info, "GrB_Matrix_import");
  return m;
}

/// A canonical CSR copy of `m` (any storage; values typecast to ValueT by GraphBLAS).
template <class ValueT, class IndexT>
[[nodiscard]] csr_matrix<ValueT, IndexT> from_graphblas(const host_resources& res, GrB_Matrix m)
{
  const GrB_Type want = detail::grb_type_of<ValueT>();
  GrB_Index rows = 0, cols = 0;
  detail::grb_check(GrB_Matrix_nrows(&rows, m), "GrB_Matrix_nrows");
  detail::grb_check(GrB_Matrix_ncols(&cols, m), "GrB_Matrix_ncols");
  GrB_Type type = nullptr;
  detail::grb_check(GxB_Matrix_type(&type, m), "GxB_Matrix_type");
  GrB_Matrix typed = m;
  if (type != want) {  // a typecast copy: GrB_Matrix_export needs the matching type
    detail::grb_check(GrB_Matrix_new(&typed, want, rows, cols), "GrB_Matrix_new");
    detail::grb_check(
        GrB_Matrix_apply(typed, nullptr, nullptr,
                         std::is_same_v<ValueT, float> ? GrB_IDENTITY_FP32 : GrB_IDENTITY_FP64, m,
                         nullptr),
        "GrB_Matrix_apply (typecast)");
  }
  GrB_Index np = 0, ni = 0, nx = 0;
  detail::grb_check(GrB_Matrix_exportSize(&np, &ni, &nx, GrB_CSR_FORMAT, typed),
                    "GrB_Matrix_exportSize");
  std::vector<GrB_Index> ptr(np), idx(ni);
  std::vector<ValueT> vals(nx);
  const GrB_Info info =
      std::is_same_v<ValueT, float>
          ? GrB_Matrix_export_FP32(ptr.data(), idx.data(), reinterpret_cast<float*>(vals.data()),
                                   &np, &ni, &nx, GrB_CSR_FORMAT, typed)
          : GrB_Matrix_export_FP64(ptr.data(), idx.data(), reinterpret_cast<double*>(vals.data()),
                                   &np, &ni, &nx, GrB_CSR_FORMAT, typed);
  if (typed != m) {
    GrB_Matrix_free(&typed);
  }
  detail::grb_check(info, "GrB_Matrix_export");
  const std::vector<offset_t> row_ptr(ptr.begin(), ptr.begin() + std::ptrdiff_t(rows + 1));
  const std::vector<IndexT> col_idx(idx.begin(), idx.begin() + std::ptrdiff_t(ni));
  vals.resize(std::size_t(ni));
  const auto out = make_csr<ValueT, IndexT>(res, std::int64_t(rows), std::int64_t(cols), row_ptr,
                                            col_idx, vals, csr_check::valid);
  return canonicalize(res, out.view());  // GraphBLAS may export a row's entries out of order
}

/// fn(view) with `view` a canonical csr_view<ValueT, std::int64_t> over m's own arrays (no copy;
/// see the header's comment for when a copy is made instead). m is whole again when this returns
/// or throws; `view` is valid only during the call.
template <class ValueT, class Fn>
void with_csr_view(GrB_Matrix m, Fn&& fn)
{
  GrB_Type type = nullptr;
  detail::grb_check(GxB_Matrix_type(&type, m), "GxB_Matrix_type");
  GrB_Index rows = 0, cols = 0;
  detail::grb_check(GrB_Matrix_nrows(&rows, m), "GrB_Matrix_nrows");
  detail::grb_check(GrB_Matrix_ncols(&cols, m), "GrB_Matrix_ncols");
  if (type != detail::grb_type_of<ValueT>()) {
    const auto copy = from_graphblas<ValueT, std::int64_t>(host_resources{}, m);
    fn(copy.view());
    return;
  }
  bool iso = false;
  GrB_Index *ap = nullptr, *aj = nullptr;
  void* ax = nullptr;
  GrB_Index ap_size = 0, aj_size = 0, ax_size = 0;
  // jumbled = nullptr: GraphBLAS returns each row's columns sorted.
  detail::grb_check(
      GxB_Matrix_unpack_CSR(m, &ap, &aj, &ax, &ap_size, &aj_size, &ax_size, &iso, nullptr, nullptr),
      "GxB_Matrix_unpack_CSR");
  struct repack {
    GrB_Matrix m;
    GrB_Index **ap, **aj;
    void** ax;
    GrB_Index ap_size, aj_size, ax_size;
    bool iso;
    ~repack()
    {
      GxB_Matrix_pack_CSR(m, ap, aj, ax, ap_size, aj_size, ax_size, iso, false, nullptr);
    }
  } guard{m, &ap, &aj, &ax, ap_size, aj_size, ax_size, iso};
  const auto nnz = std::int64_t(ap[rows]);
  // An iso-valued matrix stores its one value once: the view gets it repeated (the pattern stays
  // GraphBLAS's own).
  std::vector<ValueT> repeated;
  if (iso) {
    repeated.assign(std::size_t(nnz), *static_cast<const ValueT*>(ax));
  }
  const csr_view<ValueT, std::int64_t> view{std::int64_t(rows),
                                            std::int64_t(cols),
                                            nnz,
                                            reinterpret_cast<const offset_t*>(ap),
                                            reinterpret_cast<const std::int64_t*>(aj),
                                            iso ? repeated.data() : static_cast<const ValueT*>(ax),
                                            memory_space::host};
  fn(view);
}

}  // namespace spira
