// Fuzz target: the numeric entry points, spira::pairwise_distance (every metric; minkowski with
// p in {1, 1.5, 2, 3, 1000, 1e6}) and spira::knn_graph on the host backend, with adversarial
// values.
//
// The bytes describe small CSR matrices (up to 8 x 8) whose entries are drawn from tables of
// adversarial values: huge (1e30 .. FLT_MAX, and up to DBL_MAX for double), tiny and subnormal,
// +-inf, NaN, a shared large coordinate plus small offsets (1e9 + 0.25), small integers (ties),
// explicit zeros, raw bit patterns, and exact copies of an earlier row or entry (duplicates).
// Every result is checked against a naive dense oracle in long double written from the
// definitions (docs/metrics.md; numerics_oracle.hpp), with exact summation where terms can cancel,
// under the numeric guarantees of the library:
//
//  S1  |d - exact| <= 1e-5 * max(|exact|, s), s = 1 for cosine, correlation and jensenshannon and
//      0 for every other metric (plus the output type's smallest subnormal: rounding to it);
//  S2  NaN only where a row of the pair has NaN; +-inf where the exact value is infinite or
//      overflows the output type; d(x, x) = 0 for finite x (kl_divergence: x_c < 1e-10 excepted,
//      which the oracle computes); equal infinite coordinates contribute 0. Where the exact value
//      of a pair with infinite coordinates is not defined by a limit (inf/inf in cosine,
//      correlation, canberra, braycurtis, jensenshannon; inf - inf in the sums of inner_product
//      and kl_divergence; inf * 0 in inner_product) only the metric's range and "not NaN" are
//      checked (not NaN is not asked of the inf - inf and inf * 0 cases);
//  S3  k-NN rows sorted by the returned float32 value (NaN last), then by the smaller index (with
//      docs/knn.md's exception: without exclude_self, when the index is queried against itself, a
//      point comes before every other index at its own value); no unlisted row can have a value
//      better than the k-th listed one, and of exact duplicate rows the one that ranks first is
//      listed.
//
// A violation throws std::logic_error with the inputs and values, which the driver reports as a
// finding (any spira::error on these valid inputs is a finding too).
#include "numerics_oracle.hpp"

#include <spira/convert.hpp>
#include <spira/distance.hpp>
#include <spira/knn.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using spira::fuzz::expected;
using spira::fuzz::floor_scale;
using spira::fuzz::has_nan;
using spira::fuzz::ld;
using spira::fuzz::minkowski;
using spira::fuzz::oracle;
using spira::fuzz::row_t;
using spira::fuzz::within_bound;
constexpr int max_rows = 8;
constexpr int max_cols = 8;
constexpr std::array<double, 6> minkowski_ps{1, 1.5, 2, 3, 1000, 1e6};

/// Consumes the fuzz input byte by byte; reads past the end give 0.
class byte_reader {
 public:
  byte_reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t next() { return pos_ < size_ ? data_[pos_++] : 0; }
  template <class T>
  T raw()
  {
    std::array<std::uint8_t, sizeof(T)> b{};
    for (auto& c : b) {
      c = next();
    }
    T v;
    std::memcpy(&v, b.data(), sizeof(T));
    return v;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// ---- adversarial values ---------------------------------------------------------------------

template <class V>
struct value_tables;

template <>
struct value_tables<float> {
  static constexpr std::array<double, 8> huge{1e30,   1e35, 3e38, 3.4028234663852886e38,
                                              1.7e38, 2e19, 1e20, 5e37};
  static constexpr std::array<double, 8> tiny{
      1e-30, 1.1754943508222875e-38, 1e-40, 1.4e-45, 1e-20, 1e-38, 3e-39, 1e-10};
  static constexpr std::array<double, 8> base{1e5, 1e7, 1e9, 1e12, 1e30, 1e3, 1e19, 16777216};
};

template <>
struct value_tables<double> {
  static constexpr std::array<double, 8> huge{1e154, 1e200, 1e300,  1e308, 1.7976931348623157e308,
                                              3e38,  1e155, 1.3e154};
  static constexpr std::array<double, 8> tiny{
      1e-300, 2.2250738585072014e-308, 1e-310, 4.9e-324, 1e-160, 1e-200, 1e-10, 1e-20};
  static constexpr std::array<double, 8> base{1e5, 1e7, 1e9, 1e12, 1e15, 1e30, 1e154, 1e300};
};

constexpr std::array<double, 8> offsets{0, 0.25, 0.5, 1, 2, 100, -0.25, 1e-3};
constexpr std::array<double, 8> middling{0.5, 1.5, 3, 10, 1e3, 1e-3, 0.1, 7};

/// A small host matrix kept both as CSR arrays and as dense rows (with which entries are stored).
template <class V>
struct sample {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::vector<V>> value;  // rows x cols, 0 where not stored
  std::vector<std::vector<bool>> stored;
};

template <class V>
V draw_value(byte_reader& in, const sample<V>& m, std::int64_t r, std::int64_t c, double base,
             bool& store)
{
  using tables = value_tables<V>;
  const std::uint8_t cell = in.next();
  const int kind = cell & 15;
  const double sign = (cell & 16) != 0 ? -1.0 : 1.0;
  const int sel = cell >> 5;
  store = true;
  switch (kind) {
    case 5:
      return V(sign * 0.0);
    case 6:
      return V(sign * double(1 + sel % 4));
    case 7:
      return V(sign * (base + offsets[std::size_t(sel)]));
    case 8:
      return V(sign * tables::huge[std::size_t(sel)]);
    case 9:
      return V(sign * tables::tiny[std::size_t(sel)]);
    case 10:
      return V(sign * std::numeric_limits<double>::infinity());
    case 11:
      return std::numeric_limits<V>::quiet_NaN();
    case 12:
      return in.raw<V>();
    case 13:
      if (r > 0 && m.stored[std::size_t(r - 1)][std::size_t(c)]) {
        return m.value[std::size_t(r - 1)][std::size_t(c)];
      }
      break;
    case 14:
      return V(sign * middling[std::size_t(sel)]);
    default:
      break;
  }
  store = false;
  return V(0);
}

template <class V>
sample<V> draw_matrix(byte_reader& in, std::int64_t rows, std::int64_t cols, double base)
{
  sample<V> m;
  m.rows = rows;
  m.cols = cols;
  m.value.assign(std::size_t(rows), std::vector<V>(std::size_t(cols), V(0)));
  m.stored.assign(std::size_t(rows), std::vector<bool>(std::size_t(cols), false));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::uint8_t op = in.next();
    if (r > 0 && op % 8 == 7) {  // an exact duplicate of an earlier row
      const auto from = std::size_t((op / 8) % std::uint8_t(r));
      m.value[std::size_t(r)] = m.value[from];
      m.stored[std::size_t(r)] = m.stored[from];
      continue;
    }
    for (std::int64_t c = 0; c < cols; ++c) {
      bool store = false;
      const V v = draw_value(in, m, r, c, base, store);
      m.value[std::size_t(r)][std::size_t(c)] = v;
      m.stored[std::size_t(r)][std::size_t(c)] = store;
    }
  }
  return m;
}

/// |x| of every entry (for the metrics that reject negative input); -inf becomes +inf.
template <class V>
sample<V> absolute(sample<V> m)
{
  for (auto& row : m.value) {
    for (auto& v : row) {
      v = std::abs(v);
    }
  }
  return m;
}

template <class V, class I>
spira::csr_matrix<V, I> to_csr(const sample<V>& m)
{
  std::vector<spira::offset_t> rp{0};
  std::vector<I> ci;
  std::vector<V> va;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (std::int64_t c = 0; c < m.cols; ++c) {
      if (m.stored[std::size_t(r)][std::size_t(c)]) {
        ci.push_back(I(c));
        va.push_back(m.value[std::size_t(r)][std::size_t(c)]);
      }
    }
    rp.push_back(spira::offset_t(ci.size()));
  }
  return spira::make_csr<V, I>(spira::host_resources{1}, m.rows, m.cols, rp, ci, va,
                               spira::csr_check::canonical);
}

/// True when rows r of a and s of b store the same columns with bitwise-equal values.
template <class V>
bool same_row(const sample<V>& a, std::int64_t r, const sample<V>& b, std::int64_t s)
{
  for (std::int64_t c = 0; c < a.cols; ++c) {
    const bool x = a.stored[std::size_t(r)][std::size_t(c)];
    if (x != b.stored[std::size_t(s)][std::size_t(c)]) {
      return false;
    }
    if (x && std::memcmp(&a.value[std::size_t(r)][std::size_t(c)],
                         &b.value[std::size_t(s)][std::size_t(c)], sizeof(V)) != 0) {
      return false;
    }
  }
  return true;
}

// ---- checks ------------------------------------------------------------------------------------

template <class V>
std::string describe_row(const sample<V>& m, std::int64_t r)
{
  std::ostringstream o;
  o.precision(std::is_same_v<V, float> ? 9 : 17);
  o << "[";
  for (std::int64_t c = 0; c < m.cols; ++c) {
    if (c > 0) {
      o << ", ";
    }
    if (m.stored[std::size_t(r)][std::size_t(c)]) {
      o << m.value[std::size_t(r)][std::size_t(c)];
    } else {
      o << "_";
    }
  }
  return o.str() + "]";
}

/// Reports a violated guarantee: throws (the driver saves the input), or with
/// SPIRA_FUZZ_KEEP_GOING=1 in the environment prints it and goes on (to list every finding of a
/// corpus file at once).
void finding(const std::string& what)
{
  static const bool keep_going = [] {
    const char* v = std::getenv("SPIRA_FUZZ_KEEP_GOING");
    return v != nullptr && std::string(v) == "1";
  }();
  if (!keep_going) {
    throw std::logic_error("fuzz_numerics: " + what);
  }
  std::fprintf(stderr, "fuzz_numerics: %s\n", what.c_str());
}

template <class V>
row_t dense_row(const sample<V>& m, std::int64_t r)
{
  return row_t(m.value[std::size_t(r)].begin(), m.value[std::size_t(r)].end());
}

std::string metric_name(spira::metric m, double p)
{
  std::string s = spira::to_string(m);
  if (m == spira::metric::minkowski) {
    std::ostringstream o;
    o << s << "(p=" << p << ")";
    s = o.str();
  }
  return s;
}

/// The s of the bound S1 for one pair: floor_scale; for inner_product, a plain dot product, Σ |x
/// y|, and for kl_divergence, whose terms have both signs, Σ |x log(x / max(y, ε))| (their
/// documented bounds: the data's own cancellation is no expansion to avoid).
ld bound_scale(spira::metric m, const row_t& x, const row_t& y)
{
  ld scale = floor_scale(m);
  if (m == spira::metric::inner_product) {
    for (std::size_t c = 0; c < x.size(); ++c) {
      scale += std::fabs(x[c] * y[c]);
    }
  }
  if (m == spira::metric::kl_divergence) {  // terms of both signs: relative to Σ |term|
    for (std::size_t c = 0; c < x.size(); ++c) {
      if (x[c] > 0 && std::isfinite(x[c]) && std::isfinite(y[c])) {
        scale += std::fabs(x[c] * std::log(x[c] / std::max(y[c], ld(1e-10))));
      }
    }
  }
  return scale;
}

/// Checks one result value against the oracle; `Out` is the result type.
template <class Out, class V>
void check_pair(spira::metric m, double p, const sample<V>& a, std::int64_t i, const sample<V>& b,
                std::int64_t j, ld got, const char* where)
{
  const row_t x = dense_row(a, i), y = dense_row(b, j);
  if (has_nan(x) || has_nan(y)) {  // NaN in, anything out
    return;
  }
  const expected e = oracle(m, x, y, p);
  bool ok = true;
  if (e.what == expected::kind::value) {
    ok = within_bound<Out>(e.exact, got, double(bound_scale(m, x, y)));
  } else if (e.what == expected::kind::range) {
    // The range's ends as the output type rounds them.
    ok = std::isnan(got) ? e.nan_allowed : (ld(Out(e.lo)) <= got && got <= ld(Out(e.hi)));
  }
  if (!ok) {
    std::ostringstream o;
    o.precision(17);
    o << where << " " << metric_name(m, p) << " (" << i << ", " << j << ") = " << double(got)
      << ", expected ";
    if (e.what == expected::kind::value) {
      o << double(e.exact);
    } else {
      o << "a value in [" << double(e.lo) << ", " << double(e.hi) << "]";
    }
    o << "; x = " << describe_row(a, i) << ", y = " << describe_row(b, j);
    finding(o.str());
  }
}

template <class V, class I>
void check_pairwise(spira::metric m, double p, const sample<V>& a, const sample<V>& b)
{
  const auto ca = to_csr<V, I>(a), cb = to_csr<V, I>(b);
  spira::dense_matrix<V> out(spira::host_resources{1}, a.rows, b.rows);
  spira::pairwise_distance(spira::host_resources{1}, ca.view(), cb.view(), out.view(),
                           {.metric = m, .p = p});
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (std::int64_t j = 0; j < b.rows; ++j) {
      check_pair<V>(m, p, a, i, b, j, ld(out.view()(i, j)), "pairwise_distance");
    }
  }
}

/// The least favourable float32 value a pair may be returned with under the bound: the highest
/// (distances) or the lowest (similarities). NaN when the oracle has no exact value.
ld least_favourable(spira::metric m, double p, const row_t& x, const row_t& y, bool largest)
{
  const expected e = oracle(m, x, y, p);
  if (e.what != expected::kind::value) {
    return std::numeric_limits<ld>::quiet_NaN();
  }
  if (std::isinf(e.exact)) {
    return e.exact;
  }
  const ld max = std::numeric_limits<float>::max();
  const ld b = ld(1e-5) * std::max<ld>(std::abs(e.exact), bound_scale(m, x, y)) +
               16 * std::numeric_limits<float>::denorm_min();
  const ld v = largest ? e.exact - b : e.exact + b;
  if (std::abs(v) > max) {
    return std::copysign(std::numeric_limits<ld>::infinity(), v);
  }
  return v;
}

template <class V, class I>
void check_knn(spira::metric m, double p, const sample<V>& queries, const sample<V>& index,
               bool self_query, bool exclude_self, std::int64_t k)
{
  const auto ci = to_csr<V, I>(index);
  std::optional<spira::csr_matrix<V, I>> cq;
  if (!self_query) {
    cq = to_csr<V, I>(queries);
  }
  const auto g =
      spira::knn_graph(spira::host_resources{1}, ci.view(),
                       cq ? std::optional<spira::csr_view<V, I>>(cq->view()) : std::nullopt,
                       {.k = k, .metric = m, .p = p, .exclude_self = exclude_self});
  const bool largest = spira::is_similarity(m);
  auto fail = [&](std::int64_t r, const std::string& what, bool fatal = false) {
    std::ostringstream o;
    o << "knn_graph " << metric_name(m, p) << " k=" << k << (exclude_self ? " exclude_self" : "")
      << " row " << r << ": " << what << "; listed:";
    o.precision(9);
    for (std::int64_t c = 0; c < k; ++c) {
      o << " " << g.indices.view()(r, c) << "@" << g.distances.view()(r, c);
    }
    o << "; query " << describe_row(queries, r) << "; index:";
    for (std::int64_t j = 0; j < index.rows; ++j) {
      o << " " << j << "=" << describe_row(index, j);
    }
    if (fatal) {
      throw std::logic_error("fuzz_numerics: " + o.str());
    }
    finding(o.str());
  };
  // The tie break (docs/knn.md): without exclude_self, when the index is queried against
  // itself, a point comes before every other index at its own value; then the smaller index.
  const bool self_first = self_query && !exclude_self;
  auto rank = [&](std::int64_t r, std::int64_t j) {
    return std::pair{self_first && j == r ? 0 : 1, j};
  };
  // (value, index) order of query row r: best value first (NaN last, in any order), then rank.
  auto before = [&](std::int64_t r, float va, std::int64_t ia, float vb, std::int64_t ib) {
    if (std::isnan(va) || std::isnan(vb)) {
      return std::isnan(vb);
    }
    if (va != vb) {
      return largest ? va > vb : va < vb;
    }
    return rank(r, ia) < rank(r, ib);
  };
  if (g.indices.rows() != queries.rows || g.indices.cols() != k) {
    fail(0, "wrong shape", true);
  }
  for (std::int64_t r = 0; r < queries.rows; ++r) {
    std::vector<bool> listed(std::size_t(index.rows), false);
    for (std::int64_t c = 0; c < k; ++c) {
      const std::int64_t j = g.indices.view()(r, c);
      const float v = g.distances.view()(r, c);
      if (j < 0 || j >= index.rows) {
        fail(r, "index out of range", true);
      }
      if (listed[std::size_t(j)]) {
        fail(r, "an index listed twice", true);
      }
      if (exclude_self && j == r) {
        fail(r, "lists itself with exclude_self");
      }
      listed[std::size_t(j)] = true;
      if (c > 0 && !before(r, g.distances.view()(r, c - 1), g.indices.view()(r, c - 1), v, j)) {
        fail(r, "not sorted by (value, index)");
      }
      check_pair<float>(m, p, queries, r, index, j, ld(v), "knn_graph");
    }
    const float v_k = g.distances.view()(r, k - 1);
    const row_t q = dense_row(queries, r);
    for (std::int64_t j = 0; j < index.rows; ++j) {
      if (listed[std::size_t(j)] || (exclude_self && j == r)) {
        continue;
      }
      const row_t x = dense_row(index, j);
      if (has_nan(q) || has_nan(x)) {
        continue;
      }
      // A row whose every admissible value beats the k-th listed one must have been listed.
      const ld worst = least_favourable(m, p, q, x, largest);
      if (!std::isnan(worst) &&
          (std::isnan(v_k) || (largest ? worst > ld(v_k) : worst < ld(v_k)))) {
        std::ostringstream o;
        o.precision(17);
        o << "unlisted " << j << " (exact " << double(oracle(m, q, x, p).exact)
          << ") is better than the k-th listed value " << v_k;
        fail(r, o.str());
      }
    }
    // An exact duplicate of a listed row ties with it and must be listed when it ranks first.
    for (std::int64_t c = 0; c < k && !has_nan(q); ++c) {
      const std::int64_t j = g.indices.view()(r, c);
      for (std::int64_t d = 0; d < index.rows; ++d) {
        if (rank(r, d) < rank(r, j) && !listed[std::size_t(d)] && !(exclude_self && d == r) &&
            same_row(index, d, index, j) && !has_nan(dense_row(index, j))) {
          fail(r, "lists " + std::to_string(j) + " but not its exact duplicate " +
                      std::to_string(d) + " (tie rule)");
        }
      }
    }
  }
}

template <class V, class I>
void run(byte_reader& in, std::uint8_t flags)
{
  const std::int64_t rows_a = 1 + in.next() % max_rows;
  const std::int64_t cols = 1 + in.next() % max_cols;
  const bool separate = (flags & 8) != 0;
  const std::int64_t rows_b = separate ? 1 + in.next() % max_rows : rows_a;
  const std::uint8_t misc = in.next();
  const double base = value_tables<V>::base[misc % 8];
  const double knn_p = minkowski_ps[(misc / 8) % minkowski_ps.size()];
  const sample<V> a = draw_matrix<V>(in, rows_a, cols, base);
  const sample<V> b = separate ? draw_matrix<V>(in, rows_b, cols, base) : a;
  const sample<V> abs_a = absolute(a), abs_b = absolute(b);

  for (const spira::metric m : spira::all_metrics()) {
    const bool nonneg = spira::requires_nonnegative(m);
    const sample<V>& x = nonneg ? abs_a : a;
    const sample<V>& y = nonneg ? abs_b : b;
    if (m == spira::metric::minkowski) {
      for (const double p : minkowski_ps) {
        check_pairwise<V, I>(m, p, x, y);
      }
    } else {
      check_pairwise<V, I>(m, 2.0, x, y);
    }
    // k-NN: the rows of b are the index; a separate a is the queries, else b queries itself.
    const bool exclude_self = !separate && (flags & 4) != 0;
    const std::int64_t max_k = rows_b - (exclude_self ? 1 : 0);
    if (max_k >= 1) {
      const std::int64_t k = 1 + (flags >> 4) % max_k;
      check_knn<V, I>(m, knn_p, separate ? x : y, y, !separate, exclude_self, k);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  byte_reader in(data, size);
  const std::uint8_t flags = in.next();
  switch (flags & 3) {
    case 0:
      run<float, std::int32_t>(in, flags);
      break;
    case 1:
      run<double, std::int32_t>(in, flags);
      break;
    case 2:
      run<float, std::int64_t>(in, flags);
      break;
    default:
      run<double, std::int64_t>(in, flags);
      break;
  }
  return 0;
}
