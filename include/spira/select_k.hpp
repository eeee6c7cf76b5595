// spira: row-wise top-k selection.
//
// select_k picks, in every row of a dense row-major matrix or among the stored values of every row
// of a CSR matrix, the k smallest or the k largest values and their indices.
//
// Promises (documented in docs/selection.md and tested in tests/selection):
//  * Total order. Values are ranked by value, then by index: among equal values the smaller index
//    wins (for CSR rows: the earlier stored entry, which is the smaller column in a canonical CSR).
//    -0.0 and +0.0 are equal. NaN is the worst value in both directions: it is selected only when
//    fewer than k numbers remain, and among NaNs the smaller index wins. With this order the k
//    selected elements of a row are unique, so the result does not depend on the algorithm.
//  * Output order. Unsorted output lists the selected elements of a row by increasing index;
//    sorted output (select_params::sorted) lists them best first (by value, then index).
//  * Determinism. The same input gives the same bytes on every backend and with every algorithm
//    (max_iter, which is approximate by design, also gives the same bytes on both backends).
//  * Padding. Rows with fewer than k elements (ragged CSR rows) are padded with index -1 and value
//    +inf (order::smallest) or -inf (order::largest); padding follows the selected elements.
//
// Types: values float, double and spira::half (dense rows only: CSR views hold float or double);
// indices int32_t or int64_t.
#pragma once

#include <spira/matrix.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace spira {

/// IEEE 754 binary16 as a 16-bit storage type. Host code converts through float (round to nearest
/// even); device code reinterprets the bits as __half. Arithmetic is deliberately not provided.
struct half {
  std::uint16_t bits = 0;

  half() = default;
  /// Rounds to the nearest binary16 value (ties to even); overflow gives +-inf, NaN stays NaN.
  explicit half(float f) noexcept : bits(from_float(f)) {}
  [[nodiscard]] static constexpr half from_bits(std::uint16_t b) noexcept
  {
    half h;
    h.bits = b;
    return h;
  }
  explicit operator float() const noexcept { return to_float(bits); }

  friend bool operator==(half a, half b) noexcept { return a.bits == b.bits; }  // bitwise

 private:
  static std::uint16_t from_float(float f) noexcept
  {
    std::uint32_t x = __builtin_bit_cast(std::uint32_t, f);
    const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) {
      return sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u);
    }
    if (x >= 0x477ff000u) {  // >= 65520 rounds to infinity
      return sign | 0x7c00u;
    }
    if (x < 0x38800000u) {  // below 2^-14: a subnormal half (or zero)
      const float scaled = __builtin_bit_cast(float, x) * 16777216.0f;  // exact: times 2^24
      return sign | static_cast<std::uint16_t>(std::nearbyint(scaled));
    }
    x += 0xfffu + ((x >> 13) & 1u);  // round the 13 dropped bits to nearest even
    return sign | static_cast<std::uint16_t>((x - 0x38000000u) >> 13);
  }
  static float to_float(std::uint16_t h) noexcept
  {
    const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    const std::uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
      const float m = static_cast<float>(mant) * 5.9604644775390625e-8f;  // mant * 2^-24
      return sign ? -m : m;
    }
    const std::uint32_t bits = exp == 31 ? (sign | 0x7f800000u | (mant << 13))
                                         : (sign | ((exp + 112) << 23) | (mant << 13));
    return __builtin_bit_cast(float, bits);
  }
};
static_assert(sizeof(half) == 2 && std::is_trivially_copyable_v<half>);

/// Which end of the order select_k keeps.
enum class select_order { smallest, largest };

/// Algorithms of the CUDA backend (the host backend computes the same result with one algorithm).
enum class select_algo {
  automatic,      ///< choose_select_algo() decides from the problem shape
  binary_search,  ///< RTop-K: a warp per row, bisection on the key range (rows <= 2048 elements)
  radix,          ///< RadiK-style MSD radix select, any row length and any k
  /// Dr. Top-k: delegate-centric selection for very long rows (a few rows of 2^20 to 2^31+
  /// elements): the row is cut into sub-ranges, the best delegates of every sub-range are selected
  /// first, and only the sub-ranges that can still contribute are read again. Dense rows only.
  delegate,
};

/// "smallest", "largest"; "automatic", "binary_search", "radix", "delegate"; the _from_string
/// functions read them back (invalid_argument listing the valid names otherwise).
[[nodiscard]] const char* to_string(select_order o) noexcept;
[[nodiscard]] select_order select_order_from_string(std::string_view name);
[[nodiscard]] const char* to_string(select_algo a) noexcept;
[[nodiscard]] select_algo select_algo_from_string(std::string_view name);

/// Value types of select_k, for choose_select_algo.
enum class select_dtype { f16, f32, f64 };

struct select_params {
  select_algo algo = select_algo::automatic;
  /// Output rows best first (by value, then index) instead of by increasing index.
  bool sorted = false;
  /// Approximate early stop of the bisection after this many steps (RTop-K's Algorithm 2). Without
  /// it the result is exact. With it, a row takes every element strictly better than the
  /// bisection's lower bound and fills up, by increasing index, from the undecided interval; the
  /// result is then approximate (deterministic, and identical on both backends). Requires
  /// binary_search (or automatic) and rows of at most select_binary_search_max_length elements.
  std::optional<int> max_iter{};
};

/// Longest row the binary_search algorithm handles (32 lanes x 64 keys held in registers).
inline constexpr std::int64_t select_binary_search_max_length = 2048;

/// select_algo::automatic picks delegate for at most this many rows...
inline constexpr std::int64_t select_delegate_max_rows = 8;
/// ...of at least this many elements...
inline constexpr std::int64_t select_delegate_min_length = std::int64_t{1} << 24;
/// ...when k <= length / select_delegate_min_length_per_k (see docs/selection.md, "auto")...
inline constexpr std::int64_t select_delegate_min_length_per_k = 128;
/// ...but one row shorter than 2 x select_delegate_min_length (whose radix select is the faster
/// one-row form) only when k <= length / this.
inline constexpr std::int64_t select_delegate_one_row_min_length_per_k = 512;

/// The algorithm select_algo::automatic runs on the CUDA backend for `rows` rows of at most
/// `length` elements and a given k and value type. Thresholds: see docs/selection.md ("auto"),
/// which names the benchmarks (bench/select_k/select_k.py, bench/select_k/select_vector.py) they
/// come from. Ragged (CSR) rows never run delegate: where this function answers delegate for them,
/// radix runs.
[[nodiscard]] select_algo choose_select_algo(std::int64_t rows, std::int64_t length, std::int64_t k,
                                             select_dtype dtype) noexcept;

template <class T>
inline constexpr bool is_select_value_type_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, half>;

/// The value types select_k ranks (T: float, double or spira::half) and the index types it writes
/// (IndexT: int32_t or int64_t). A call with another type fails to compile, naming the parameter
/// and the concept it does not satisfy.
template <class T>
concept select_value_type = is_select_value_type_v<T>;
template <class IndexT>
concept select_index_type = is_index_type_v<IndexT>;

// ---- dense rows ---------------------------------------------------------------------------------
// in: rows x n; out_values and out_indices: rows x k, 1 <= k <= n. Indices are column positions.

template <select_value_type T, select_index_type IndexT>
void select_k(const host_resources& res, std::type_identity_t<dense_view<const T>> in,
              std::int64_t k, select_order order, dense_view<T> out_values,
              dense_view<IndexT> out_indices, const select_params& params = {});

template <select_value_type T, select_index_type IndexT>
void select_k(const cuda_resources& res, std::type_identity_t<dense_view<const T>> in,
              std::int64_t k, select_order order, dense_view<T> out_values,
              dense_view<IndexT> out_indices, const select_params& params = {});

// ---- ragged rows (CSR) --------------------------------------------------------------------------
// The top-k among each row's stored values; indices are the stored column indices. k >= 1; rows
// with fewer than k stored values are padded (see above). out_values/out_indices: rows x k.

template <class ValueT, class IndexT>
  requires is_value_type_v<ValueT>
void select_k(const host_resources& res, csr_view<ValueT, IndexT> rows, std::int64_t k,
              select_order order, dense_view<ValueT> out_values, dense_view<IndexT> out_indices,
              const select_params& params = {});

template <class ValueT, class IndexT>
  requires is_value_type_v<ValueT>
void select_k(const cuda_resources& res, csr_view<ValueT, IndexT> rows, std::int64_t k,
              select_order order, dense_view<ValueT> out_values, dense_view<IndexT> out_indices,
              const select_params& params = {});

/// As above, returned as a CSR matrix (same shape as `rows`) with min(k, degree) entries per row,
/// in the output order of `params.sorted`, in the memory space of the backend.
template <class ValueT, class IndexT>
  requires is_value_type_v<ValueT>
csr_matrix<ValueT, IndexT> select_k(const host_resources& res, csr_view<ValueT, IndexT> rows,
                                    std::int64_t k, select_order order,
                                    const select_params& params = {});

template <class ValueT, class IndexT>
  requires is_value_type_v<ValueT>
csr_matrix<ValueT, IndexT> select_k(const cuda_resources& res, csr_view<ValueT, IndexT> rows,
                                    std::int64_t k, select_order order,
                                    const select_params& params = {});

}  // namespace spira
