// The names of the enums of the k-NN and top-k APIs, and their reverse (both builds): one table
// per enum. Metric and pairwise strategy names live with their catalogues (src/pairwise/metric.cpp,
// src/pairwise/pairwise_strategy.cpp).
#include <spira/detail/enum_names.hpp>
#include <spira/knn.hpp>
#include <spira/select_k.hpp>

#include <array>
#include <utility>

namespace spira {

namespace {

using std::pair;

constexpr std::array knn_algo_names{pair{knn_algo::automatic, "automatic"},
                                    pair{knn_algo::fused, "fused"}, pair{knn_algo::tiled, "tiled"}};
constexpr std::array knn_graph_mode_names{pair{knn_graph_mode::distance, "distance"},
                                          pair{knn_graph_mode::connectivity, "connectivity"}};
constexpr std::array select_order_names{pair{select_order::smallest, "smallest"},
                                        pair{select_order::largest, "largest"}};
constexpr std::array select_algo_names{
    pair{select_algo::automatic, "automatic"}, pair{select_algo::binary_search, "binary_search"},
    pair{select_algo::radix, "radix"}, pair{select_algo::delegate, "delegate"}};

}  // namespace

const char* to_string(knn_algo a) noexcept
{
  return detail::enum_name(knn_algo_names, a);
}
knn_algo knn_algo_from_string(std::string_view name)
{
  return detail::enum_value(knn_algo_names, name, "k-NN algorithm", "algorithms");
}

const char* to_string(knn_graph_mode m) noexcept
{
  return detail::enum_name(knn_graph_mode_names, m);
}
knn_graph_mode knn_graph_mode_from_string(std::string_view name)
{
  return detail::enum_value(knn_graph_mode_names, name, "graph mode", "modes");
}

const char* to_string(select_order o) noexcept
{
  return detail::enum_name(select_order_names, o);
}
select_order select_order_from_string(std::string_view name)
{
  return detail::enum_value(select_order_names, name, "order", "orders");
}

const char* to_string(select_algo a) noexcept
{
  return detail::enum_name(select_algo_names, a);
}
select_algo select_algo_from_string(std::string_view name)
{
  return detail::enum_value(select_algo_names, name, "selection algorithm", "algorithms");
}

}  // namespace spira
