#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "metrics/histogram.hpp"

using iocpbench::metrics::Histogram;

TEST(Histogram, BucketsCoverEveryValueContiguously) {
  std::uint64_t expected_low = 0;
  for (std::size_t b = 0; b < Histogram::kBuckets; ++b) {
    ASSERT_EQ(Histogram::bucket_low(b), expected_low) << "bucket " << b;
    ASSERT_GE(Histogram::bucket_high(b), Histogram::bucket_low(b));
    ASSERT_EQ(Histogram::bucket_of(Histogram::bucket_low(b)), b);
    ASSERT_EQ(Histogram::bucket_of(Histogram::bucket_high(b)), b);
    if (b + 1 < Histogram::kBuckets) expected_low = Histogram::bucket_high(b) + 1;
  }
  EXPECT_EQ(Histogram::bucket_high(Histogram::kBuckets - 1), UINT64_MAX);
}

TEST(Histogram, PercentilesOfKnownInputs) {
  Histogram h;
  for (std::uint64_t v = 1; v <= 100000; ++v) h.record(v);
  EXPECT_EQ(h.count(), 100000u);
  EXPECT_EQ(h.max(), 100000u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_NEAR(h.mean(), 50000.5, 1e-6);
  const double tolerance = 1.0 / Histogram::kSub;  // the relative bucket width
  EXPECT_NEAR(h.quantile(0.50), 50000, 50000 * tolerance);
  EXPECT_NEAR(h.quantile(0.90), 90000, 90000 * tolerance);
  EXPECT_NEAR(h.quantile(0.99), 99000, 99000 * tolerance);
  EXPECT_NEAR(h.quantile(0.999), 99900, 99900 * tolerance);
  EXPECT_DOUBLE_EQ(h.quantile(1.0), 100000);
  // Small values are exact.
  Histogram small;
  for (std::uint64_t v : {3, 1, 2, 5, 4}) small.record(v);
  EXPECT_DOUBLE_EQ(small.quantile(0.5), 3);
  EXPECT_DOUBLE_EQ(small.quantile(0.0), 1);
  EXPECT_DOUBLE_EQ(small.quantile(1.0), 5);
}

TEST(Histogram, SingleValueIsExactAtEveryQuantile) {
  Histogram h;
  for (int i = 0; i < 10; ++i) h.record(123456789);
  for (double q : {0.0, 0.5, 0.99, 1.0}) EXPECT_DOUBLE_EQ(h.quantile(q), 123456789);
}

TEST(Histogram, MergeEqualsRecordingEverythingInOne) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(9.0, 1.5);
  Histogram a, b, all;
  for (int i = 0; i < 200000; ++i) {
    const auto v = static_cast<std::uint64_t>(dist(rng));
    (i % 3 == 0 ? a : b).record(v);
    all.record(v);
  }
  Histogram merged = a;
  merged.merge(b);
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.max(), all.max());
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_DOUBLE_EQ(merged.mean(), all.mean());
  for (double q : {0.5, 0.9, 0.99, 0.999}) EXPECT_DOUBLE_EQ(merged.quantile(q), all.quantile(q));
}

TEST(Histogram, EmptyIsZero) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.quantile(0.5), 0);
  EXPECT_EQ(h.max(), 0u);
  const auto p = iocpbench::metrics::percentiles_us(h);
  EXPECT_EQ(p.p99, 0);
}

TEST(Histogram, PercentilesInMicroseconds) {
  Histogram h;
  for (int i = 0; i < 1000; ++i) h.record(10'000);  // 10 us
  const auto p = iocpbench::metrics::percentiles_us(h);
  EXPECT_DOUBLE_EQ(p.p50, 10.0);
  EXPECT_DOUBLE_EQ(p.max, 10.0);
}
