// spira internals: the host side of the CUDA mxm (the paths are in mxm_kernels.cuh): the rows'
// products counted and the rows sorted into the paths, the count pass, the row pointers, the fill
// pass; then the write-back under the mask (graphblas_rows.cuh).
#pragma once

#include <spira/cuda/detail/graphblas_rows.cuh>
#include <spira/cuda/detail/mxm_kernels.cuh>

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spira::detail {

#if defined(__CUDACC__)

/// T = A ⊕.⊗ B (both validated, device, A.cols == B.rows) at the columns the mask allows.
template <class S, class ValueT, class IndexT>
class mxm_product_cuda {
 public:
  using rows_t = mxm_rows<S, ValueT, IndexT>;

  mxm_product_cuda(const cuda_resources& res, const S& s, csr_view<ValueT, IndexT> a,
                   csr_view<ValueT, IndexT> b, maybe_csr<ValueT, IndexT> mask, const descriptor& o,
                   mxm_path forced)
      : res_(res), sms_(multiprocessor_count(res.device))
  {
    column_bits_ = std::max(1, bits_for_extent(b.cols + 1));
    expects(column_bits_ + cuda_mxm_policy::position_bits <= 64, "spira::mxm: B has ", b.cols,
            " columns; the CUDA mxm handles at most 2^51");
    r_ = rows_t{a, b, s, mask, o.structural_mask, o.complement_mask};
    const std::int64_t rows = a.rows;
    buffer<offset_t> ptr(res, std::size_t(rows) + 1, "CSR row pointers");
    products_ = buffer<offset_t>(res, std::size_t(std::max<std::int64_t>(rows, 1)), "mxm products");
    lists_ = buffer<std::int64_t>(res, std::size_t(std::max<std::int64_t>(3 * rows, 1)),
                                  "mxm row lists");
    buffer<unsigned long long> sizes(res, 3, "mxm list sizes");
    fill_zero_bytes(sizes.data(), memory_space::device, 3 * sizeof(unsigned long long), res);
    // The dense path's arrays: in shared memory when the fill pass's fit there (unless forced
    // to global memory), else in global memory while room allows.
    dense_global_ = forced == mxm_path::dense_global ||
                    dense_shared_bytes<true>(b.cols) > dense_shared_room<true>();
    if (forced == mxm_path::dense_global) {
      forced = mxm_path::dense;
    }
    dense_slots_ = 1;
    if (dense_global_) {
      const double bytes = double(std::max<std::int64_t>(b.cols, 1)) * (sizeof(double) + 1);
      const double room = double(cuda_free_memory(res)) * cuda_mxm_policy::dense_memory_fraction;
      dense_slots_ = std::int64_t(
          std::min<double>(double(sms_) * cuda_mxm_policy::dense_blocks_per_sm, room / bytes));
    }
    if (rows > 0) {
      const unsigned grid = graphblas_grid(rows, res.device);
      constexpr int block = graphblas_rows_policy::block_threads;
      mxm_products_kernel<<<grid, block, 0, res.stream>>>(a, b, products_.data(), ptr.data());
      SPIRA_CHECK_LAUNCH();
      mxm_classify_kernel<<<grid, block, 0, res.stream>>>(products_.data(), rows, b.cols,
                                                          dense_slots_ > 0, int(forced),
                                                          lists_.data(), sizes.data());
      SPIRA_CHECK_LAUNCH();
    }
    unsigned long long n[3] = {0, 0, 0};
    copy(n, memory_space::host, sizes.data(), memory_space::device, 3, res);
    for (int path = 0; path < 3; ++path) {
      list_size_[path] = std::int64_t(n[path]);
    }
    // Fewer long rows than multiprocessors leave most of the GPU idle on the dense path (a block
    // per row): their products are expanded and sorted by the whole device instead.
    if (forced == mxm_path::automatic && list_size(mxm_path::dense) > 0 &&
        list_size(mxm_path::dense) < sms_) {
      copy(lists_.data() + 2 * rows + list_size(mxm_path::expanded), memory_space::device,
           list(mxm_path::dense), memory_space::device, std::size_t(list_size(mxm_path::dense)),
           res);
      list_size_[2] += list_size_[1];
      list_size_[1] = 0;
    }
    // Count, then fill at the offsets.
    r_.counts = ptr.data();
    run<false>();
    const offset_t nnz = counts_to_offsets(res, ptr, rows);
    out_ = csr_matrix<ValueT, IndexT>(res, rows, b.cols, nnz);
    out_.row_ptr_buffer() = std::move(ptr);
    r_.counts = nullptr;
    r_.ptr = out_.row_ptr();
    r_.out_cols = out_.col_idx();
    r_.out_vals = out_.values();
    if (nnz > 0) {
      run<true>();
    }
  }

  csr_matrix<ValueT, IndexT> take() { return std::move(out_); }

 private:
  const std::int64_t* list(mxm_path path) const
  {
    return lists_.data() + (std::int64_t(path) - 1) * r_.a.rows;
  }
  std::int64_t list_size(mxm_path path) const { return list_size_[int(path) - 1]; }
  unsigned row_grid(std::int64_t n) const
  {
    return unsigned(std::clamp<std::int64_t>(n, 1, std::int64_t(sms_) * 8));
  }

  template <bool Values>
  void run()
  {
    constexpr int threads = cuda_mxm_policy::threads;
    if (const std::int64_t n = list_size(mxm_path::sorted); n > 0) {
      mxm_sorted_rows_kernel<Values><<<row_grid(n), threads, 0, res_.stream>>>(
          r_, list(mxm_path::sorted), n, cuda_mxm_policy::position_bits + column_bits_);
      SPIRA_CHECK_LAUNCH();
    }
    if (const std::int64_t n = list_size(mxm_path::dense); n > 0) {
      dense_global_ ? run_dense_global<Values>(n) : run_dense_shared<Values>(n);
    }
    if (list_size(mxm_path::expanded) > 0) {
      run_expanded<Values>();
    }
  }

  /// Bytes of shared memory a dense-path block takes for B's `cols` columns (the values in the
  /// fill pass, a flag each).
  template <bool Values>
  static std::size_t dense_shared_bytes(std::int64_t cols)
  {
    return std::size_t(cols) * ((Values ? sizeof(double) : 0) + 1);
  }
  template <bool Values>
  static auto dense_shared_kernel()
  {
    return mxm_dense_rows_kernel<Values, true, cuda_mxm_policy::dense_shared_threads, S, ValueT,
                                 IndexT>;
  }
  /// The shared memory a dense-path block of the `Values` pass may take beside the kernel's own
  /// (the device's limit for a block); the kernel is allowed all of it.
  template <bool Values>
  std::size_t dense_shared_room() const
  {
    static const std::size_t own = [] {
      cudaFuncAttributes attr{};
      SPIRA_CUDA_TRY(cudaFuncGetAttributes(&attr, dense_shared_kernel<Values>()));
      return attr.sharedSizeBytes;
    }();
    int limit = 0;
    SPIRA_CUDA_TRY(
        cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, res_.device));
    return std::size_t(limit) > own ? std::size_t(limit) - own : 0;
  }

  /// The dense path's `n` rows with their arrays in shared memory (the fill pass's fit: see the
  /// constructor): as many blocks as the device runs at once, each taking rows in turn.
  template <bool Values>
  void run_dense_shared(std::int64_t n)
  {
    constexpr int threads = cuda_mxm_policy::dense_shared_threads;
    const auto kernel = dense_shared_kernel<Values>();
    // The largest allowance, the same for every call (concurrent calls set it alike).
    SPIRA_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(dense_shared_room<Values>())));
    const std::size_t bytes = dense_shared_bytes<Values>(r_.b.cols);
    int per_sm = 0;
    SPIRA_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, bytes));
    const std::int64_t grid = std::min(n, std::int64_t(sms_) * std::max(per_sm, 1));
    kernel<<<unsigned(grid), threads, bytes, res_.stream>>>(r_, list(mxm_path::dense), n, nullptr,
                                                            nullptr);
    SPIRA_CHECK_LAUNCH();
  }

  /// The dense path's `n` rows with their arrays in global memory (a few, reused row to row).
  template <bool Values>
  void run_dense_global(std::int64_t n)
  {
    constexpr int threads = cuda_mxm_policy::threads;
    const std::int64_t slots = std::min(n, dense_slots_);
    const std::int64_t cols = r_.b.cols;
    if (dense_flags_.size() == 0) {
      dense_flags_ = buffer<unsigned char>(res_, std::size_t(slots * cols), "mxm dense flags");
      fill_zero_bytes(dense_flags_.data(), memory_space::device, dense_flags_.size(), res_);
    }
    if (Values && dense_values_.size() == 0) {
      dense_values_ = buffer<double>(res_, std::size_t(slots * cols), "mxm dense accumulators");
    }
    mxm_dense_rows_kernel<Values, false, threads><<<unsigned(slots), threads, 0, res_.stream>>>(
        r_, list(mxm_path::dense), n, dense_values_.data(), dense_flags_.data());
    SPIRA_CHECK_LAUNCH();
  }

  /// The expanded path in batches of rows holding at most expand_batch_products products (a
  /// longer row alone) and fitting the sort key beside the column.
  template <bool Values>
  void run_expanded()
  {
    const std::int64_t n = list_size(mxm_path::expanded);
    std::vector<std::int64_t> rows(static_cast<std::size_t>(n));
    copy(rows.data(), memory_space::host, list(mxm_path::expanded), memory_space::device,
         rows.size(), res_);
    std::vector<offset_t> products(static_cast<std::size_t>(r_.a.rows));
    copy(products.data(), memory_space::host, products_.data(), memory_space::device,
         products.size(), res_);
    const std::int64_t max_batch_rows =
        std::min<std::int64_t>(std::int64_t(1) << std::min(62 - column_bits_, 30), n);
    for (std::int64_t first = 0; first < n;) {
      std::vector<offset_t> offsets{0};
      std::int64_t last = first;
      while (last < n && last - first < max_batch_rows &&
             (last == first || offsets.back() + products[std::size_t(rows[std::size_t(last)])] <=
                                   cuda_mxm_policy::expand_batch_products)) {
        offsets.push_back(offsets.back() + products[std::size_t(rows[std::size_t(last)])]);
        ++last;
      }
      const std::int64_t batch_rows = last - first;
      const offset_t total = offsets.back();
      const auto device_offsets = to_device_buffer(offsets);
      buffer<std::uint64_t> keys(res_, std::size_t(total), "mxm expanded keys");
      buffer<std::uint64_t> keys_sorted(res_, std::size_t(total), "mxm expanded keys");
      buffer<offset_t> positions(res_, std::size_t(total), "mxm expanded positions");
      buffer<offset_t> positions_sorted(res_, std::size_t(total), "mxm expanded positions");
      buffer<double> values(res_, Values ? std::size_t(total) : 0, "mxm expanded products");
      constexpr int threads = cuda_mxm_policy::threads;
      const std::int64_t* batch_list = list(mxm_path::expanded) + first;
      mxm_expand_kernel<Values><<<row_grid(batch_rows), threads, 0, res_.stream>>>(
          r_, batch_list, device_offsets.data(), batch_rows, column_bits_, keys.data(),
          positions.data(), values.data());
      SPIRA_CHECK_LAUNCH();
      const int end_bit = column_bits_ + std::max(1, bits_for_extent(batch_rows));
      std::size_t bytes = 0;
      SPIRA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
          nullptr, bytes, keys.data(), keys_sorted.data(), positions.data(),
          positions_sorted.data(), total, 0, end_bit, res_.stream));
      buffer<unsigned char> scratch(res_, std::max<std::size_t>(bytes, 1), "mxm sort workspace");
      SPIRA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(
          scratch.data(), bytes, keys.data(), keys_sorted.data(), positions.data(),
          positions_sorted.data(), total, 0, end_bit, res_.stream));
      mxm_expanded_rows_kernel<Values><<<row_grid(batch_rows), threads, 0, res_.stream>>>(
          r_, batch_list, device_offsets.data(), batch_rows, column_bits_, keys_sorted.data(),
          positions_sorted.data(), values.data());
      SPIRA_CHECK_LAUNCH();
      synchronize(res_);  // the batch's buffers are released next
      first = last;
    }
  }

  buffer<offset_t> to_device_buffer(const std::vector<offset_t>& v) const
  {
    buffer<offset_t> b(res_, v.size(), "mxm batch offsets");
    copy(b.data(), memory_space::device, v.data(), memory_space::host, v.size(), res_);
    return b;
  }

  cuda_resources res_;
  int sms_ = 0;
  int column_bits_ = 1;
  rows_t r_{};
  buffer<offset_t> products_;
  buffer<std::int64_t> lists_;
  std::int64_t list_size_[3] = {0, 0, 0};
  bool dense_global_ = false;
  std::int64_t dense_slots_ = 0;
  buffer<unsigned char> dense_flags_;
  buffer<double> dense_values_;
  csr_matrix<ValueT, IndexT> out_;
};

template <class IndexT>
__global__ void column_lengths_kernel(const IndexT* col_idx, std::int64_t nnz, offset_t* len)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t p = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < nnz; p += stride) {
    atomicAdd(reinterpret_cast<unsigned long long*>(&len[col_idx[p]]), 1ull);
  }
}

/// Whether the masked dot product reads less than Gustavson's product for C⟨M⟩ = op(A) ⊕.⊗ op(B)
/// (`a` is op(A), `b` B as given), each counted with the transposed copy of B it needs: the host's
/// rule (mxm_costs_of in spira/detail/mxm_host.hpp), on the device.
template <class ValueT, class IndexT>
bool masked_dot_is_cheaper_cuda(const cuda_resources& res, csr_view<ValueT, IndexT> a,
                                csr_view<ValueT, IndexT> b, bool transpose_b,
                                csr_view<ValueT, IndexT> mask)
{
  buffer<offset_t> col_len(res, std::size_t(std::max<std::int64_t>(b.cols, 1)), "column lengths");
  fill_zero_bytes(col_len.data(), memory_space::device, col_len.size() * sizeof(offset_t), res);
  buffer<unsigned long long> costs(res, 2, "mxm costs");
  fill_zero_bytes(costs.data(), memory_space::device, 2 * sizeof(unsigned long long), res);
  constexpr int block = graphblas_rows_policy::block_threads;
  if (b.nnz > 0) {
    column_lengths_kernel<<<graphblas_grid(b.nnz, res.device), block, 0, res.stream>>>(
        b.col_idx, b.nnz, col_len.data());
    SPIRA_CHECK_LAUNCH();
  }
  if (a.rows > 0) {
    mxm_costs_kernel<<<graphblas_grid(a.rows, res.device), block, 0, res.stream>>>(
        a, b, transpose_b, col_len.data(), mask, costs.data());
    SPIRA_CHECK_LAUNCH();
  }
  unsigned long long c[2] = {0, 0};
  copy(c, memory_space::host, costs.data(), memory_space::device, 2, res);
  // Gustavson reads op(B) by rows (a transpose of B when op transposes it), the dot product by
  // columns (a transpose when op does not).
  const double gustavson = double(c[0]) + (transpose_b ? double(b.nnz) : 0.0);
  const double dot = double(c[1]) + (transpose_b ? 0.0 : double(b.nnz));
  return dot < gustavson;
}

/// T = A ⊕.⊗ op(B) at the entries the mask (present, not complemented) allows, by dot products of
/// the rows of `a` and the rows of `bt` = op(B)ᵀ.
template <class S, class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> mxm_dot_product_cuda(const cuda_resources& res, const S& s,
                                                csr_view<ValueT, IndexT> a,
                                                csr_view<ValueT, IndexT> bt,
                                                maybe_csr<ValueT, IndexT> mask, const descriptor& o)
{
  mxm_rows<S, ValueT, IndexT> r{a, bt, s, mask, o.structural_mask, false};
  buffer<offset_t> ptr(res, std::size_t(a.rows) + 1, "CSR row pointers");
  constexpr int block = graphblas_rows_policy::block_threads;
  const unsigned grid = graphblas_grid(a.rows * 32, res.device);
  r.counts = ptr.data();
  if (a.rows > 0) {
    mxm_dot_rows_kernel<false><<<grid, block, 0, res.stream>>>(r, bt);
    SPIRA_CHECK_LAUNCH();
  }
  const offset_t nnz = counts_to_offsets(res, ptr, a.rows);
  csr_matrix<ValueT, IndexT> out(res, a.rows, bt.rows, nnz);
  out.row_ptr_buffer() = std::move(ptr);
  r.counts = nullptr;
  r.ptr = out.row_ptr();
  r.out_cols = out.col_idx();
  r.out_vals = out.values();
  if (nnz > 0) {
    mxm_dot_rows_kernel<true><<<grid, block, 0, res.stream>>>(r, bt);
    SPIRA_CHECK_LAUNCH();
  }
  return out;
}

/// spira::mxm on CUDA (spira/cuda/graphblas.cuh); mxv and vxm name their operands through
/// `op`, `name_a` and `name_b`.
template <class S, class Accum, class ValueT, class IndexT>
csr_matrix<ValueT, IndexT> mxm_cuda(const cuda_resources& res, maybe_csr_arg<ValueT, IndexT> c,
                                    maybe_csr_arg<ValueT, IndexT> mask, const Accum& accum,
                                    const S& s, csr_view<ValueT, IndexT> a,
                                    csr_view<ValueT, IndexT> b, const descriptor& o,
                                    mxm_path forced = mxm_path::automatic,
                                    const char* op = "spira::mxm", const char* name_a = "A",
                                    const char* name_b = "B")
{
  using traits = distance_traits<S, double>;
  static_assert(semiring<S, double>, "spira::mxm: S must model spira::semiring");
  static_assert(traits::annihilating,
                "spira::mxm: the semiring must be annihilating (a NAMM's product of sparse "
                "matrices is dense)");
  static_assert(traits::num_terms == 1, "spira::mxm: the semiring must have a single term");
  const device_guard guard(res.device);
  checked_operands<ValueT, IndexT> checked;
  checked.check(res, a, op, name_a);
  checked.check(res, b, op, name_b);
  const std::int64_t b_rows = o.transpose_b ? b.cols : b.rows;
  const std::int64_t b_cols = o.transpose_b ? b.rows : b.cols;
  const std::int64_t a_rows = o.transpose_a ? a.cols : a.rows;
  const std::int64_t a_cols = o.transpose_a ? a.rows : a.cols;
  const std::string ta = std::string(name_a) + (o.transpose_a ? "ᵀ" : "");
  const std::string tb = std::string(name_b) + (o.transpose_b ? "ᵀ" : "");
  expects<dimension_mismatch>(a_cols == b_rows, op, ": ", ta, " is ", a_rows, " x ", a_cols,
                              " but ", tb, " is ", b_rows, " x ", b_cols,
                              " (inner dimensions differ)");
  const std::string shape = ta + " " + tb;
  check_output_operands_cuda(res, c, mask, a_rows, b_cols, op, shape.c_str(), checked);
  std::optional<csr_matrix<ValueT, IndexT>> at, bt;
  a = maybe_transposed_cuda(res, a, o.transpose_a, at);
  // With a mask that is not complemented only the entries it allows are computed, by dot
  // products of rows of op(A) and columns of op(B), when that reads less than the whole product.
  const bool maskable = mask.has_value() && !o.complement_mask;
  const bool dot = maskable && (forced == mxm_path::masked_dot ||
                                (forced == mxm_path::automatic &&
                                 masked_dot_is_cheaper_cuda(res, a, b, o.transpose_b, *mask)));
  if (dot) {
    // op(B)ᵀ by rows: B itself when op transposes it.
    b = maybe_transposed_cuda(res, b, !o.transpose_b, bt);
    auto t = mxm_dot_product_cuda(res, s, a, b, maybe_of(mask), o);
    return masked_update_cuda(res, c, mask, accum, std::move(t), o);
  }
  b = maybe_transposed_cuda(res, b, o.transpose_b, bt);
  auto t = mxm_product_cuda<S, ValueT, IndexT>(
               res, s, a, b, maybe_of(mask), o,
               forced == mxm_path::masked_dot ? mxm_path::automatic : forced)
               .take();
  return masked_update_cuda(res, c, mask, accum, std::move(t), o);
}

#endif  // __CUDACC__

}  // namespace spira::detail
