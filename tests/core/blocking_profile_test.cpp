// The blocking-ratio profile (core/blocking_profile.hpp): its parser, good and bad, the ratio in
// force at given times (a square wave that repeats, a step that holds), and the time-weighted
// mean a point records as its requested ratio. Pure functions, no clock.

#include <vector>

#include <gtest/gtest.h>

#include "core/blocking_profile.hpp"

namespace iocpbench::core {
namespace {

BlockingProfile profile_of(const char* text) {
  std::string why;
  const auto p = parse_blocking_profile(text, &why);
  EXPECT_TRUE(p.has_value()) << text << ": " << why;
  return p.value_or(BlockingProfile{{}, {{0, 1}}, true});
}

TEST(BlockingProfile, ParsesSegmentsAndTellsASquareWaveFromAStep) {
  const BlockingProfile wave = profile_of("0.1:5,0.7:5");
  ASSERT_EQ(wave.segments.size(), 2u);
  EXPECT_TRUE(wave.repeats);
  EXPECT_DOUBLE_EQ(wave.segments[1].ratio, 0.7);
  EXPECT_DOUBLE_EQ(wave.segments[1].seconds, 5);
  EXPECT_EQ(wave.text, "0.1:5,0.7:5");
  const BlockingProfile step = profile_of("0.1:5,0.7");
  EXPECT_FALSE(step.repeats);
  EXPECT_EQ(step.text, "0.1:5,0.7");
  EXPECT_EQ(profile_of("0.50:0.5").text, "0.5:0.5");
  EXPECT_FALSE(profile_of("0.3").repeats) << "one ratio alone holds";
}

TEST(BlockingProfile, RefusesBadSpecsWithAReason) {
  for (const char* bad : {"", "1:5", "-0.1:5", "0.5:0", "0.5:-1", "0.1,0.7:5", "0.1:5,,0.7",
                          "x:5", "0.1:5:3", "0.1:5,0.7:y", "0.5:inf"}) {
    std::string why;
    EXPECT_FALSE(parse_blocking_profile(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(BlockingProfile, TheRatioInForceRepeatsAWaveAndHoldsAStep) {
  const BlockingProfile wave = profile_of("0.1:0.5,0.6:0.5");
  EXPECT_DOUBLE_EQ(wave.ratio_at(-1), 0.1) << "the warm-up uses the first segment";
  EXPECT_DOUBLE_EQ(wave.ratio_at(0), 0.1);
  EXPECT_DOUBLE_EQ(wave.ratio_at(0.49), 0.1);
  EXPECT_DOUBLE_EQ(wave.ratio_at(0.5), 0.6);
  EXPECT_DOUBLE_EQ(wave.ratio_at(0.99), 0.6);
  EXPECT_DOUBLE_EQ(wave.ratio_at(1.25), 0.1) << "the second period";
  EXPECT_DOUBLE_EQ(wave.ratio_at(1.75), 0.6);
  const BlockingProfile step = profile_of("0.1:5,0.7");
  EXPECT_DOUBLE_EQ(step.ratio_at(4.9), 0.1);
  EXPECT_DOUBLE_EQ(step.ratio_at(5), 0.7);
  EXPECT_DOUBLE_EQ(step.ratio_at(500), 0.7) << "a step holds for the rest of the run";
}

TEST(BlockingProfile, TheMeanIsTimeWeightedOverTheWindow) {
  const BlockingProfile wave = profile_of("0.1:0.5,0.6:0.5");
  EXPECT_NEAR(wave.mean_over(2), 0.35, 1e-12);
  EXPECT_NEAR(wave.mean_over(0.75), (0.1 * 0.5 + 0.6 * 0.25) / 0.75, 1e-6) << "a part period, to a millionth";
  const BlockingProfile step = profile_of("0.1:5,0.7");
  EXPECT_NEAR(step.mean_over(10), 0.4, 1e-12);
  EXPECT_NEAR(step.mean_over(2), 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(step.mean_over(0), 0.1);
}

TEST(BlockingProfile, ItsLevelsAreItsDistinctRatiosInOrder) {
  EXPECT_EQ(profile_of("0.7:1,0.1:1,0.7:2,0:1").levels(), (std::vector<double>{0.7, 0.1, 0.0}));
  EXPECT_EQ(profile_of("0.1:5,0.7").levels(), (std::vector<double>{0.1, 0.7}));
  EXPECT_EQ(profile_of("0.3").levels(), (std::vector<double>{0.3}));
}

}  // namespace
}  // namespace iocpbench::core
