// spira selection: the digit passes of the radix algorithm: the digit a row's next pass takes,
// the row states of phase 0, and the pick that fixes each pass's digit from the row's histogram
// (selection/radix.cuh describes the algorithm).
#pragma once

#include "selection/keys.hpp"
#include "selection/radix_policy.cuh"
#include "selection/warp.cuh"

#include <cstdint>

namespace spira::selection {

/// The digit a row's next pass fixes and the prefix it is taken under (from the row's state):
/// bits [shift, top) of the key, or of the position once the key is fixed.
template <class T>
struct radix_pass {
  using key_type = typename key_traits<T>::key_type;
  bool key_pass;
  bool first_digit;  ///< no higher digit of the key (or, for positions, of the position) is fixed
  int top;
  int shift;

  __device__ __forceinline__ radix_pass(const radix_layout& l, const radix_row_state<key_type>& s)
      : key_pass(s.key_fixed == 0),
        first_digit(s.top >=
                    (key_pass ? key_traits<T>::bits : radix_policy::digit_bits * l.pos_digits)),
        top(s.top),
        shift(s.top > radix_policy::digit_bits ? s.top - radix_policy::digit_bits : 0)
  {
  }
  /// Whether (key, pos) matches the row's prefix, and then its digit. Where fewer than 8 bits
  /// remain, the digit's upper bits are prefix bits, the same for every match.
  __device__ __forceinline__ bool match(const radix_row_state<key_type>& s, key_type key,
                                        std::uint64_t pos, unsigned& digit) const
  {
    if (key_pass) {
      digit = static_cast<unsigned>(key >> shift) & (radix_policy::bins - 1);
      return first_digit || (key >> top) == (s.key >> top);
    }
    digit = static_cast<unsigned>(pos >> shift) & (radix_policy::bins - 1);
    return key == s.key && (first_digit || (pos >> top) == (s.pos >> top));
  }
  /// Whether (key, pos) ranks before every element matching the row's prefix (it is selected).
  __device__ __forceinline__ bool below(const radix_row_state<key_type>& s, key_type key,
                                        std::uint64_t pos) const
  {
    if (key_pass) {
      return !first_digit && (key >> top) < (s.key >> top);
    }
    return key < s.key || (key == s.key && !first_digit && (pos >> top) < (s.pos >> top));
  }
};

/// Phase 0: row states (a row with at most k elements is done at once: all of it is selected).
template <class T, class IndexT>
__device__ void radix_init(const radix_args<T, IndexT>& a)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t row = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; row < a.src.rows;
       row += stride) {
    const std::int64_t n = a.src.length(row);
    radix_row_state<typename key_traits<T>::key_type> s;
    s.key = 0;
    s.pos = 0;
    s.remaining = n < a.k ? n : a.k;
    s.lo = ~0ull;  // the first pass takes the extremes
    s.hi = 0;
    s.top = key_traits<T>::bits;
    s.key_fixed = 0;
    s.done = n <= a.k ? 1 : 0;
    s.source = radix_from_row;
    if (s.done) {
      s.key = key_traits<T>::worst;
      s.pos = ~std::uint64_t{0};
    } else {
      atomicAdd(a.pending, 1ull);
    }
    a.state[row] = s;
  }
}

/// One warp fixes the next digit of one row from its histogram (and clears the histogram).
template <class T, class IndexT>
__device__ void radix_pick_row(const radix_args<T, IndexT>& a, std::int64_t row, int pass)
{
  using key_type = typename key_traits<T>::key_type;
  constexpr int per_lane = radix_policy::bins / warp::size;
  radix_row_state<key_type> s = a.state[row];
  if (s.done) {
    return;
  }  // uniform over the warp
  const int lane = warp::lane_id();
  unsigned long long* h = a.hist + row * radix_policy::bins;
  unsigned long long c[per_lane];
  unsigned long long lane_total = 0;
#pragma unroll
  for (int j = 0; j < per_lane; ++j) {
    c[j] = h[lane * per_lane + j];
    h[lane * per_lane + j] = 0;  // ready for the next pass
    lane_total += c[j];
  }
  const unsigned long long before_lane = warp::inclusive_sum(lane_total) - lane_total;
  const auto remaining = static_cast<unsigned long long>(s.remaining);
  // The bin where the running count first reaches `remaining`: exactly one lane owns it.
  int digit = -1;
  unsigned long long below = before_lane;
  unsigned long long count = 0;
#pragma unroll
  for (int j = 0; j < per_lane; ++j) {
    if (digit < 0 && below + c[j] >= remaining) {
      digit = lane * per_lane + j;
      count = c[j];
    } else if (digit < 0) {
      below += c[j];
    }
  }
  const unsigned owner = __ballot_sync(warp::full_mask, digit >= 0 && below < remaining);
  const int src_lane = __ffs(owner) - 1;
  digit = __shfl_sync(warp::full_mask, digit, src_lane);
  below = __shfl_sync(warp::full_mask, below, src_lane);
  count = __shfl_sync(warp::full_mask, count, src_lane);
  if (lane != 0) {
    return;
  }

  const radix_layout& l = a.layout;
  s.remaining -= static_cast<std::int64_t>(below);
  const bool complete = count == static_cast<unsigned long long>(s.remaining);
  const int shift = s.top > radix_policy::digit_bits ? s.top - radix_policy::digit_bits : 0;
  if (!s.key_fixed) {
    s.key |= key_type(digit) << shift;
    if (complete) {  // the bin is taken whole: every key up to its last
      s.key |= shift > 0 ? key_type((key_type(1) << shift) - 1) : key_type(0);
      s.pos = ~std::uint64_t{0};
      s.done = 1;
    } else {
      s.top = radix_narrow(s.key, shift, static_cast<key_type>(s.lo), static_cast<key_type>(s.hi));
      if (s.top == 0) {  // the k-th key is found: its ties are taken by position
        s.key_fixed = 1;
        s.top = radix_policy::digit_bits * l.pos_digits;
      }
    }
  } else {
    s.pos |= std::uint64_t(digit) << shift;
    if (complete) {
      s.pos |= shift > 0 ? (std::uint64_t{1} << shift) - 1 : 0;
      s.done = 1;
    }
    s.top = shift;
  }
  if (s.done) {
    atomicAdd(a.pending, ~0ull);
  }  // minus one
  // The write buffer: after a copy pass, read the buffer; once the elements still in play fit it,
  // copy them in the next pass.
  if (s.source == radix_copy) {
    s.source = radix_from_buffer;
  } else if (s.source == radix_from_row && !s.done && pass + 1 < l.key_digits + l.pos_digits &&
             count <= static_cast<unsigned long long>(a.capacity)) {
    s.source = radix_copy;
  }
  a.state[row] = s;
}

}  // namespace spira::selection
