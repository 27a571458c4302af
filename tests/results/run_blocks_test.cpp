// A run's typed blocks as schema v1 spells them (harness/results/run_blocks.cpp, summary.cpp):
// the keys iocpbench_analysis/ and results/schema/results.schema.json read, nulls where a
// value is absent (never 0), and the derived values (means, relative times) computed right.

#include <gtest/gtest.h>

#include <vector>

#include "engine/run_result.hpp"
#include "results/run_blocks.hpp"
#include "results/summary.hpp"
#include "stats/statistics.hpp"

namespace iocpbench::results {
namespace {

TEST(SummaryJson, HasTheContractNames) {
  const auto j = summary_json(stats::summarize(std::vector<double>{1, 2, 3}));
  for (const char* key : {"median", "mean", "ci95_low", "ci95_high", "cv", "n"}) {
    EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_TRUE(j[key].is_number()) << key;
  }
}

TEST(SummaryJson, OneRunKeepsTheShapeWithNulls) {
  const auto j = summary_json(stats::summarize(std::vector<double>{7}));
  EXPECT_EQ(j["n"], 1);
  EXPECT_EQ(j["mean"], 7.0);
  for (const char* key : {"ci95_low", "ci95_high", "cv"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_TRUE(j[key].is_null()) << key;
  }
}

TEST(HandlerTimeJson, NoBlockAtBZeroIsHonouredAndNotSplit) {
  engine::BlockingRecord r;
  r.requested_ratio = 0;
  const auto j = handler_time_json(r);
  EXPECT_EQ(j["blocking_handlers"], 0);
  EXPECT_TRUE(j["honoured"].get<bool>());
  EXPECT_TRUE(j["not_split"].is_string());
  EXPECT_FALSE(j.contains("blocked_us_mean"));
}

TEST(HandlerTimeJson, MeansPerHandlerAndTheReasonWhenNotHonoured) {
  engine::BlockingRecord r;
  r.requested_ratio = 0.5;
  r.blocks = true;
  r.split_available = true;
  r.method = "schedstat";
  r.times = {.handlers = 4, .handler_ns = 400'000, .cpu_ns = 160'000, .blocked_ns = 200'000,
             .runnable_wait_ns = 40'000, .target_block_ns = 180'000};
  r.not_honoured_because = "achieved 0.556 for a requested 0.50";
  const auto j = handler_time_json(r);
  EXPECT_DOUBLE_EQ(j["handler_us_mean"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(j["cpu_us_mean"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(j["blocked_us_mean"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(j["runnable_wait_us_mean"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(j["block_overshoot_us_mean"].get<double>(), 5.0);
  EXPECT_FALSE(j["honoured"].get<bool>());
  EXPECT_EQ(j["not_honoured_because"], r.not_honoured_because);
  EXPECT_TRUE(j["hint"].is_null()) << "no advice given: null, not an empty string";
}

TEST(HandlerTimeJson, RunnableWaitIsNullWithTheReasonWhereTheOsCannotSplit) {
  engine::BlockingRecord r;
  r.requested_ratio = 0.25;
  r.blocks = true;
  r.split_available = false;
  r.method = "no per-thread scheduler statistics here";
  r.times.handlers = 1;
  const auto j = handler_time_json(r);
  EXPECT_TRUE(j["runnable_wait_us_mean"].is_null());
  EXPECT_EQ(j["runnable_wait_unavailable"], r.method);
  EXPECT_TRUE(j["honoured"].get<bool>());
  EXPECT_TRUE(j["not_honoured_because"].is_null());
}

TEST(PoolSizingJson, TheTimelineIsInMillisecondsFromTheWindowsStart) {
  engine::PoolSizingRecord r;
  r.settings.min_threads = 2;
  r.settings.max_threads = 8;
  r.window.mean_threads = 3.5;
  r.window_start_ns = 10'000'000;
  r.timeline.events = {{.t_ns = 9'500'000, .threads = 2}, {.t_ns = 12'250'000, .threads = 3}};
  r.timeline.grows = 1;
  const auto j = pool_sizing_json(r);
  EXPECT_EQ(j["settings"]["max_threads"], 8);
  EXPECT_DOUBLE_EQ(j["window"]["mean_threads"].get<double>(), 3.5);
  ASSERT_EQ(j["timeline_ms_threads"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["timeline_ms_threads"][0][0].get<double>(), -0.5) << "warm-up: negative";
  EXPECT_DOUBLE_EQ(j["timeline_ms_threads"][1][0].get<double>(), 2.25);
  EXPECT_EQ(j["timeline_ms_threads"][1][1], 3);
  EXPECT_EQ(j["grows"], 1);
}

TEST(AttributionJson, EveryGroupHasItsTotalAndNothingCountedIsNull) {
  engine::SwitchCounts c;
  c.workers_voluntary = 100;
  c.handoffs = 60;
  c.source_voluntary = 30;
  c.window_s = 1;
  const auto j = attribution_json(engine::attribute_switches(c));
  EXPECT_EQ(j["iocp_model"]["port_waits"], 60);
  EXPECT_EQ(j["emulation"]["total"], j["emulation"]["completion_thread"].get<int>() +
                                          j["emulation"]["workers_other_voluntary"].get<int>() +
                                          j["emulation"]["workers_preempted_by_it"].get<int>());
  EXPECT_TRUE(j["emulation_share"].is_number());
  EXPECT_TRUE(j["method"].is_string());
  EXPECT_TRUE(attribution_json(engine::attribute_switches({}))["emulation_share"].is_null());
}

TEST(ErrorDetailJson, NamesEachCause) {
  const auto j = error_detail_json({.completions_failed = 1, .blocking_reads_failed = 2,
                                    .remove_failures = 3, .workload = 4, .drain_timed_out = true});
  EXPECT_EQ(j["completions_failed"], 1);
  EXPECT_EQ(j["blocking_reads_failed"], 2);
  EXPECT_EQ(j["remove_failures"], 3);
  EXPECT_EQ(j["workload"], 4);
  EXPECT_TRUE(j["drain_timed_out"].get<bool>());
}

// The point's summary adds the I/O depth held where the runs measured it, and only there.
TEST(SummarizeRuns, InflightDepthMeanWhereTheRunsHaveIt) {
  const nlohmann::json with = nlohmann::json::array(
      {{{"workload_stats", {{"inflight_depth", {{"mean", 3.0}}}}}},
       {{"workload_stats", {{"inflight_depth", {{"mean", 5.0}}}}}}});
  const nlohmann::json summary = summarize_runs(with);
  ASSERT_TRUE(summary.contains("inflight_depth_mean"));
  EXPECT_EQ(summary["inflight_depth_mean"]["mean"], 4.0);
  EXPECT_EQ(summary["inflight_depth_mean"]["n"], 2);
  const nlohmann::json post = nlohmann::json::array(
      {{{"workload_stats",
         {{"inflight_depth", nullptr}, {"inflight_depth_unavailable_because", "no I/O"}}}}});
  EXPECT_FALSE(summarize_runs(post).contains("inflight_depth_mean"));
  const nlohmann::json old = nlohmann::json::array({nlohmann::json::object()});
  EXPECT_FALSE(summarize_runs(old).contains("inflight_depth_mean"));
}

}  // namespace
}  // namespace iocpbench::results
