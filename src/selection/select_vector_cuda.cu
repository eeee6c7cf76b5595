// select_k with select_algo::delegate, CUDA backend: Dr. Top-k's steps (selection/delegate.cuh)
// for each row on its own, with both top-k steps run by the radix select of select_k_cuda.cu
// (through select_rows on a one-row CSR view of the delegate or candidate vector, whose column
// indices are the row positions: the radix select's tie rule on a vector in position order is the
// tie rule of the row, and the indices it reports are row positions).
//
// Per row: delegates (one read of the row) -> first top-k on the delegate vector -> threshold t
// -> per sub-range candidate counts (full sub-ranges read again) -> prefix sum -> one host read
// of the candidate count (to size the candidate vector) -> candidates in position order -> second
// top-k, or a plain copy when there are exactly k candidates (Rule 3 leaves nothing to select).
#include "selection/delegate.cuh"
#include "selection/dispatch.hpp"
#include "selection/workspace.hpp"

#include <spira/cuda/error.cuh>

#include <cub/device/device_scan.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace spira::selection {

namespace {

cudaStream_t stream_of(const cuda_resources& res) { return reinterpret_cast<cudaStream_t>(res.stream); }

/// Makes res.device current for the lifetime of the guard.
class current_device {
 public:
  explicit current_device(int device)
  {
    SPIRA_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device) { SPIRA_CUDA_TRY(cudaSetDevice(device)); }
  }
  ~current_device() { SPIRA_CUDA_TRY_NO_THROW(cudaSetDevice(previous_)); }
  current_device(const current_device&) = delete;
  current_device& operator=(const current_device&) = delete;

 private:
  int previous_ = 0;
};

unsigned grid_for(std::int64_t items, std::int64_t per_block, const char* what)
{
  const std::int64_t blocks = std::max<std::int64_t>(1, (items + per_block - 1) / per_block);
  detail::expects(blocks <= std::numeric_limits<int>::max(), "select_k(cuda_resources): ", what,
                  " needs ", blocks, " blocks, more than one launch holds");
  return static_cast<unsigned>(blocks);
}

/// A one-row CSR view of a device vector of `length` elements, whose column indices are `pos`.
template <class T, class IndexT>
row_source<T, IndexT> vector_row(const T* values, const IndexT* pos, const offset_t* row_ptr)
{
  return row_source<T, IndexT>{values, 1, 0, 0, row_ptr, pos};
}

/// row_ptr = {0, length} of a one-row CSR view, stream-ordered (no host synchronisation).
__global__ void set_row_ptr_kernel(offset_t* row_ptr, std::int64_t length)
{
  row_ptr[0] = 0;
  row_ptr[1] = length;
}

void set_row_ptr(offset_t* row_ptr, std::int64_t length, cudaStream_t stream)
{
  set_row_ptr_kernel<<<1, 1, 0, stream>>>(row_ptr, length);
  SPIRA_CHECK_LAUNCH();
}

}  // namespace

template <class T, class IndexT>
void select_vector(const cuda_resources& res, row_source<T, IndexT> src, row_sink<T, IndexT> dst,
                   const problem& p)
{
  using key_type = typename key_traits<T>::key_type;
  constexpr int beta = delegate_policy::beta;
  current_device guard(res.device);
  const cudaStream_t stream = stream_of(res);
  const std::int64_t n = src.cols;
  const std::int64_t k = p.k;

  delegate_layout l;
  l.n = n;
  l.alpha = p.delegate_subrange > 0 ? p.delegate_subrange : delegate_subrange_for(n, k);
  detail::expects(l.alpha >= 32 && (l.alpha & (l.alpha - 1)) == 0,
                  "select_k(cuda_resources): the delegate sub-range length must be a power of two "
                  ">= 32, got ",
                  l.alpha);
  l.m = (n + l.alpha - 1) / l.alpha;
  const std::int64_t d_len = l.delegate_count();

  problem radix = p;
  radix.algo = select_algo::radix;
  radix.delegate_subrange = 0;
  if (d_len <= k) {
    // Every delegate would be selected and every sub-range read again: select from the row.
    select_rows(res, src, dst, radix);
    return;
  }

  const std::int64_t full_max = k / beta + 1;
  const std::int64_t pieces = l.alpha / delegate_piece(l.alpha);
  std::size_t scan_bytes = 0;
  SPIRA_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes,
                                               static_cast<std::int64_t*>(nullptr),
                                               static_cast<std::int64_t*>(nullptr), l.m, stream));
  workspace ws;
  const auto d_val = ws.reserve<T>(d_len, "the delegate values");
  const auto d_pos = ws.reserve<IndexT>(d_len, "the delegate positions");
  const auto d_ptr = ws.reserve<offset_t>(2, "the delegate row pointer");
  const auto c_ptr = ws.reserve<offset_t>(2, "the candidate row pointer");
  const auto sel_val = ws.reserve<T>(k, "the first top-k values");
  const auto sel_pos = ws.reserve<IndexT>(k, "the first top-k positions");
  const auto t = ws.reserve<delegate_threshold<key_type>>(1, "the delegate threshold");
  const auto counts = ws.reserve<std::int64_t>(l.m, "the candidate counts");
  const auto offsets = ws.reserve<std::int64_t>(l.m + 1, "the candidate offsets");
  const auto full_list = ws.reserve<std::int64_t>(full_max, "the full sub-ranges");
  const auto full_count = ws.reserve<unsigned long long>(1, "the full sub-range count");
  const auto piece_counts = ws.reserve<std::int64_t>(full_max * pieces, "the full sub-range pieces");
  const auto scan_tmp = ws.reserve<unsigned char>(static_cast<std::int64_t>(scan_bytes),
                                                  "the candidate scan workspace");
  ws.allocate(res, "select_k delegate workspace");
  set_row_ptr(ws[d_ptr], d_len, stream);

  problem first = radix;
  first.max_length = d_len;
  first.sorted = false;
  const unsigned sub_blocks = grid_for(l.m, 256, "the delegate candidates");
  const unsigned full_blocks = grid_for(full_max * pieces, delegate_policy::block_threads / warp::size,
                                       "the full sub-ranges");

  for (std::int64_t r = 0; r < src.rows; ++r) {
    const T* in = src.values + r * src.ld;
    // 1. Delegates: the beta best of every sub-range, in position order.
    if (l.alpha <= delegate_policy::strided_max_subrange) {
      const std::int64_t per_block = delegate_policy::strided_block_threads;  // a sub-range a lane
      delegate_strided_kernel<<<grid_for(l.m, per_block, "the delegates"),
                                delegate_policy::strided_block_threads, 0, stream>>>(
        in, l, p.largest, ws[d_val], ws[d_pos]);
    } else {
      const unsigned blocks =
        grid_for(l.m, delegate_policy::block_threads / warp::size, "the delegates");
      if (reinterpret_cast<std::uintptr_t>(in) % 16 == 0) {
        delegate_warp_kernel<T, IndexT, true><<<blocks, delegate_policy::block_threads, 0, stream>>>(
          in, l, p.largest, ws[d_val], ws[d_pos]);
      } else {
        delegate_warp_kernel<T, IndexT, false><<<blocks, delegate_policy::block_threads, 0, stream>>>(
          in, l, p.largest, ws[d_val], ws[d_pos]);
      }
    }
    SPIRA_CHECK_LAUNCH();
    // 2. First top-k on the delegate vector, and its worst element t.
    select_rows(res, vector_row<T, IndexT>(ws[d_val], ws[d_pos], ws[d_ptr]),
                row_sink<T, IndexT>{ws[sel_val], ws[sel_pos], k, k}, first);
    delegate_threshold_kernel<T, IndexT, 1024>
      <<<1, 1024, 0, stream>>>(ws[sel_val], ws[sel_pos], k, p.largest, ws[t]);
    SPIRA_CHECK_LAUNCH();
    // 3. Candidates per sub-range (Rules 2 and 3) and their offsets.
    detail::fill_zero_bytes(ws[full_count], memory_space::device, sizeof(unsigned long long),
                            res);
    detail::fill_zero_bytes(ws[offsets], memory_space::device, sizeof(std::int64_t), res);
    delegate_classify_kernel<<<sub_blocks, 256, 0, stream>>>(
      ws[d_val], ws[d_pos], l, p.largest, ws[t], ws[counts], ws[full_list],
      ws[full_count]);
    SPIRA_CHECK_LAUNCH();
    delegate_full_count_kernel<<<full_blocks, delegate_policy::block_threads, 0, stream>>>(
      in, l, p.largest, ws[t], ws[full_list], ws[full_count], ws[counts],
      ws[piece_counts]);
    SPIRA_CHECK_LAUNCH();
    SPIRA_CUDA_TRY(cub::DeviceScan::InclusiveSum(ws[scan_tmp], scan_bytes, ws[counts],
                                                 ws[offsets] + 1, l.m, stream));
    std::int64_t c_len = 0;
    copy(&c_len, memory_space::host, ws[offsets] + l.m, memory_space::device, 1, res);
    // 4. The candidates, in position order.
    workspace cws;
    const auto c_val_slot = cws.reserve<T>(c_len, "the candidate values");
    const auto c_pos_slot = cws.reserve<IndexT>(c_len, "the candidate positions");
    cws.allocate(res, "select_k delegate candidates");
    T* const c_val = cws[c_val_slot];
    IndexT* const c_pos = cws[c_pos_slot];
    delegate_write_delegates_kernel<<<sub_blocks, 256, 0, stream>>>(
      ws[d_val], ws[d_pos], l, p.largest, ws[t], ws[offsets], c_val,
      c_pos);
    SPIRA_CHECK_LAUNCH();
    delegate_write_full_kernel<<<full_blocks, delegate_policy::block_threads, 0, stream>>>(
      in, l, p.largest, ws[t], ws[full_list], ws[full_count], ws[offsets],
      ws[piece_counts], c_val, c_pos);
    SPIRA_CHECK_LAUNCH();
    // 5. Second top-k (or, with exactly k candidates, the candidates themselves).
    T* out_v = dst.values + r * dst.ld_values;
    IndexT* out_i = dst.indices + r * dst.ld_indices;
    if (c_len == k && !p.sorted) {
      copy(out_v, memory_space::device, c_val, memory_space::device, k, res);
      copy(out_i, memory_space::device, c_pos, memory_space::device, k, res);
    } else {
      set_row_ptr(ws[c_ptr], c_len, stream);
      problem second = radix;
      second.max_length = c_len;
      select_rows(res, vector_row<T, IndexT>(c_val, c_pos, ws[c_ptr]),
                  row_sink<T, IndexT>{out_v, out_i, dst.ld_values, dst.ld_indices}, second);
    }
  }
  // Temporaries are freed stream-ordered; the caller's next use of dst is ordered after us.
}

#define SPIRA_SELECT_VECTOR_CUDA(T, I)                                                            \
  template void select_vector(const cuda_resources&, row_source<T, I>, row_sink<T, I>,             \
                              const problem&);
SPIRA_SELECT_VECTOR_CUDA(float, std::int32_t)
SPIRA_SELECT_VECTOR_CUDA(float, std::int64_t)
SPIRA_SELECT_VECTOR_CUDA(double, std::int32_t)
SPIRA_SELECT_VECTOR_CUDA(double, std::int64_t)
SPIRA_SELECT_VECTOR_CUDA(half, std::int32_t)
SPIRA_SELECT_VECTOR_CUDA(half, std::int64_t)
#undef SPIRA_SELECT_VECTOR_CUDA

}  // namespace spira::selection
