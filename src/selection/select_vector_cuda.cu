// select_k with select_algo::delegate, CUDA backend: Dr. Top-k's steps (selection/delegate.cuh)
// for each row on its own, with both top-k steps run by the radix select of select_k_cuda.cu
// (through select_rows on a one-row CSR view of the delegate or candidate vector, whose column
// indices are the row positions: the radix select's tie rule on a vector in position order is the
// tie rule of the row, and the indices it reports are row positions).
//
// Per row: delegates (one read of the row) -> first top-k on the delegate vector -> threshold t
// -> per sub-range candidate counts (full sub-ranges read again) -> prefix sum -> candidates in
// position order, into a vector sized before the count is known -> second top-k. No step waits
// for the host; one host read after the last row finds rows whose candidates overflowed the
// vector, and redoes them with the exact size.
#include <spira/detail/type_lists.hpp>
#include "selection/delegate.cuh"
#include "selection/dispatch.hpp"
#include "selection/launch.hpp"
#include "selection/workspace.hpp"

#include <spira/cuda/device.cuh>
#include <spira/cuda/error.cuh>

#include <cub/device/device_scan.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace spira::selection {

using spira::detail::device_guard;

namespace {

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

/// row_ptr = {0, min(c_len, capacity)} of the candidate vector's one-row CSR view, and c_len
/// recorded for the host's check after the last row (stream-ordered, no host synchronisation).
__global__ void candidate_row_kernel(const std::int64_t* c_len, std::int64_t capacity,
                                     offset_t* row_ptr, std::int64_t* c_len_out)
{
  const std::int64_t c = *c_len;
  row_ptr[0] = 0;
  row_ptr[1] = c < capacity ? c : capacity;
  *c_len_out = c;
}

template <class T, class IndexT>
void select_vector(const cuda_resources& res, row_source<T, IndexT> src, row_sink<T, IndexT> dst,
                   const problem& p)
{
  using key_type = typename key_traits<T>::key_type;
  using threshold = delegate_threshold<key_type>;
  constexpr int beta = delegate_policy::beta;
  device_guard guard(res.device);
  const cudaStream_t stream = stream_of(res);
  const std::int64_t n = src.cols;
  const std::int64_t k = p.k;

  delegate_layout l;
  l.n = n;
  l.alpha = p.delegate_subrange > 0 ? p.delegate_subrange : delegate_subrange_for(n, k);
  detail::expects(
      l.alpha >= 32 && l.alpha <= (std::int64_t(1) << 31) && (l.alpha & (l.alpha - 1)) == 0,
      "select_k(cuda_resources): the delegate sub-range length must be a power of two "
      "in [32, 2^31], got ",
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

  // At most k / beta sub-ranges are full (each has beta delegates among the k selected), so at
  // most k + full_max * alpha candidates. Random rows have about k (docs/selection.md); the
  // candidate vector is sized for 2k + 2^16 and a row with more is redone with the exact size
  // after the last row, so that no row waits for a host read of its candidate count.
  const std::int64_t full_max = k / beta + 1;
  const std::int64_t bound = std::min(n, k + full_max * l.alpha);
  const std::int64_t planned = std::min(bound, 2 * k + (std::int64_t(1) << 16));
  constexpr int threshold_threads = 256;
  constexpr std::int64_t threshold_per_block = 16 * threshold_threads;
  const std::int64_t threshold_blocks = (k + threshold_per_block - 1) / threshold_per_block;
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
  const auto c_lens = ws.reserve<std::int64_t>(src.rows, "the candidate counts per row");
  const auto sel_val = ws.reserve<T>(k, "the first top-k values");
  const auto sel_pos = ws.reserve<IndexT>(k, "the first top-k positions");
  const auto t = ws.reserve<threshold>(1, "the delegate threshold");
  const auto t_part = ws.reserve<threshold>(threshold_blocks, "the delegate threshold per block");
  const auto counts = ws.reserve<std::int64_t>(l.m, "the candidate counts");
  const auto offsets = ws.reserve<std::int64_t>(l.m + 1, "the candidate offsets");
  const auto full_list = ws.reserve<std::int64_t>(full_max, "the full sub-ranges");
  const auto full_count = ws.reserve<unsigned long long>(1, "the full sub-range count");
  const auto piece_counts =
      ws.reserve<std::int64_t>(full_max * pieces, "the full sub-range pieces");
  const auto scan_tmp = ws.reserve<unsigned char>(static_cast<std::int64_t>(scan_bytes),
                                                  "the candidate scan workspace");
  const auto c_val_planned = ws.reserve<T>(planned, "the candidate values");
  const auto c_pos_planned = ws.reserve<IndexT>(planned, "the candidate positions");
  ws.allocate(res, "select_k delegate workspace");
  set_row_ptr(ws[d_ptr], d_len, stream);

  problem first = radix;
  first.max_length = d_len;
  first.sorted = false;
  const bool tiled = l.alpha <= delegate_policy::tile_max_subrange;
  const unsigned build_blocks =
      tiled ? grid_for(n, delegate_policy::tile<T>, "the delegates")
            : grid_for(l.m, delegate_policy::block_threads / warp::size, "the delegates");
  const unsigned sub_blocks = grid_for(l.m, 256, "the delegate candidates");
  const unsigned full_blocks = grid_for(
      full_max * pieces, delegate_policy::block_threads / warp::size, "the full sub-ranges");
  const delegate_counters reset{ws[full_count], ws[offsets]};

  // Every step of row r, with a candidate vector of `capacity` elements.
  auto run_row = [&](std::int64_t r, T* c_val, IndexT* c_pos, std::int64_t capacity) {
    const T* in = src.values + r * src.ld;
    // 1. Delegates: the beta best of every sub-range, in position order.
    const bool aligned = reinterpret_cast<std::uintptr_t>(in) % 16 == 0;
    if (tiled && aligned) {
      delegate_tile_kernel<T, IndexT, true>
          <<<build_blocks, delegate_policy::tile_threads, 0, stream>>>(in, l, p.largest, ws[d_val],
                                                                       ws[d_pos]);
    } else if (tiled) {
      delegate_tile_kernel<T, IndexT, false>
          <<<build_blocks, delegate_policy::tile_threads, 0, stream>>>(in, l, p.largest, ws[d_val],
                                                                       ws[d_pos]);
    } else if (aligned) {
      delegate_warp_kernel<T, IndexT, true>
          <<<build_blocks, delegate_policy::block_threads, 0, stream>>>(in, l, p.largest, ws[d_val],
                                                                        ws[d_pos]);
    } else {
      delegate_warp_kernel<T, IndexT, false>
          <<<build_blocks, delegate_policy::block_threads, 0, stream>>>(in, l, p.largest, ws[d_val],
                                                                        ws[d_pos]);
    }
    SPIRA_CHECK_LAUNCH();
    // 2. First top-k on the delegate vector, and its worst element t.
    select_rows(res, vector_row<T, IndexT>(ws[d_val], ws[d_pos], ws[d_ptr]),
                row_sink<T, IndexT>{ws[sel_val], ws[sel_pos], k, k}, first);
    if (threshold_blocks == 1) {
      delegate_threshold_kernel<T, IndexT, threshold_threads><<<1, threshold_threads, 0, stream>>>(
          ws[sel_val], ws[sel_pos], k, threshold_per_block, p.largest, ws[t], reset);
    } else {
      delegate_threshold_kernel<T, IndexT, threshold_threads>
          <<<static_cast<unsigned>(threshold_blocks), threshold_threads, 0, stream>>>(
              ws[sel_val], ws[sel_pos], k, threshold_per_block, p.largest, ws[t_part], reset);
      SPIRA_CHECK_LAUNCH();
      delegate_threshold_merge_kernel<key_type, threshold_threads>
          <<<1, threshold_threads, 0, stream>>>(ws[t_part], static_cast<int>(threshold_blocks),
                                                ws[t], reset);
    }
    SPIRA_CHECK_LAUNCH();
    // 3. Candidates per sub-range (Rules 2 and 3) and their offsets.
    delegate_classify_kernel<<<sub_blocks, 256, 0, stream>>>(
        ws[d_val], ws[d_pos], l, p.largest, ws[t], ws[counts], ws[full_list], ws[full_count]);
    SPIRA_CHECK_LAUNCH();
    delegate_full_count_kernel<<<full_blocks, delegate_policy::block_threads, 0, stream>>>(
        in, l, p.largest, ws[t], ws[full_list], ws[full_count], ws[counts], ws[piece_counts]);
    SPIRA_CHECK_LAUNCH();
    SPIRA_CUDA_TRY(cub::DeviceScan::InclusiveSum(ws[scan_tmp], scan_bytes, ws[counts],
                                                 ws[offsets] + 1, l.m, stream));
    candidate_row_kernel<<<1, 1, 0, stream>>>(ws[offsets] + l.m, capacity, ws[c_ptr],
                                              ws[c_lens] + r);
    SPIRA_CHECK_LAUNCH();
    // 4. The candidates, in position order (as many as the vector holds).
    delegate_write_delegates_kernel<<<sub_blocks, 256, 0, stream>>>(
        ws[d_val], ws[d_pos], l, p.largest, ws[t], ws[offsets], capacity, c_val, c_pos);
    SPIRA_CHECK_LAUNCH();
    delegate_write_full_kernel<<<full_blocks, delegate_policy::block_threads, 0, stream>>>(
        in, l, p.largest, ws[t], ws[full_list], ws[full_count], ws[offsets], ws[piece_counts],
        capacity, c_val, c_pos);
    SPIRA_CHECK_LAUNCH();
    // 5. Second top-k. (With exactly k candidates it returns them, in position order.)
    problem second = radix;
    second.max_length = capacity;
    const row_sink<T, IndexT> out{dst.values + r * dst.ld_values, dst.indices + r * dst.ld_indices,
                                  dst.ld_values, dst.ld_indices};
    select_rows(res, vector_row<T, IndexT>(c_val, c_pos, ws[c_ptr]), out, second);
  };

  for (std::int64_t r = 0; r < src.rows; ++r) {
    run_row(r, ws[c_val_planned], ws[c_pos_planned], planned);
  }
  // Rows whose candidates overflowed the planned vector (inputs with many equal or clustered
  // values near the k-th) are redone with the exact size; their first output is overwritten.
  std::vector<std::int64_t> c_len(static_cast<std::size_t>(src.rows));
  copy(c_len.data(), memory_space::host, ws[c_lens], memory_space::device, src.rows, res);
  for (std::int64_t r = 0; r < src.rows; ++r) {
    if (c_len[r] <= planned) {
      continue;
    }
    workspace cws;
    const auto c_val_slot = cws.reserve<T>(c_len[r], "the candidate values");
    const auto c_pos_slot = cws.reserve<IndexT>(c_len[r], "the candidate positions");
    cws.allocate(res, "select_k delegate candidates");
    run_row(r, cws[c_val_slot], cws[c_pos_slot], c_len[r]);
  }
  // Temporaries are freed stream-ordered; the caller's next use of dst is ordered after us.
}

#define SPIRA_SELECT_VECTOR_CUDA(T, I)                                                 \
  template void select_vector(const cuda_resources&, row_source<T, I>, row_sink<T, I>, \
                              const problem&);
SPIRA_FOR_EACH_SELECT_VALUE_INDEX(SPIRA_SELECT_VECTOR_CUDA)
#undef SPIRA_SELECT_VECTOR_CUDA

}  // namespace spira::selection
