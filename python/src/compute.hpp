// spira Python bindings: the calls into the library, free of Python types, so that they run with
// the GIL released. Inputs arrive as type-erased host CSR arrays (the module checked their dtypes
// and lengths); here they become csr_views of the matching value and index type.
#pragma once

#include <spira/distance.hpp>
#include <spira/knn.hpp>
#include <spira/select_k.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

namespace spira::python {

/// A CSR as the Python layer hands it over: int64 row pointers, int32 or int64 column indices,
/// float32 or float64 values, all in host memory (device < 0) or all in the memory of one CUDA
/// device. The arrays belong to the caller and are only read.
struct csr_input {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
  const std::int64_t* indptr = nullptr;  ///< rows + 1 entries
  const void* indices = nullptr;         ///< nnz entries of int32 or int64
  const void* data = nullptr;            ///< nnz entries of float or double
  bool index64 = false;
  bool value64 = false;
  int device = -1;  ///< the CUDA device holding the arrays; -1: host memory

  [[nodiscard]] bool on_device() const { return device >= 0; }
};

/// spira::knn_graph on the host or the CUDA backend, in the value type of the inputs (both inputs
/// share value and index types and memory). Validates both inputs as canonical CSR first. Device
/// inputs run on their device and give a result in its memory, complete when this returns.
[[nodiscard]] knn_result kneighbors(const csr_input& index, const std::optional<csr_input>& queries,
                                    const knn_params& params, bool cuda);

/// Called between blocks of rows with (rows done, total rows); may throw to stop the call.
using progress_fn = std::function<void(std::int64_t, std::int64_t)>;

/// out (rows(a) x rows(b), row-major, of the inputs' value type) = the distances between the rows
/// of a and of b. On CUDA the rows of a go through the device in blocks whose distances fit
/// memory_budget bytes (0: half of the free device memory, at most 1 GiB); on the host the
/// distances are written into out directly and memory_budget does not apply. Device inputs (out
/// on the same device) are computed where they are, in blocks of rows only with `progress`. With
/// `progress`, the rows of a are processed in blocks (about pairwise_progress_steps of them on
/// the host) and progress is called after each.
void pairwise_distances(const csr_input& a, const csr_input& b, void* out,
                        const distance_params& params, bool cuda, std::size_t memory_budget,
                        const progress_fn& progress = {});

/// spira::select_k of each row of a dense rows x cols matrix (row-major, float or double as
/// value64 says): the k best values into out_values (rows x k, the input's type) and their column
/// positions into out_indices (rows x k), on the host or through the GPU. With device >= 0, the
/// input and the outputs are in that device's memory and it runs there.
void select_k_dense(const void* in, bool value64, std::int64_t rows, std::int64_t cols,
                    std::int64_t k, bool largest, bool sorted, void* out_values,
                    std::int64_t* out_indices, bool cuda, int device = -1);

/// spira::select_k of the stored values of each CSR row (canonical): rows x k outputs, indices the
/// stored columns, rows with fewer than k entries padded with index -1 and -inf (largest) or +inf.
/// Host input: int64 out_indices. Device input: the outputs are on its device and out_indices has
/// the input's index type.
void select_k_rows(const csr_input& m, std::int64_t k, bool largest, bool sorted, void* out_values,
                   void* out_indices, bool cuda);

/// Whether every one of the n values in host memory (float64 if value64, else float32) is finite:
/// one pass on the library's host threads.
[[nodiscard]] bool all_finite(const void* data, bool value64, std::int64_t n);

}  // namespace spira::python
