// spira: the semiring model. Monoids, semirings (annihilating or NAMM), row norms and the shape of
// a distance, as plain values that a host loop or a CUDA kernel takes by value and calls.
//
// Every operator here is a stateless (or small, trivially copyable) struct whose call operators are
// SPIRA_HD templates on the arithmetic type T (float or double), so the same struct runs in the
// host engine and, compiled by nvcc, in device code. Nothing here allocates, throws or uses
// virtual calls; std:: math functions are the only library calls.
//
// ---- Vocabulary -------------------------------------------------------------------------------
// monoid (op, identity e [, terminal t]) over T; the laws every kernel relies on:
//     op(x, op(y, z)) == op(op(x, y), z)        associativity (kernels regroup and reorder)
//     op(x, y) == op(y, x)                      commutativity (atomics and reductions in any order)
//     op(e, x) == x                             identity (accumulators start at e; empty = e)
//     op(t, x) == t                             terminal, when declared (a kernel may stop early)
//   `kind` names the operation so that a kernel can choose its atomic: sum -> atomicAdd,
//   min / max -> atomicMin / atomicMax (or their float emulation), lor / any -> a plain store of
//   the terminal, custom -> a compare-and-swap loop over `op`.
//   Floating-point + is associative only up to rounding: results of sum-kind monoids may differ in
//   the last bits between backends or thread counts (the host engine is deterministic for a given
//   input, independent of the thread count).
//
// semiring (add monoid ⊕, multiply ⊗, annihilating flag):
//   annihilating == true   ⊗(x, e⊕) == ⊗(e⊕, y) == e⊕ for the implicit entry of a sparse operand.
//                          A missing entry *is* e⊕ (GraphBLAS semantics), so only columns stored
//                          in both operands contribute: the intersection suffices. An output
//                          entry with no common column holds e⊕ (0 for plus, +inf for min, ...).
//   annihilating == false  a NAMM (non-annihilating multiplicative monoid, Nolet et al. 2021):
//                          a missing entry is the value 0 and ⊗(x, 0), ⊗(0, y) matter, so the
//                          union of the stored columns must be visited. Law: ⊗(0, 0) == e⊕, so
//                          columns missing in both operands contribute nothing.
//   ⊗ need not be commutative (kl_divergence is not): the first argument always comes from A
//   (the left operand), the second from B.
//
// distance = semiring + row norms + finalize:
//   C[i,j] = finalize(⊕_c ⊗(A[i,c], B[j,c]), norms(A_i), norms(B_j), dim)
//   where each norm is a monoid reduction of a per-element map over the stored entries of a row
//   (sum of squares, sum, count of nonzeros, max |x|...), computed once per row before the
//   pairwise pass. The accumulator may have several components (`terms`, all reduced with the
//   same add monoid) when a distance needs more than one sum per pair (braycurtis).
//   See docs/semirings.md for the member list and a worked example.
#pragma once

#include <spira/config.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace spira {

// ---- small fixed-size vectors -------------------------------------------------------------------

/// N values of T: an accumulator with several components, or the norms of one row.
template <class T, int N>
struct terms {
  static_assert(N > 0, "terms<T, N>: N must be positive (terms<T, 0> is the empty specialisation)");
  static constexpr int size = N;
  T v[N];
  SPIRA_HD constexpr T& operator[](int k) { return v[k]; }
  SPIRA_HD constexpr const T& operator[](int k) const { return v[k]; }
};

/// No values: the norms of a distance that declares none.
template <class T>
struct terms<T, 0> {
  static constexpr int size = 0;
};

// ---- monoids ------------------------------------------------------------------------------------

/// What a kernel needs to know about a monoid's operation to pick an atomic update.
enum class monoid_kind { sum, min, max, lor, any, custom };

namespace detail {
template <class T>
SPIRA_HD constexpr T infinity()
{
  if constexpr (std::is_same_v<T, float>) {
    return __builtin_huge_valf();
  } else {
    return static_cast<T>(__builtin_huge_val());
  }
}
}  // namespace detail

/// (+, 0). Laws: associative, commutative, identity 0; no terminal. Invertible (x - y), which the
/// NAMM engine uses to turn a union into an intersection plus per-row corrections.
struct plus_monoid {
  static constexpr monoid_kind kind = monoid_kind::sum;
  template <class T>
  SPIRA_HD static constexpr T identity()
  {
    return T(0);
  }
  template <class T>
  SPIRA_HD constexpr T operator()(T x, T y) const
  {
    return x + y;
  }
};

/// (min, +inf). Laws: associative, commutative, idempotent, identity +inf, terminal -inf.
struct min_monoid {
  static constexpr monoid_kind kind = monoid_kind::min;
  template <class T>
  SPIRA_HD static constexpr T identity()
  {
    return detail::infinity<T>();
  }
  template <class T>
  SPIRA_HD static constexpr T terminal()
  {
    return -detail::infinity<T>();
  }
  template <class T>
  SPIRA_HD constexpr T operator()(T x, T y) const
  {
    return y < x ? y : x;
  }
};

/// (max, -inf). Laws: associative, commutative, idempotent, identity -inf, terminal +inf.
struct max_monoid {
  static constexpr monoid_kind kind = monoid_kind::max;
  template <class T>
  SPIRA_HD static constexpr T identity()
  {
    return -detail::infinity<T>();
  }
  template <class T>
  SPIRA_HD static constexpr T terminal()
  {
    return detail::infinity<T>();
  }
  template <class T>
  SPIRA_HD constexpr T operator()(T x, T y) const
  {
    return y > x ? y : x;
  }
};

/// (or, false) on truth values encoded as T: nonzero is true, results are 0 or 1.
/// Laws: associative, commutative, identity 0, terminal 1.
struct lor_monoid {
  static constexpr monoid_kind kind = monoid_kind::lor;
  template <class T>
  SPIRA_HD static constexpr T identity()
  {
    return T(0);
  }
  template <class T>
  SPIRA_HD static constexpr T terminal()
  {
    return T(1);
  }
  template <class T>
  SPIRA_HD constexpr T operator()(T x, T y) const
  {
    return (x != T(0) || y != T(0)) ? T(1) : T(0);
  }
};

/// GraphBLAS ANY: "any one of the operands". spira makes it deterministic: the first operand that
/// is not the identity 0, else the second. Laws: associative, identity 0; commutative up to the
/// choice of representative (a kernel may keep whichever value it sees first, so use it only
/// where every candidate is equally good, as in any_pair, where every candidate is 1).
/// Terminal: any nonzero value; declared as 1, the only value any_pair produces.
struct any_monoid {
  static constexpr monoid_kind kind = monoid_kind::any;
  template <class T>
  SPIRA_HD static constexpr T identity()
  {
    return T(0);
  }
  template <class T>
  SPIRA_HD static constexpr T terminal()
  {
    return T(1);
  }
  template <class T>
  SPIRA_HD constexpr T operator()(T x, T y) const
  {
    return x != T(0) ? x : y;
  }
};

/// A monoid over T: a `kind`, a static identity<T>() and a binary operator.
template <class M, class T>
concept monoid = std::is_trivially_copyable_v<M> && requires(const M m, T x) {
  { M::kind } -> std::convertible_to<monoid_kind>;
  { M::template identity<T>() } -> std::convertible_to<T>;
  { m(x, x) } -> std::convertible_to<T>;
};

/// True when M declares a terminal value (op(t, x) == t) that allows an early exit.
template <class M, class T>
inline constexpr bool has_terminal_v = requires { M::template terminal<T>(); };

// ---- per-element maps for norms -----------------------------------------------------------------

/// x
struct identity_map {
  template <class T>
  SPIRA_HD constexpr T operator()(T x) const
  {
    return x;
  }
};
/// |x|
struct abs_map {
  template <class T>
  SPIRA_HD constexpr T operator()(T x) const
  {
    return x < T(0) ? -x : x;
  }
};
/// x * x
struct square_map {
  template <class T>
  SPIRA_HD constexpr T operator()(T x) const
  {
    return x * x;
  }
};
/// 1 when x != 0, else 0 (so explicitly stored zeros do not count).
struct nonzero_map {
  template <class T>
  SPIRA_HD constexpr T operator()(T x) const
  {
    return x != T(0) ? T(1) : T(0);
  }
};

// ---- norms --------------------------------------------------------------------------------------

/// One row norm: reduce `Map(x)` over the stored entries of a row with `Monoid`.
/// An empty row has norm Monoid::identity(). For the result to equal the reduction over all `dim`
/// coordinates (as the finalize formulas assume), Map(0) must be the monoid's identity or be
/// absorbed by it (0 for sums, 0 for max of non-negative maps). Map and Monoid are stateless:
/// engines default-construct them (parameters belong in the distance struct and its finalize).
template <class Map, class Monoid>
struct norm {
  using map_type = Map;
  using monoid_type = Monoid;
};

/// The list of norms a distance needs, in the order finalize receives them.
template <class... Norms>
struct norm_list {
  static constexpr int size = static_cast<int>(sizeof...(Norms));
  template <class T>
  using values = terms<T, size>;

  template <class T>
  SPIRA_HD static constexpr values<T> identity()
  {
    if constexpr (size == 0) {
      return {};
    } else {
      return {{Norms::monoid_type::template identity<T>()...}};
    }
  }
  /// acc[k] = monoid_k(acc[k], map_k(x)) for every norm k.
  template <class T>
  SPIRA_HD static constexpr void accumulate(values<T>& acc, T x)
  {
    if constexpr (size > 0) {
      int k = 0;
      ((acc[k] = typename Norms::monoid_type{}(acc[k], typename Norms::map_type{}(x)), ++k), ...);
    }
  }
  /// acc[k] = monoid_k(acc[k], other[k]) (merging partial norms of one row).
  template <class T>
  SPIRA_HD static constexpr void combine(values<T>& acc, const values<T>& other)
  {
    if constexpr (size > 0) {
      int k = 0;
      ((acc[k] = typename Norms::monoid_type{}(acc[k], other[k]), ++k), ...);
    }
  }
};

// ---- semirings and distances --------------------------------------------------------------------

/// A semiring S: `using add_monoid`, `static constexpr bool annihilating`, and a multiply
/// `template <class T> T multiply(T a, T b) const` (a from the left operand, b from the right).
/// A distance is a semiring whose multiply may return terms<T, N> (N accumulator components),
/// and which may declare `using norms = norm_list<...>`, a finalize, and a row preparation
/// (see distance_traits). A plain semiring is a distance with no norms and finalize(acc) = acc.
template <class S, class T>
concept semiring = std::is_trivially_copyable_v<S> && monoid<typename S::add_monoid, T> &&
                   requires(const S s, T a) {
                     { S::annihilating } -> std::convertible_to<bool>;
                     s.template multiply<T>(a, a);
                   };

namespace detail {
template <class R>
struct terms_size : std::integral_constant<int, 1> {};
template <class T, int N>
struct terms_size<terms<T, N>> : std::integral_constant<int, N> {};

template <class D>
struct norms_of {
  using type = norm_list<>;
};
template <class D>
  requires requires { typename D::norms; }
struct norms_of<D> {
  using type = typename D::norms;
};
}  // namespace detail

/// What the engines read from a distance (or semiring) type D, with the defaults for the optional
/// members. T is the arithmetic type the engine computes in.
template <class D, class T>
struct distance_traits {
  using add_monoid = typename D::add_monoid;
  using norms = typename detail::norms_of<D>::type;
  using norm_values = typename norms::template values<T>;
  /// The value multiply returns: T or terms<T, N>.
  using product_type = decltype(std::declval<const D&>().template multiply<T>(T(), T()));
  /// Accumulator components.
  static constexpr int num_terms = detail::terms_size<product_type>::value;
  using accumulator = terms<T, num_terms>;
  static constexpr bool annihilating = D::annihilating;
  /// Optional `template <class T> T finalize(acc, const norm_values& na, const norm_values& nb,
  /// std::int64_t dim) const`, where acc is T (one component) or terms<T, N>.
  static constexpr bool has_finalize = requires(const D d, product_type acc, norm_values n) {
    d.template finalize<T>(acc, n, n, std::int64_t{});
  };
  /// D declares a member template named finalize (callable or not): engines reject a finalize
  /// whose signature does not match instead of silently ignoring it.
  static constexpr bool declares_finalize = requires { &D::template finalize<T>; };
  /// Optional row preparation: `using prepare_norm = norm<Map, Monoid>` and
  /// `template <class T> T prepare(T x, T row_norm) const` replace every stored value x of a row by
  /// prepare(x, row_norm) before the product (e.g. divide by the row sum). Norms and finalize see
  /// the raw values; multiply sees the prepared ones.
  static constexpr bool has_prepare = requires(const D d, T x) {
    typename D::prepare_norm;
    d.template prepare<T>(x, x);
  };
  /// A NAMM whose ⊕ is a sum: the engine may evaluate the union as
  ///   Σ_{A_i} ⊗(a,0) + Σ_{B_j} ⊗(0,b) + Σ_{A_i ∩ B_j} [⊗(a,b) - ⊗(a,0) - ⊗(0,b)]
  /// in one intersection pass (the first two sums are per-row corrections). This needs ⊗(a, 0)
  /// and ⊗(0, b) to be finite (inf - inf would give NaN); a NAMM whose one-sided product can be
  /// infinite should floor it (as kl_divergence does) or use a custom-kind ⊕, which is merged.
  static constexpr bool invertible_add = add_monoid::kind == monoid_kind::sum;
};

/// Wraps a multiply result (T or terms<T, N>) as terms<T, N>.
template <class T>
SPIRA_HD constexpr terms<T, 1> as_terms(T x)
{
  return {{x}};
}
template <class T, int N>
SPIRA_HD constexpr terms<T, N> as_terms(const terms<T, N>& x)
{
  return x;
}

/// The accumulator handed to finalize: T for one component, terms<T, N> otherwise.
template <class T, int N>
SPIRA_HD constexpr auto from_terms(const terms<T, N>& x)
{
  if constexpr (N == 1) {
    return x[0];
  } else {
    return x;
  }
}

}  // namespace spira
