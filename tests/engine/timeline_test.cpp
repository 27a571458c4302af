// runs[].timeline's windows from scripted counter samples (engine/timeline_sampler.hpp): no
// clock, no pool.
#include <gtest/gtest.h>

#include "core/blocking_profile.hpp"
#include "engine/timeline_sampler.hpp"

namespace iocpbench {
namespace {

using engine::TimelineBuilder;

constexpr std::uint64_t kMs = 1'000'000;

core::BlockingProfile profile(const char* text) {
  std::string reason;
  auto p = core::parse_blocking_profile(text, &reason);
  EXPECT_TRUE(p.has_value()) << reason;
  return *p;
}

TEST(Timeline, WindowsCountCompletionsOverTheirOwnLengthFromTheWindowsStart) {
  TimelineBuilder b(250, std::nullopt, 0.5);
  const std::uint64_t t0 = 1'000 * kMs;  // the clock's origin is not the window's
  b.start(t0, 1'000);                    // completions counted in the warm-up are not the window's
  EXPECT_FALSE(b.due(t0 + 249 * kMs));
  ASSERT_TRUE(b.due(t0 + 255 * kMs));
  b.close(t0 + 255 * kMs, 1'000 + 510, 4.0);  // closed 5 ms late: the rate is over 255 ms
  ASSERT_TRUE(b.due(t0 + 505 * kMs));
  b.close(t0 + 505 * kMs, 1'510 + 250, 3.5);
  const auto& r = b.record();
  EXPECT_EQ(r.window_ms, 250u);
  ASSERT_EQ(r.windows.size(), 2u);
  EXPECT_DOUBLE_EQ(r.windows[0].t_ms, 0);
  EXPECT_DOUBLE_EQ(r.windows[0].ops_per_s, 2'000);
  EXPECT_DOUBLE_EQ(r.windows[0].mean_threads, 4.0);
  EXPECT_DOUBLE_EQ(r.windows[0].blocking_ratio, 0.5);  // without a profile: the fixed ratio
  EXPECT_DOUBLE_EQ(r.windows[1].t_ms, 255);
  EXPECT_DOUBLE_EQ(r.windows[1].ops_per_s, 1'000);
}

TEST(Timeline, ALastPartialWindowIsKeptOnlyFromHalfAWindow) {
  TimelineBuilder b(100, std::nullopt, 0);
  b.start(0, 0);
  b.close(100 * kMs, 10, 1);
  EXPECT_FALSE(b.keeps_last(149 * kMs));
  EXPECT_TRUE(b.keeps_last(150 * kMs));
  EXPECT_FALSE(b.keeps_last(100 * kMs));  // nothing left open
}

TEST(Timeline, EachWindowCarriesTheProfilesRatioInForceAtItsStart) {
  TimelineBuilder b(250, profile("0.1:0.5,0.6:0.5"), 0.35);
  b.start(0, 0);
  for (std::uint64_t k = 1; k <= 8; ++k) b.close(k * 250 * kMs, k * 100, 2);
  const auto& w = b.record().windows;
  ASSERT_EQ(w.size(), 8u);
  const double want[] = {0.1, 0.1, 0.6, 0.6, 0.1, 0.1, 0.6, 0.6};  // a repeating square wave
  for (std::size_t i = 0; i < w.size(); ++i) EXPECT_DOUBLE_EQ(w[i].blocking_ratio, want[i]) << i;
  EXPECT_DOUBLE_EQ(b.ratio_at_ns(1'600 * kMs), 0.6);
  EXPECT_DOUBLE_EQ(b.ratio_at_ns(2'100 * kMs), 0.1);
}

TEST(Timeline, AStepHoldsItsLastRatio) {
  TimelineBuilder b(250, profile("0.2:0.4,0.5"), 0);
  EXPECT_DOUBLE_EQ(b.ratio_at_ns(0), 0.2);
  EXPECT_DOUBLE_EQ(b.ratio_at_ns(399 * kMs), 0.2);
  EXPECT_DOUBLE_EQ(b.ratio_at_ns(400 * kMs), 0.5);
  EXPECT_DOUBLE_EQ(b.ratio_at_ns(3'600'000 * kMs), 0.5);
}

}  // namespace
}  // namespace iocpbench
