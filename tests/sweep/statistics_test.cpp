#include <gtest/gtest.h>

#include <vector>

#include "sweep/statistics.hpp"

namespace iocpbench::sweep {
namespace {

TEST(Statistics, KnownValues) {
  const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  const Summary s = summarize(v);
  EXPECT_EQ(s.n, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  // sample sd = sqrt(32/7); half-width = t(7) * sd / sqrt(8) with t(7) = 2.365
  const double half = 2.365 * std::sqrt(32.0 / 7.0) / std::sqrt(8.0);
  EXPECT_NEAR(s.ci95_low, 5.0 - half, 1e-9);
  EXPECT_NEAR(s.ci95_high, 5.0 + half, 1e-9);
  EXPECT_NEAR(s.cv, std::sqrt(32.0 / 7.0) / 5.0, 1e-12);
}

TEST(Statistics, OddMedianAndSingleValue) {
  const std::vector<double> odd{9, 1, 5};
  EXPECT_DOUBLE_EQ(summarize(odd).median, 5.0);
  const std::vector<double> one{3.5};
  const Summary s = summarize(one);
  EXPECT_EQ(s.n, 1u);
  EXPECT_DOUBLE_EQ(s.ci95_low, 3.5);
  EXPECT_DOUBLE_EQ(s.ci95_high, 3.5);
  EXPECT_DOUBLE_EQ(s.cv, 0.0);
}

TEST(Statistics, EmptyInputIsNZero) {
  EXPECT_EQ(summarize(std::vector<double>{}).n, 0u);
}

TEST(Statistics, JsonHasTheContractNames) {
  const auto j = to_json(summarize(std::vector<double>{1, 2, 3}));
  for (const char* key : {"median", "mean", "ci95_low", "ci95_high", "cv", "n"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
}

}  // namespace
}  // namespace iocpbench::sweep
