// The in-flight depth integrator (harness/workloads/inflight_depth.hpp) driven with explicit
// timestamps: its window, its sums, its buckets and what it does with clocks that race.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "workloads/inflight_depth.hpp"

namespace iocpbench::workloads {
namespace {

// Warm-up, a window with known intervals, then stopping; times from `t0` on.
void script(InflightDepth& d, std::uint64_t t0 = 0) {  // d: a bound of 4
  d.change(+1, t0 + 0, false);    // warm-up: not counted
  d.change(+1, t0 + 10, true);    // opens the span at 10 (the interval before it straddles the edge)
  d.change(-1, t0 + 30, true);    // [10, 30) at 2
  d.change(+1, t0 + 40, true);    // [30, 40) at 1
  d.change(-1, t0 + 100, true);   // [40, 100) at 2
  d.change(-1, t0 + 110, true);   // [100, 110) at 1
  d.change(+1, t0 + 150, true);   // [110, 150) at 0
  d.change(-1, t0 + 200, false);  // stopping: the straddling interval is not counted
}

TEST(InflightDepth, IntegratesTheWindowOnly) {
  InflightDepth d(4, 0);
  script(d);
  const auto s = d.summary();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->requested, 4u);
  EXPECT_DOUBLE_EQ(s->span_s, 140e-9);
  EXPECT_DOUBLE_EQ(s->mean, (2.0 * 20 + 1 * 10 + 2 * 60 + 1 * 10 + 0 * 40) / 140.0);
  EXPECT_EQ(s->max, 2u);
  EXPECT_EQ(s->changes, 5u);
  ASSERT_EQ(s->time_share_by_depth.size(), 5u);  // 0..4, one each
  EXPECT_DOUBLE_EQ(s->time_share_by_depth[0].time_share, 40.0 / 140);
  EXPECT_DOUBLE_EQ(s->time_share_by_depth[1].time_share, 20.0 / 140);
  EXPECT_DOUBLE_EQ(s->time_share_by_depth[2].time_share, 80.0 / 140);
  EXPECT_DOUBLE_EQ(s->time_share_by_depth[4].time_share, 0.0);
  EXPECT_EQ(s->time_share_by_depth[3].depth_min, 3u);
  EXPECT_EQ(s->time_share_by_depth[3].depth_max, 3u);
}

// The state keeps times modulo 2^43 ns: a clock in the upper half of that range (73 minutes
// after boot and every other 73 minutes) or past it integrates the same as one near 0.
TEST(InflightDepth, CountsAtAnyClockReading) {
  for (const std::uint64_t t0 : {std::uint64_t{1} << 42, (std::uint64_t{1} << 42) + 12345,
                                 (std::uint64_t{3} << 43) + (std::uint64_t{3} << 41)}) {
    InflightDepth d(4, t0 - 1000);  // created a microsecond before the first change
    script(d, t0);
    const auto s = d.summary();
    ASSERT_TRUE(s.has_value()) << t0;
    EXPECT_DOUBLE_EQ(s->span_s, 140e-9) << t0;
    EXPECT_DOUBLE_EQ(s->mean, (2.0 * 20 + 1 * 10 + 2 * 60 + 1 * 10 + 0 * 40) / 140.0) << t0;
    EXPECT_EQ(s->changes, 5u) << t0;
  }
}

TEST(InflightDepth, AnEarlierClockCountsAsTheLastChange) {
  InflightDepth d(2, 0);
  d.change(+1, 100, true);
  d.change(+1, 200, true);  // [100, 200) at 1
  d.change(-1, 150, true);  // read before the last change's swap: no time at 2
  d.change(-1, 260, true);  // [200, 260) at 1
  const auto s = d.summary();
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->span_s, 160e-9);
  EXPECT_DOUBLE_EQ(s->mean, 1.0);
  EXPECT_EQ(s->max, 1u);
}

TEST(InflightDepth, AMomentBelowZeroCountsAsZero) {
  InflightDepth d(1, 0);
  d.change(-1, 0, true);   // a completion counted before its submission
  d.change(+1, 50, true);  // [0, 50) at -1: depth 0
  d.change(+1, 60, true);  // [50, 60) at 0
  d.change(-1, 80, true);  // [60, 80) at 1
  const auto s = d.summary();
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->time_share_by_depth[0].time_share, 60.0 / 80);
  EXPECT_DOUBLE_EQ(s->mean, 20.0 / 80);
}

TEST(InflightDepth, LargeBoundsGetPowerOfTwoBuckets) {
  const InflightDepth d(100, 0);
  const auto b = d.buckets();
  ASSERT_EQ(b.size(), 8u);  // 0, 1, 2-3, 4-7, 8-15, 16-31, 32-63, 64-100
  EXPECT_EQ(b[2].depth_min, 2u);
  EXPECT_EQ(b[2].depth_max, 3u);
  EXPECT_EQ(b[7].depth_min, 64u);
  EXPECT_EQ(b[7].depth_max, 100u);
  EXPECT_EQ(d.bucket_of(0), 0u);
  EXPECT_EQ(d.bucket_of(1), 1u);
  EXPECT_EQ(d.bucket_of(5), 3u);
  EXPECT_EQ(d.bucket_of(64), 7u);
  EXPECT_EQ(d.bucket_of(100), 7u);
  EXPECT_EQ(InflightDepth(64, 0).buckets().size(), 65u);  // up to 64: one per depth
}

TEST(InflightDepth, NothingInTheWindowIsNullWithTheReason) {
  InflightDepth d(8, 0);
  d.change(+1, 0, false);
  d.change(-1, 10, false);
  EXPECT_FALSE(d.summary().has_value());
  nlohmann::json stats = nlohmann::json::object();
  put_inflight_depth(stats, &d, {"--outstanding", "an I/O"});
  EXPECT_TRUE(stats["inflight_depth"].is_null());
  EXPECT_NE(stats["inflight_depth_unavailable_because"].get<std::string>().find("window"),
            std::string::npos);
  nlohmann::json off = nlohmann::json::object();
  put_inflight_depth(off, nullptr, {"--outstanding", "an I/O"});
  EXPECT_TRUE(off["inflight_depth"].is_null());
  EXPECT_NE(off["inflight_depth_unavailable_because"].get<std::string>().find("--no-metrics"),
            std::string::npos);
}

TEST(InflightDepth, JsonSpellsTheContractNames) {
  InflightDepth d(4, 0);
  script(d);
  nlohmann::json stats = nlohmann::json::object();
  put_inflight_depth(stats, &d, {"--outstanding", "an I/O"});
  const auto& j = stats.at("inflight_depth");
  for (const char* key : {"requested", "requested_by", "counts", "mean", "max",
                          "time_share_by_depth", "span_s", "changes", "method"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["requested"], 4);
  EXPECT_EQ(j["time_share_by_depth"][2]["depth_min"], 2);
  EXPECT_FALSE(stats.contains("inflight_depth_unavailable_because"));
}

// Threads racing their swaps with one shared clock: the intervals still tile the span, the
// depth returns to 0 and never passes the threads' count.
TEST(InflightDepth, RacingThreadsKeepTheSumsWhole) {
  constexpr int kThreads = 4, kPairs = 20000;
  InflightDepth d(kThreads, 0);
  std::atomic<std::uint64_t> clock{1};
  d.change(+1, clock.fetch_add(1), true);  // open the span at depth 1
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads - 1; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < kPairs; ++k) {
        d.change(+1, clock.fetch_add(1), true);
        d.change(-1, clock.fetch_add(1), true);
      }
    });
  }
  for (auto& t : threads) t.join();
  const std::uint64_t last = clock.fetch_add(1);
  d.change(-1, last, true);
  const auto s = d.summary();
  ASSERT_TRUE(s.has_value());
  EXPECT_LE(s->max, static_cast<unsigned>(kThreads));
  EXPECT_GE(s->mean, 1.0);  // one I/O was in flight all along
  EXPECT_LE(s->mean, static_cast<double>(s->max));
  double shares = 0;
  for (const auto& b : s->time_share_by_depth) shares += b.time_share;
  EXPECT_NEAR(shares, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(s->span_s, static_cast<double>(last - 1) / 1e9);
}

}  // namespace
}  // namespace iocpbench::workloads
