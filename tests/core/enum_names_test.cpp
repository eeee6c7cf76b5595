// Every enum of the public API that users name in strings (the CLI, the Python package) reads
// back from its to_string, and an unknown name is an invalid_argument listing the valid ones.
#include <spira/distance.hpp>
#include <spira/knn.hpp>
#include <spira/select_k.hpp>

#include <gtest/gtest.h>

#include <string>

namespace spira::test {
namespace {

template <class E, class FromString>
void round_trip(std::initializer_list<E> all, FromString from_string, const std::string& valid)
{
  for (const E e : all) {
    EXPECT_EQ(from_string(to_string(e)), e) << to_string(e);
  }
  try {
    (void)from_string("nonsense");
    ADD_FAILURE() << "an unknown name was accepted";
  } catch (const invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'nonsense'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(valid), std::string::npos) << msg;
  }
}

TEST(enum_names, read_back_and_list_the_valid_names)
{
  round_trip({knn_algo::automatic, knn_algo::fused, knn_algo::tiled}, knn_algo_from_string,
             "automatic, fused, tiled");
  round_trip({knn_graph_mode::distance, knn_graph_mode::connectivity}, knn_graph_mode_from_string,
             "distance, connectivity");
  round_trip({select_order::smallest, select_order::largest}, select_order_from_string,
             "smallest, largest");
  round_trip({select_algo::automatic, select_algo::binary_search, select_algo::radix,
              select_algo::delegate},
             select_algo_from_string, "automatic, binary_search, radix, delegate");
  round_trip({pairwise_strategy::automatic, pairwise_strategy::intersection,
              pairwise_strategy::hybrid, pairwise_strategy::dense},
             pairwise_strategy_from_string, "automatic, intersection, hybrid, dense");
}

}  // namespace
}  // namespace spira::test
