// merge_knn with cuda_resources (CUDA builds; a host-only build has the not_compiled entry in
// src/core/no_cuda.cpp). Host parts are merged on the host (merge.cpp). Device parts are checked
// and merged on the GPU (merge_ops_cuda.cu) with the host's order and running merge, so the result
// is the host merge's bit for bit; the first bad row, found on the device, is copied back and
// described by the host's check, so errors read the same on both backends.
#include "merge_cuda.hpp"
#include "merge.hpp"

#include <spira/knn.hpp>
#include <spira/memory.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace spira {

namespace detail {

namespace {

/// Row r of every device part, copied to the host (one row each), with views of the copies.
struct host_row_copy {
  std::vector<std::vector<std::int64_t>> indices;
  std::vector<std::vector<float>> distances;
  std::vector<knn_result_view> views;
};

host_row_copy copy_row(const cuda_resources& res, std::span<const knn_result_view> parts,
                       std::int64_t r)
{
  host_row_copy c;
  for (const knn_result_view& p : parts) {
    const std::int64_t cols = p.indices.cols;
    c.indices.emplace_back(static_cast<std::size_t>(cols));
    c.distances.emplace_back(static_cast<std::size_t>(cols));
    copy(c.indices.back().data(), memory_space::host, p.indices.row(r), p.indices.space,
         static_cast<std::size_t>(cols), res);
    copy(c.distances.back().data(), memory_space::host, p.distances.row(r), p.distances.space,
         static_cast<std::size_t>(cols), res);
  }
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const std::int64_t cols = parts[p].indices.cols;
    c.views.push_back({{1, cols, cols, c.indices[p].data(), memory_space::host},
                       {1, cols, cols, c.distances[p].data(), memory_space::host}});
  }
  return c;
}

/// merge_knn of parts in device memory, on the GPU; the result in device memory from res.
knn_result merge_knn_device(const cuda_resources& res, std::span<const knn_result_view> parts,
                            std::int64_t k, bool largest, bool check_rows)
{
  const std::int64_t n_q = parts[0].indices.rows;
  const auto num_parts = static_cast<std::int64_t>(parts.size());
  std::vector<merge_part_device> host_parts;
  std::int64_t width = 0;  // the parts' columns together
  for (const knn_result_view& p : parts) {
    host_parts.push_back(
        {p.indices.data, p.distances.data, p.indices.ld, p.distances.ld, p.indices.cols, width});
    width += p.indices.cols;
  }
  knn_result out{dense_matrix<std::int64_t>(res, n_q, k), dense_matrix<float>(res, n_q, k)};
  if (n_q == 0) {
    return out;
  }
  buffer<merge_part_device> dev_parts(res, host_parts.size(), "merge_knn part descriptors");
  copy(dev_parts.data(), memory_space::device, host_parts.data(), memory_space::host,
       host_parts.size(), res);
  const std::int64_t none = std::numeric_limits<std::int64_t>::max();
  buffer<std::int64_t> first_bad(res, 1, "merge_knn first bad row");
  copy(first_bad.data(), memory_space::device, &none, memory_space::host, 1, res);

  // The checks of every row but the duplicate one, and the merge.
  {
    dense_matrix<std::int64_t> scratch_i(res, n_q, k);
    dense_matrix<float> scratch_d(res, n_q, k);
    merge_knn_rows_cuda(res, dev_parts.data(), num_parts, n_q, k, largest, out.indices.data(),
                        out.distances.data(), scratch_i.data(), scratch_d.data(), first_bad.data());
  }
  // The duplicate check, in chunks of rows (the other row checks ride along with the merge).
  if (width > 0 && check_rows) {
    const std::int64_t chunk =
        std::clamp<std::int64_t>(merge_knn_policy::duplicate_check_entries / width, 1, n_q);
    const auto entries = static_cast<std::size_t>(chunk * width);
    buffer<std::uint64_t> keys[2] = {buffer<std::uint64_t>(res, entries, "merge_knn check keys"),
                                     buffer<std::uint64_t>(res, entries, "merge_knn check keys")};
    buffer<offset_t> rows[2] = {buffer<offset_t>(res, entries, "merge_knn check rows"),
                                buffer<offset_t>(res, entries, "merge_knn check rows")};
    for (std::int64_t r0 = 0; r0 < n_q; r0 += chunk) {
      merge_knn_duplicates_cuda(res, dev_parts.data(), num_parts, width, r0,
                                std::min(n_q, r0 + chunk), {keys[0].data(), keys[1].data()},
                                {rows[0].data(), rows[1].data()}, first_bad.data());
    }
  }

  std::int64_t bad = none;
  copy(&bad, memory_space::host, first_bad.data(), memory_space::device, 1, res);
  if (bad != none) {
    const host_row_copy row = copy_row(res, parts, bad);
    std::string message = merge_knn_row_error(row.views, 0, bad, largest);
    expects<error>(!message.empty(), "merge_knn: the device check rejected row ", bad,
                   ", which the host check accepts (internal error)");
    throw invalid_argument(message);
  }
  return out;
}

}  // namespace

}  // namespace detail

knn_result merge_knn(const cuda_resources& res, std::span<const knn_result_view> parts,
                     std::int64_t k, select_order order, merge_check check)
{
  const memory_space space = detail::check_merge_knn_parts(parts, k);
  const bool largest = order == select_order::largest;
  const bool check_rows = check == merge_check::rows;
  if (space == memory_space::host) {
    return detail::merge_knn_host(parts, k, largest, host_resources{}.num_threads(), check_rows);
  }
  return detail::merge_knn_device(res, parts, k, largest, check_rows);
}

}  // namespace spira
