#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "stats/statistics.hpp"

namespace iocpbench::stats {
namespace {

TEST(Statistics, KnownValues) {
  const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  const Summary s = summarize(v);
  EXPECT_EQ(s.n, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  // sample sd = sqrt(32/7); half-width = t(7) * sd / sqrt(8) with t(0.975, 7) = 2.364624
  const double half = 2.364624 * std::sqrt(32.0 / 7.0) / std::sqrt(8.0);
  ASSERT_TRUE(s.ci95_low && s.ci95_high && s.cv);
  EXPECT_NEAR(*s.ci95_low, 5.0 - half, 1e-5);
  EXPECT_NEAR(*s.ci95_high, 5.0 + half, 1e-5);
  EXPECT_NEAR(*s.cv, std::sqrt(32.0 / 7.0) / 5.0, 1e-12);
}

TEST(Statistics, TQuantilesFromBoostMathBeyondAnyTable) {
  // Published values (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2).
  EXPECT_NEAR(t_quantile_975(1), 12.7062, 1e-4);
  EXPECT_NEAR(t_quantile_975(4), 2.7764, 1e-4);
  EXPECT_NEAR(t_quantile_975(40), 2.0211, 1e-4);   // not the normal's 1.96
  EXPECT_NEAR(t_quantile_975(100), 1.9840, 1e-4);
  EXPECT_NEAR(t_quantile(0.95, 19), 1.7291, 1e-4);
  EXPECT_EQ(t_quantile_975(0), 0);
}

TEST(Statistics, OddMedianAndSingleValueHasNoSpread) {
  const std::vector<double> odd{9, 1, 5};
  EXPECT_DOUBLE_EQ(summarize(odd).median, 5.0);
  const std::vector<double> one{3.5};
  const Summary s = summarize(one);
  EXPECT_EQ(s.n, 1u);
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_DOUBLE_EQ(s.mean, 3.5);
  EXPECT_FALSE(s.ci95_low.has_value());
  EXPECT_FALSE(s.ci95_high.has_value());
  EXPECT_FALSE(s.cv.has_value());
}

TEST(Statistics, EmptyInputIsNZero) {
  EXPECT_EQ(summarize(std::vector<double>{}).n, 0u);
}

}  // namespace
}  // namespace iocpbench::stats
