// spira: the distance catalogue as semiring values (host and device).
//
// Each struct is a distance in the sense of spira/semiring.hpp: an add monoid, a multiply (the
// first argument from a row of A, the second from a row of B), an annihilating flag, optional row
// norms and a finalize. They compute in the engine's arithmetic type T (the host engine uses
// double). The formulas, their scipy.spatial.distance correspondence and every edge case are in
// docs/metrics.md; the comments on each struct give the decomposition it relies on.
//
// Notation: x = row i of A, y = row j of B, k = dim (number of columns), nnz(x) = number of
// nonzero values (explicitly stored zeros do not count), [P] = 1 if P else 0.
//
// The structs, by family: dot product and norms (distances_expansion.hpp), booleans on the
// nonzeros (distances_boolean.hpp), element-wise terms over the union (distances_elementwise.hpp),
// distributions (distances_probability.hpp); their row norms are in distance_norms.hpp.
#pragma once

#include <spira/accuracy.hpp>
#include <spira/distance.hpp>
#include <spira/error.hpp>
#include <spira/semiring.hpp>
#include "distance_norms.hpp"
#include "distance_numerics.hpp"
#include "distances_boolean.hpp"
#include "distances_elementwise.hpp"
#include "distances_expansion.hpp"
#include "distances_probability.hpp"

#include <cmath>
#include <cstdint>

namespace spira {

/// Calls f with the distance struct of a catalogue metric (minkowski with exponent p) and returns
/// its result: the one place where a runtime `metric` becomes a compile-time semiring.
template <class F>
decltype(auto) visit_metric(metric m, double p, F&& f)
{
  namespace d = spira::distances;
  switch (m) {
    case metric::cosine:
      return f(d::cosine{});
    case metric::euclidean:
      return f(d::euclidean{});
    case metric::sqeuclidean:
      return f(d::sqeuclidean{});
    case metric::manhattan:
      return f(d::manhattan{});
    case metric::chebyshev:
      return f(d::chebyshev{});
    case metric::minkowski:
      return f(d::minkowski{p});
    case metric::canberra:
      return f(d::canberra{});
    case metric::braycurtis:
      return f(d::braycurtis{});
    case metric::hamming:
      return f(d::hamming{});
    case metric::jaccard:
      return f(d::jaccard{});
    case metric::dice:
      return f(d::dice{});
    case metric::russellrao:
      return f(d::russellrao{});
    case metric::correlation:
      return f(d::correlation{});
    case metric::jensenshannon:
      return f(d::jensenshannon{});
    case metric::hellinger:
      return f(d::hellinger{});
    case metric::kl_divergence:
      return f(d::kl_divergence{});
    case metric::inner_product:
      return f(d::inner_product{});
  }
  throw invalid_argument(detail::concat("unknown metric value ", static_cast<int>(m)));
}

}  // namespace spira
