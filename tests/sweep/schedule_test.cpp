// The tuner's rounds (sweep::RoundOrder): the order the tuner drew before it used the schedule,
// for the same seed, and every round a permutation of its points.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "sweep/schedule.hpp"

namespace iocpbench::sweep {
namespace {

// The tuner's own loop until RoundOrder replaced it (cli/cmd_tune.cpp's TuneSession::measure):
// one generator for the whole tune; each round shuffles the previous round's order.
class FormerTunerLoop {
 public:
  explicit FormerTunerLoop(std::uint64_t seed) : rng_(seed) {}
  std::vector<RunSlot> rounds(const std::vector<std::size_t>& which, unsigned rounds, unsigned first_repetition) {
    std::vector<RunSlot> out;
    std::vector<std::size_t> order = which;
    for (unsigned r = 0; r < rounds; ++r) {
      std::shuffle(order.begin(), order.end(), rng_);
      for (std::size_t i : order) out.push_back({i, first_repetition + r});
    }
    return out;
  }

 private:
  std::mt19937_64 rng_;
};

void expect_same(const std::vector<RunSlot>& a, const std::vector<RunSlot>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].point, b[i].point) << i;
    EXPECT_EQ(a[i].repetition, b[i].repetition) << i;
  }
}

TEST(RoundOrder, TheTunersFormerOrderForTheSameSeed) {
  for (const std::uint64_t seed : {1u, 7u, 12345u}) {
    SCOPED_TRACE(seed);
    RoundOrder order(seed);
    FormerTunerLoop former(seed);
    // A tune's phases: the screening, its neighbours, two stages of the final.
    const std::vector<std::size_t> screening{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, neighbours{12, 13, 14},
        stage1{1, 3, 12, 5}, stage2{0, 2, 5};
    expect_same(order.rounds(screening, 3, 0), former.rounds(screening, 3, 0));
    expect_same(order.rounds(neighbours, 3, 0), former.rounds(neighbours, 3, 0));
    expect_same(order.rounds(stage1, 20, 3), former.rounds(stage1, 20, 3));
    expect_same(order.rounds(stage1, 7, 23), former.rounds(stage1, 7, 23));
    expect_same(order.rounds(stage2, 20, 30), former.rounds(stage2, 20, 30));
  }
}

TEST(RoundOrder, EachRoundVisitsEveryPointOnceInAFreshOrder) {
  RoundOrder order(3);
  const std::vector<std::size_t> points{4, 9, 2, 7, 5, 11};
  const std::vector<RunSlot> slots = order.rounds(points, 10, 5);
  ASSERT_EQ(slots.size(), 60u);
  std::vector<std::vector<std::size_t>> rounds(10);
  for (const RunSlot& slot : slots) {
    ASSERT_GE(slot.repetition, 5u);
    ASSERT_LT(slot.repetition, 15u);
    rounds[slot.repetition - 5].push_back(slot.point);
  }
  std::vector<std::size_t> sorted_points = points;
  std::sort(sorted_points.begin(), sorted_points.end());
  bool orders_differ = false;
  for (const auto& round : rounds) {
    std::vector<std::size_t> sorted = round;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, sorted_points);
    orders_differ |= round != rounds.front();
  }
  EXPECT_TRUE(orders_differ);
  EXPECT_TRUE(order.rounds({}, 3, 0).empty());
}

}  // namespace
}  // namespace iocpbench::sweep
