// The metric catalogue: names, directions and input requirements.
#include <spira/distance.hpp>
#include <spira/error.hpp>

#include <array>
#include <string>

namespace spira {

namespace {
constexpr std::array<metric, 17> metrics{
    metric::cosine,        metric::euclidean,     metric::sqeuclidean, metric::manhattan,
    metric::chebyshev,     metric::minkowski,     metric::canberra,    metric::braycurtis,
    metric::hamming,       metric::jaccard,       metric::dice,        metric::russellrao,
    metric::correlation,   metric::jensenshannon, metric::hellinger,   metric::kl_divergence,
    metric::inner_product,
};
constexpr std::array<metric_alias, 3> aliases{{
    {"cityblock", metric::manhattan},
    {"l1", metric::manhattan},
    {"l2", metric::euclidean},
}};
}  // namespace

std::span<const metric_alias> metric_aliases() noexcept
{
  return aliases;
}

std::span<const metric> all_metrics() noexcept
{
  return metrics;
}

const char* to_string(metric m) noexcept
{
  switch (m) {
    case metric::cosine:
      return "cosine";
    case metric::euclidean:
      return "euclidean";
    case metric::sqeuclidean:
      return "sqeuclidean";
    case metric::manhattan:
      return "manhattan";
    case metric::chebyshev:
      return "chebyshev";
    case metric::minkowski:
      return "minkowski";
    case metric::canberra:
      return "canberra";
    case metric::braycurtis:
      return "braycurtis";
    case metric::hamming:
      return "hamming";
    case metric::jaccard:
      return "jaccard";
    case metric::dice:
      return "dice";
    case metric::russellrao:
      return "russellrao";
    case metric::correlation:
      return "correlation";
    case metric::jensenshannon:
      return "jensenshannon";
    case metric::hellinger:
      return "hellinger";
    case metric::kl_divergence:
      return "kl_divergence";
    case metric::inner_product:
      return "inner_product";
  }
  return "unknown";
}

metric metric_from_string(std::string_view name)
{
  for (const metric m : metrics) {
    if (name == to_string(m)) {
      return m;
    }
  }
  for (const metric_alias& a : aliases) {
    if (name == a.name) {
      return a.target;
    }
  }
  std::string valid;
  for (const metric m : metrics) {
    if (!valid.empty()) {
      valid += ", ";
    }
    valid += to_string(m);
  }
  std::string other;
  for (const metric_alias& a : aliases) {
    other += detail::concat(other.empty() ? "" : ", ", a.name, " (", to_string(a.target), ")");
  }
  throw invalid_argument(detail::concat("unknown metric '", name, "'; valid metrics are: ", valid,
                                        "; aliases: ", other));
}

bool is_similarity(metric m) noexcept
{
  return m == metric::inner_product;
}

bool requires_nonnegative(metric m) noexcept
{
  return m == metric::jensenshannon || m == metric::hellinger || m == metric::kl_divergence;
}

}  // namespace spira
