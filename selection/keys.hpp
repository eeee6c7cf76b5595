// spira selection: order-preserving unsigned keys, and the row source and sink shared by the host
// and CUDA implementations of select_k.
//
// Every value is mapped to an unsigned key such that "better" means "smaller key", whatever the
// direction: key(a) < key(b) iff a ranks before b. Laws the algorithms rely on:
//  * -0.0 and +0.0 map to the same key (they are equal values);
//  * every NaN maps to the all-ones key (the worst), which no number reaches;
//  * the map depends only on the value bits, so a key can be recomputed from a selected value;
//  * from_key inverts it for every key but two: the key of zero (shared by -0 and +0) and the
//    worst (shared by every NaN), for which exact_key is false and the value must be read back.
// Ties between equal keys are broken by the position in the row (smaller first).
#pragma once

#include <spira/config.hpp>
#include <spira/select_k.hpp>

#include <bit>
#include <cstdint>

namespace spira::selection {

template <class T>
struct key_traits;

template <>
struct key_traits<float> {
  using key_type = std::uint32_t;
  static constexpr int bits = 32;
  static constexpr key_type worst = 0xffffffffu;
  SPIRA_HD static key_type to_key(float v, bool largest) noexcept
  {
    const std::uint32_t b = __builtin_bit_cast(std::uint32_t, v);
    return (b & 0x7fffffffu) > 0x7f800000u ? worst : number_key(v, largest);
  }
  /// to_key without the NaN rule (see number_key_range). Branch-free, 4 instructions: the GPU
  /// kernels convert every element of their rows. A negative value's bits b map to -b = ~b + 1,
  /// which sends -0 (0x80000000) to the key of +0 with no test of its own; b | sign for the others.
  SPIRA_HD static key_type number_key(float v, bool largest) noexcept
  {
    const std::uint32_t b = __builtin_bit_cast(std::uint32_t, v);
    const auto m = static_cast<std::uint32_t>(static_cast<std::int32_t>(b) >> 31);
    const std::uint32_t asc = (b ^ (m | 0x80000000u)) - m;
    return asc ^ (0u - static_cast<std::uint32_t>(largest));
  }
  /// The value of `key` (+0 for zero's key; meaningless for the worst).
  SPIRA_HD static float from_key(key_type key, bool largest) noexcept
  {
    const std::uint32_t asc = key ^ (0u - static_cast<std::uint32_t>(largest));
    return __builtin_bit_cast(float, asc & 0x80000000u ? asc ^ 0x80000000u : 0u - asc);
  }
  /// Whether from_key(key) is the only value with this key.
  SPIRA_HD static bool exact_key(key_type key, bool largest) noexcept
  {
    return key != worst && key != to_key(0.0f, largest);
  }
  SPIRA_HD static float padding(bool largest) noexcept
  {
    return __builtin_bit_cast(float, largest ? 0xff800000u : 0x7f800000u);
  }
};

template <>
struct key_traits<double> {
  using key_type = std::uint64_t;
  static constexpr int bits = 64;
  static constexpr key_type worst = ~std::uint64_t{0};
  SPIRA_HD static key_type to_key(double v, bool largest) noexcept
  {
    const std::uint64_t b = __builtin_bit_cast(std::uint64_t, v);
    return (b & ~(std::uint64_t{1} << 63)) > 0x7ff0000000000000ull ? worst : number_key(v, largest);
  }
  /// to_key without the NaN rule (see number_key_range).
  SPIRA_HD static key_type number_key(double v, bool largest) noexcept
  {
    std::uint64_t b = __builtin_bit_cast(std::uint64_t, v);
    constexpr std::uint64_t sign = std::uint64_t{1} << 63;
    b = b == sign ? std::uint64_t{0} : b;
    const std::uint64_t asc = b ^ ((std::uint64_t{0} - (b >> 63)) | sign);
    return asc ^ (std::uint64_t{0} - static_cast<std::uint64_t>(largest));
  }
  SPIRA_HD static double from_key(key_type key, bool largest) noexcept
  {
    constexpr std::uint64_t sign = std::uint64_t{1} << 63;
    const std::uint64_t asc = key ^ (std::uint64_t{0} - static_cast<std::uint64_t>(largest));
    return __builtin_bit_cast(double, asc& sign ? asc ^ sign : ~asc);
  }
  SPIRA_HD static bool exact_key(key_type key, bool largest) noexcept
  {
    return key != worst && key != to_key(0.0, largest);
  }
  SPIRA_HD static double padding(bool largest) noexcept
  {
    return __builtin_bit_cast(double, largest ? 0xfff0000000000000ull : 0x7ff0000000000000ull);
  }
};

/// binary16 keys use the low 16 bits of a 32-bit word (registers and atomics are 32-bit anyway).
template <>
struct key_traits<half> {
  using key_type = std::uint32_t;
  static constexpr int bits = 16;
  static constexpr key_type worst = 0xffffu;
  SPIRA_HD static key_type to_key(half v, bool largest) noexcept
  {
    return (v.bits & 0x7fffu) > 0x7c00u ? worst : number_key(v, largest);
  }
  /// to_key without the NaN rule (see number_key_range).
  SPIRA_HD static key_type number_key(half v, bool largest) noexcept
  {
    std::uint32_t b = v.bits;
    b = b == 0x8000u ? 0u : b;
    const std::uint32_t asc = b ^ (((0u - (b >> 15)) & 0xffffu) | 0x8000u);
    return asc ^ ((0u - static_cast<std::uint32_t>(largest)) & 0xffffu);
  }
  SPIRA_HD static half from_key(key_type key, bool largest) noexcept
  {
    const std::uint32_t asc = (key ^ (0u - static_cast<std::uint32_t>(largest))) & 0xffffu;
    half h;
    h.bits = static_cast<std::uint16_t>(asc & 0x8000u ? asc ^ 0x8000u : ~asc & 0xffffu);
    return h;
  }
  SPIRA_HD static bool exact_key(key_type key, bool largest) noexcept
  {
    return key != worst && key != to_key(half{}, largest);
  }
  SPIRA_HD static half padding(bool largest) noexcept
  {
    half h;  // through the member, not from_bits: this runs on devices too
    h.bits = largest ? std::uint16_t{0xfc00} : std::uint16_t{0x7c00};
    return h;
  }
};

/// number_key maps the numbers into [first, last], from the key of the best infinity to that of the
/// worst, and every NaN outside it: a kernel can convert with number_key and find a row's NaNs from
/// its keys' extremes, which it computes anyway, instead of testing every element.
template <class Key>
struct key_range {
  Key first;
  Key last;
  SPIRA_HD bool contains(Key key) const { return key >= first && key <= last; }
};

template <class T>
SPIRA_HD key_range<typename key_traits<T>::key_type> number_key_range(bool largest) noexcept
{
  // Ascending keys of -inf and +inf (constants); the largest-first keys are their complements.
  using traits = key_traits<T>;
  const auto minus_inf = traits::number_key(traits::padding(true), false);
  const auto plus_inf = traits::number_key(traits::padding(false), false);
  if (largest) {
    return {plus_inf ^ traits::worst, minus_inf ^ traits::worst};
  }
  return {minus_inf, plus_inf};
}

/// The total order of a row's elements: (key ka, position pa) ranks before (kb, pb).
template <class Key>
SPIRA_HD constexpr bool ranks_before(Key ka, std::int64_t pa, Key kb, std::int64_t pb)
{
  return ka < kb || (ka == kb && pa < pb);
}

/// The rows to select from: dense (row_ptr == nullptr: row r is values[r * ld .. r * ld + cols))
/// or ragged CSR (row r is values[row_ptr[r] .. row_ptr[r + 1]), reported indices from col_idx).
template <class T, class IndexT>
struct row_source {
  const T* values = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;  ///< dense row length
  std::int64_t ld = 0;
  const offset_t* row_ptr = nullptr;
  const IndexT* col_idx = nullptr;

  SPIRA_HD std::int64_t begin(std::int64_t r) const { return row_ptr ? row_ptr[r] : r * ld; }
  SPIRA_HD std::int64_t length(std::int64_t r) const
  {
    return row_ptr ? row_ptr[r + 1] - row_ptr[r] : cols;
  }
  /// The index reported for position `pos` of row r (whose first element is at `first`).
  SPIRA_HD IndexT index_at(std::int64_t first, std::int64_t pos) const
  {
    return col_idx ? col_idx[first + pos] : static_cast<IndexT>(pos);
  }
};

/// rows x k outputs with their leading dimensions.
template <class T, class IndexT>
struct row_sink {
  T* values = nullptr;
  IndexT* indices = nullptr;
  std::int64_t ld_values = 0;
  std::int64_t ld_indices = 0;
};

/// One step of the bisection on the key range shared by the binary_search kernel and the host's
/// early-stopped (max_iter) selection, so both take the same path and select the same elements.
/// Given the midpoint `mid` of [lo, hi] and `at_most_mid`, the number of keys <= mid:
///   exactly k keys <= mid  -> the threshold is found: [lo, hi] becomes empty, below = k;
///   fewer than k           -> every key <= mid is taken: lo = mid + 1, below = at_most_mid;
///   more than k            -> hi = mid.
/// Returns true when the search is finished. Keys below `lo` are all selected; the remaining
/// k - below come from [lo, hi] in position order.
template <class Key>
SPIRA_HD constexpr Key bisection_mid(Key lo, Key hi)
{
  return lo + (hi - lo) / 2;
}

template <class Key, class Count>
SPIRA_HD constexpr bool bisection_step(Key& lo, Key& hi, Count& below, Key mid, Count at_most_mid,
                                       Count k)
{
  if (at_most_mid == k) {
    lo = mid + 1;
    hi = mid;
    below = k;
    return true;
  }
  if (at_most_mid < k) {
    lo = mid + 1;
    below = at_most_mid;
  } else {
    hi = mid;
  }
  return false;
}

/// Adaptive digit positions of the MSD radix selects (a form of RadiK's adaptive scaling,
/// section 4.3, that keeps the order exact). After a digit pass has fixed the bits of `prefix`
/// from `shift` up, the keys still in question are those of [prefix, prefix + 2^shift) that lie
/// within the row's extremes [lo, hi] (never empty: the chosen bin holds the k-th key). Sets
/// `prefix` to the bits they all share and returns the number of low bits in which they can still
/// differ; the next digit ends there, so keys clustered near the k-th take no pass for their
/// common bits. 0: every key in question equals `prefix`.
template <class Key>
SPIRA_HD int radix_narrow(Key& prefix, int shift, Key lo, Key hi)
{
  const Key last = prefix | (shift > 0 ? Key((Key(1) << shift) - 1) : Key(0));
  const Key cl = lo > prefix ? lo : prefix;
  const Key ch = hi < last ? hi : last;
  const auto differ = static_cast<std::uint64_t>(cl ^ ch);
#if defined(__CUDA_ARCH__)
  const int top = 64 - __clzll(static_cast<long long>(differ));
#else
  const int top = static_cast<int>(std::bit_width(differ));
#endif
  prefix = top > 0 ? Key((cl >> top) << top) : cl;  // top <= shift < the key's bits
  return top;
}

}  // namespace spira::selection
