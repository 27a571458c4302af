// Pool specs: fixed counts, and "auto" (Richter's self-sizing pool) with its normalised text,
// its parameters and every malformed form refused with the part that is wrong.

#include <gtest/gtest.h>

#include <string>

#include "sweep/grid.hpp"
#include "core/pool_spec.hpp"

namespace {

using iocpbench::core::parse_pool_spec;
using iocpbench::core::PoolSpec;

PoolSpec parse(const std::string& text) {
  std::string reason;
  auto spec = parse_pool_spec(text, &reason);
  EXPECT_TRUE(spec.has_value()) << text << ": " << reason;
  return spec.value_or(PoolSpec{});
}

std::string refusal(const std::string& text) {
  std::string reason;
  EXPECT_FALSE(parse_pool_spec(text, &reason).has_value()) << text;
  return reason;
}

TEST(PoolSpec, AFixedCountIsACountSpec) {
  const PoolSpec p = parse("2N+2");
  EXPECT_FALSE(p.is_auto());
  EXPECT_EQ(p.text, "2N+2");
  EXPECT_EQ(p.resolve(4), 10u);
  EXPECT_EQ(p.resolve_min(4), 10u);
  EXPECT_NE(refusal("0").find("at least 1"), std::string::npos);
}

TEST(PoolSpec, AutoDefaultsToNTo4NAt75And90PercentWithA100MsIdleTimeout) {
  const PoolSpec p = parse("auto");
  ASSERT_TRUE(p.is_auto());
  EXPECT_EQ(p.text, "auto");
  EXPECT_EQ(p.resolve_min(2), 2u);
  EXPECT_EQ(p.resolve(2), 8u);
  EXPECT_EQ(p.resolve(16), 64u);
  EXPECT_EQ(p.autosize->grow_below_cpu_pct, 75);
  EXPECT_EQ(p.autosize->shrink_above_cpu_pct, 90);
  EXPECT_EQ(p.autosize->idle_timeout_ms, 100u);
}

TEST(PoolSpec, AutoParametersAndTheirNormalisedText) {
  const PoolSpec p = parse("auto:1:2N+2:50:95:20");
  EXPECT_EQ(p.text, "auto:1:2N+2:50:95:20");
  EXPECT_EQ(p.resolve_min(3), 1u);
  EXPECT_EQ(p.resolve(3), 8u);
  EXPECT_EQ(p.autosize->grow_below_cpu_pct, 50);
  EXPECT_EQ(p.autosize->shrink_above_cpu_pct, 95);
  EXPECT_EQ(p.autosize->idle_timeout_ms, 20u);
  // Defaults dropped from the right, so equal settings name the same point.
  EXPECT_EQ(parse("auto:N:4N").text, "auto");
  EXPECT_EQ(parse("auto:N:4N:75:90:100").text, "auto");
  EXPECT_EQ(parse("auto:1:8:75:90").text, "auto:1:8");
  EXPECT_EQ(parse("auto:1n:8:75:90:30").text, "auto:N:8:75:90:30");
  EXPECT_EQ(parse("auto:2:8:60.5:90").text, "auto:2:8:60.5:90");
}

TEST(PoolSpec, MalformedAutoSpecsNameThePart) {
  EXPECT_NE(refusal("auto:N").find("MIN:MAX"), std::string::npos);
  EXPECT_NE(refusal("auto:1:2:3").find("MIN:MAX"), std::string::npos);
  EXPECT_NE(refusal("autox").find("expected auto"), std::string::npos);
  EXPECT_NE(refusal("auto:0:4").find("minimum"), std::string::npos);
  EXPECT_NE(refusal("auto:1:2N+").find("maximum"), std::string::npos);
  EXPECT_NE(refusal("auto:8:4").find("larger than the maximum"), std::string::npos);
  EXPECT_NE(refusal("auto:1:4:101:90").find("GROW_BELOW_PCT"), std::string::npos);
  EXPECT_NE(refusal("auto:1:4:75:-1").find("SHRINK_ABOVE_PCT"), std::string::npos);
  EXPECT_NE(refusal("auto:1:4:75:90:0").find("IDLE_MS"), std::string::npos);
  EXPECT_NE(refusal("auto:1:4:75:90:2.5").find("IDLE_MS"), std::string::npos);
  EXPECT_NE(refusal("auto:1:4:x:90").find("GROW_BELOW_PCT"), std::string::npos);
}

TEST(PoolSpec, ASweepPutsAutoBesideTheFixedPools) {
  iocpbench::sweep::Grid grid = iocpbench::sweep::default_grid();
  grid.workloads = {iocpbench::WorkloadKind::post};
  grid.concurrency = iocpbench::sweep::parse_count_list("N", true, "--concurrency");
  grid.pool = iocpbench::sweep::parse_pool_list("N,2N,auto", "--pool");
  grid.blocking = {0.5};
  const auto points = iocpbench::sweep::expand(grid, 2);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[2].pool.text, "auto");
  EXPECT_EQ(points[2].pool_value, 8u) << "an auto pool's value is its maximum";
  EXPECT_NE(iocpbench::sweep::point_id(points[2]).find("/p=auto/"), std::string::npos);
  // The grid's JSON keeps the spec, and reads back to the same pools.
  const auto back =
      iocpbench::sweep::grid_from_json(iocpbench::sweep::grid_to_json(grid), "--grid");
  ASSERT_EQ(back.pool.size(), 3u);
  EXPECT_TRUE(back.pool[2].is_auto());
}

TEST(PoolSpec, PerThreadDispatchSkipsAutoPools) {
  iocpbench::sweep::Grid grid = iocpbench::sweep::default_grid();
  grid.workloads = {iocpbench::WorkloadKind::post};
  grid.dispatch = {iocpbench::Dispatch::shared, iocpbench::Dispatch::per_thread};
  grid.concurrency = iocpbench::sweep::parse_count_list("N", true, "--concurrency");
  grid.pool = iocpbench::sweep::parse_pool_list("N,auto", "--pool");
  grid.blocking = {0};
  const auto points = iocpbench::sweep::expand(grid, 2);
  ASSERT_EQ(points.size(), 3u) << "shared: N and auto; per-thread: N only";
  for (const auto& p : points) {
    if (p.dispatch == iocpbench::Dispatch::per_thread) {
      EXPECT_FALSE(p.pool.is_auto());
    }
  }
}

}  // namespace
