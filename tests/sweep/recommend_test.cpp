// The tuner's choice on candidates whose best setting is known by construction.
#include <gtest/gtest.h>

#include "tune/recommend.hpp"

namespace iocpbench::tune {
namespace {

Candidate make(unsigned c, unsigned p, double median, double half_ci, double cs) {
  Candidate out;
  out.concurrency = *sweep::parse_count_spec(std::to_string(c), false, nullptr);
  out.concurrency_value = c;
  out.pool = *sweep::parse_count_spec(std::to_string(p), false, nullptr);
  out.pool_value = p;
  out.throughput = {median, median, median - half_ci, median + half_ci, 0.01, 5};
  out.context_switches_per_kop = cs;
  return out;
}

TEST(Recommend, SmallestPoolWithinTheThresholdOfTheBest) {
  // Throughput saturates at pool 4: pools 4, 6 and 8 are equal within noise, 2 is clearly worse.
  const std::vector<Candidate> candidates{make(2, 2, 600, 10, 1), make(2, 4, 1000, 20, 5),
                                          make(2, 6, 1010, 20, 9), make(2, 8, 1005, 20, 12)};
  const Choice choice = recommend(candidates, 5);
  EXPECT_EQ(choice.best, 2u);
  EXPECT_EQ(choice.recommended, 1u);
  EXPECT_EQ(choice.indistinguishable.size(), 3u);
}

TEST(Recommend, ConsistentlyLowerIsNotIndistinguishable) {
  // 3% lower but with tight CIs that do not meet: a real difference, not noise.
  const std::vector<Candidate> candidates{make(2, 2, 970, 2, 1), make(2, 4, 1000, 2, 5)};
  EXPECT_EQ(recommend(candidates, 5).recommended, 1u);
}

TEST(Recommend, TiesBrokenByFewerContextSwitches) {
  const std::vector<Candidate> candidates{make(2, 4, 1000, 20, 9), make(2, 4, 1001, 20, 3)};
  EXPECT_EQ(recommend(candidates, 5).recommended, 1u);
}

TEST(Recommend, SmallerConcurrencyBeforeLargerAtTheSamePool) {
  const std::vector<Candidate> candidates{make(4, 4, 1000, 20, 5), make(2, 4, 995, 20, 5)};
  EXPECT_EQ(recommend(candidates, 5).recommended, 1u);
}

TEST(Recommend, QueueingEstimate) {
  EXPECT_EQ(queueing_estimate(2, 0), 2u);
  EXPECT_EQ(queueing_estimate(2, 0.5), 4u);
  EXPECT_EQ(queueing_estimate(2, 0.75), 8u);
  EXPECT_EQ(queueing_estimate(4, 0.25), 6u);  // 5.33 rounds up
}

}  // namespace
}  // namespace iocpbench::tune
