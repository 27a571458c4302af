// The open loop's arrival schedules (harness/core/arrivals.hpp): what a rate and a process
// give, and that a seed gives the same schedule every time.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/arrivals.hpp"

namespace iocpbench::core {
namespace {

std::vector<double> gaps_ns(ArrivalSchedule schedule, int n) {
  std::vector<double> gaps;
  std::uint64_t last = 0;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t t = schedule.next_ns();
    gaps.push_back(static_cast<double>(t - last));
    last = t;
  }
  return gaps;
}

TEST(Arrivals, ConstantComeEveryOneOverTheRateWithoutDrift) {
  ArrivalSchedule s(3000, ArrivalProcess::constant, 1);  // 333333.33 ns apart: rounding each gap would drift
  std::uint64_t t = 0;
  for (int i = 0; i < 30000; ++i) t = s.next_ns();
  EXPECT_EQ(t, 10'000'000'000u) << "30000 arrivals at 3000/s end at exactly 10 s";
}

TEST(Arrivals, PoissonGapsHaveTheMeanAndSpreadOfAnExponential) {
  const auto gaps = gaps_ns(ArrivalSchedule(10000, ArrivalProcess::poisson, 7), 200000);
  double sum = 0, sq = 0;
  for (double g : gaps) sum += g;
  const double mean = sum / static_cast<double>(gaps.size());
  for (double g : gaps) sq += (g - mean) * (g - mean);
  const double cv = std::sqrt(sq / static_cast<double>(gaps.size() - 1)) / mean;
  // 200000 draws: the mean's standard error is 0.22% of it, the CV's about 0.3%.
  EXPECT_NEAR(mean, 100000, 1500) << "mean gap 1/R = 100 us";
  EXPECT_NEAR(cv, 1.0, 0.02) << "an exponential's CV is 1";
  std::size_t over_mean = 0;
  for (double g : gaps) over_mean += g > mean ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(over_mean) / static_cast<double>(gaps.size()), std::exp(-1.0), 0.01)
      << "P(gap > mean) = 1/e";
}

TEST(Arrivals, ASeedGivesOneScheduleAndAnotherSeedAnother) {
  const auto a = gaps_ns(ArrivalSchedule(1000, ArrivalProcess::poisson, 42), 100);
  const auto b = gaps_ns(ArrivalSchedule(1000, ArrivalProcess::poisson, 42), 100);
  const auto c = gaps_ns(ArrivalSchedule(1000, ArrivalProcess::poisson, 43), 100);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  const auto zero = gaps_ns(ArrivalSchedule(1000, ArrivalProcess::poisson, 0), 100);
  for (double g : zero) EXPECT_GT(g, 0) << "seed 0 still draws (xorshift's 0 is a fixed point)";
}

TEST(Arrivals, ProcessNamesRoundTrip) {
  for (auto p : {ArrivalProcess::constant, ArrivalProcess::poisson}) {
    EXPECT_EQ(parse_arrival_process(to_string(p)), p);
  }
  EXPECT_FALSE(parse_arrival_process("uniform").has_value());
  EXPECT_FALSE(parse_arrival_process("").has_value());
}

}  // namespace
}  // namespace iocpbench::core
