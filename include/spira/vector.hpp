// spira: sparse vectors (the GraphBLAS GrB_Vector): a size and the stored entries, as two arrays
// (indices in increasing order, no repeats, and their values), like one row of a CSR matrix.
//
//   auto u = spira::make_sparse_vector<float, std::int32_t>(res, 1000, indices, values);
//   auto w = spira::vxm(res, std::nullopt, std::nullopt, spira::no_accumulator{},
//                       spira::semirings::lor_land{}, u.view(), a.view());   // spira/mxv.hpp
//
// A stored value may be 0: like a matrix entry it is still an entry (a valued mask reads it as
// false, a structural one as true).
#pragma once

#include <spira/error.hpp>
#include <spira/matrix.hpp>  // memory_space, detail::fits_index
#include <spira/memory.hpp>
#include <spira/resources.hpp>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>

namespace spira {

/// Non-owning view of a sparse vector.
template <class ValueT, class IndexT = std::int32_t>
struct sparse_vector_view {
  std::int64_t size = 0;
  std::int64_t nnz = 0;
  const IndexT* indices = nullptr;  ///< nnz indices in [0, size), increasing
  const ValueT* values = nullptr;   ///< nnz values
  memory_space space = memory_space::host;
};

/// Owning sparse vector in host or device memory.
template <class ValueT, class IndexT = std::int32_t>
class sparse_vector {
 public:
  using value_type = ValueT;
  using index_type = IndexT;

  sparse_vector() = default;

  /// Allocates (uninitialised) arrays for a vector of `size` with nnz entries, in host memory
  /// (host_resources) or device memory (cuda_resources).
  template <class Resources>
  sparse_vector(const Resources& res, std::int64_t size, std::int64_t nnz) : size_(size)
  {
    detail::expects(size >= 0, "sparse_vector: size must be >= 0, got ", size);
    detail::expects(nnz >= 0 && nnz <= size, "sparse_vector: nnz must be in [0, size = ", size,
                    "], got ", nnz);
    detail::expects(detail::fits_index<IndexT>(size), "sparse_vector: size = ", size,
                    " does not fit the ", sizeof(IndexT) * 8, "-bit index type");
    indices_ = buffer<IndexT>(res, std::size_t(nnz), "sparse vector indices");
    values_ = buffer<ValueT>(res, std::size_t(nnz), "sparse vector values");
  }
  [[nodiscard]] memory_space space() const noexcept { return values_.space(); }
  [[nodiscard]] const cuda_resources& cuda() const noexcept { return values_.cuda(); }
  [[nodiscard]] std::int64_t size() const noexcept { return size_; }
  [[nodiscard]] std::int64_t nnz() const noexcept { return std::int64_t(values_.size()); }
  [[nodiscard]] IndexT* indices() noexcept { return indices_.data(); }
  [[nodiscard]] ValueT* values() noexcept { return values_.data(); }
  [[nodiscard]] const IndexT* indices() const noexcept { return indices_.data(); }
  [[nodiscard]] const ValueT* values() const noexcept { return values_.data(); }

  [[nodiscard]] sparse_vector_view<ValueT, IndexT> view() const noexcept
  {
    return {size_, nnz(), indices_.data(), values_.data(), space()};
  }
  /// Keeps the first nnz entries (nnz <= nnz()) in place.
  void shrink(std::int64_t nnz)
  {
    detail::expects(nnz >= 0, "sparse_vector::shrink: nnz must be >= 0, got ", nnz);
    indices_.shrink(std::size_t(nnz));
    values_.shrink(std::size_t(nnz));
  }
  operator sparse_vector_view<ValueT, IndexT>() const noexcept { return view(); }  // NOLINT

 private:
  std::int64_t size_ = 0;
  buffer<IndexT> indices_;
  buffer<ValueT> values_;
};

/// Throws spira::invalid_argument naming `name` unless `v` is a valid host sparse vector: size and
/// nnz in range, indices increasing and in [0, size).
template <class ValueT, class IndexT>
void validate(const host_resources&, sparse_vector_view<ValueT, IndexT> v, const char* name)
{
  detail::expects(v.space == memory_space::host, name, ": the vector must be in host memory");
  detail::expects(v.size >= 0 && v.nnz >= 0 && v.nnz <= v.size, name, ": size = ", v.size,
                  " and nnz = ", v.nnz, " do not describe a vector (0 <= nnz <= size)");
  detail::expects(v.nnz == 0 || (v.indices != nullptr && v.values != nullptr), name,
                  ": indices or values is null with nnz = ", v.nnz);
  for (std::int64_t p = 0; p < v.nnz; ++p) {
    const auto i = std::int64_t(v.indices[p]);
    detail::expects(i >= 0 && i < v.size, name, ": index ", i, " (entry ", p, ") is outside [0, ",
                    v.size, ")");
    detail::expects(p == 0 || std::int64_t(v.indices[p - 1]) < i, name, ": index ", i, " (entry ",
                    p, ") follows ", std::int64_t(v.indices[p - 1]), " (indices must increase)");
  }
}

/// A new sparse vector of `size` from its entries (indices increasing, without repeats), checked.
template <class ValueT, class IndexT>
[[nodiscard]] sparse_vector<ValueT, IndexT> make_sparse_vector(const host_resources& res,
                                                               std::int64_t size,
                                                               std::span<const IndexT> indices,
                                                               std::span<const ValueT> values)
{
  detail::expects(indices.size() == values.size(), "make_sparse_vector: ", indices.size(),
                  " indices but ", values.size(), " values");
  validate(res,
           sparse_vector_view<ValueT, IndexT>{size, std::int64_t(indices.size()), indices.data(),
                                              values.data()},
           "make_sparse_vector");
  sparse_vector<ValueT, IndexT> v(res, size, std::int64_t(indices.size()));
  std::copy(indices.begin(), indices.end(), v.indices());
  std::copy(values.begin(), values.end(), v.values());
  return v;
}

}  // namespace spira
