// Open-loop arrivals through real runs (engine::run_point; harness/engine/open_loop.hpp): every
// arrival accounted for, latency from the intended time, overload bounded and marked, --load
// resolved from a capacity run, bad settings refused with their flag.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/errors.hpp"
#include "engine/run_point.hpp"
#include "platform/platform.hpp"

namespace {

using iocpbench::BadInput;
using iocpbench::WorkloadKind;
using iocpbench::engine::PointSpec;
using iocpbench::engine::RunResult;

PointSpec open_spec(WorkloadKind workload, double rate, nlohmann::json params = nlohmann::json::object()) {
  const unsigned n = iocpbench::platform::logical_cpus();
  PointSpec spec;
  spec.workload = workload;
  spec.workload_params = iocpbench::workloads::parse_workload_params(workload, params);
  spec.concurrency = {"N", 1, 0};
  spec.concurrency_value = n;
  spec.pool = iocpbench::core::CountSpec{"2N", 2, 0};
  spec.pool_value = 2 * n;
  spec.work_us = 20;
  spec.duration_s = 0.4;
  spec.warmup_s = 0.1;
  spec.open_loop.rate_ops_per_s = rate;
  return spec;
}

// What holds for every open-loop run, whatever the machine's speed.
void expect_every_arrival_accounted(const RunResult& r) {
  ASSERT_TRUE(r.open_loop.has_value());
  const auto& o = *r.open_loop;
  EXPECT_EQ(r.errors, 0u);
  EXPECT_TRUE(r.drained);
  EXPECT_EQ(r.left_in_port, 0u);
  EXPECT_GT(o.arrivals_in_window, 0u);
  EXPECT_EQ(o.issued + o.unissued, o.arrivals_in_window) << "each arrival issued or counted as not";
  EXPECT_LE(o.held, o.issued);
  EXPECT_EQ(o.issue_failures, 0u);
  // Every request due in the window is in the ledger, timed or unfinished, and in the latency.
  EXPECT_EQ(o.due, o.arrivals_in_window) << "the ledger and the pacer count the same requests";
  EXPECT_EQ(r.latency.count, o.timed + o.unfinished) << "the latency is over every due request";
  EXPECT_EQ(o.service_time.count, o.timed);
  EXPECT_EQ(o.response_hist.count(), o.timed);
  EXPECT_EQ(o.unfinished_hist.count(), o.unfinished);
  EXPECT_EQ(o.response_lower_bound.max, o.unfinished > 0);
  // Per request, service (from the issue) <= response (from the intended time), so every
  // quantile over the same requests keeps the order.
  if (o.unfinished == 0) {
    EXPECT_LE(o.service_time.p50, r.latency.p50);
    EXPECT_LE(o.service_time.p99, r.latency.p99);
    EXPECT_LE(o.service_time.max, r.latency.max);
  }
  EXPECT_EQ(o.over_capacity(), o.backlog.grows);
  EXPECT_FALSE(o.pacer_priority.empty());
  EXPECT_FALSE(o.meter_priority.empty());
}

TEST(OpenLoop, PostArrivalsAreAllAccountedForAndTimedFromTheirIntendedStart) {
  const PointSpec spec = open_spec(WorkloadKind::post, 2000);
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_every_arrival_accounted(r);
  EXPECT_EQ(r.packets_posted_total, r.packets_handled_total) << "posted = handled, none lost";
  EXPECT_EQ(r.workload_stats.at("mode"), "open_loop");
  EXPECT_DOUBLE_EQ(r.open_loop->offered_ops_per_s, 2000);
  EXPECT_FALSE(r.open_loop->capacity_ops_per_s.has_value()) << "--rate runs no capacity run";
}

TEST(OpenLoop, ConstantArrivalsInTheWindowAreTheRateTimesTheWindow) {
  PointSpec spec = open_spec(WorkloadKind::post, 5000);
  spec.open_loop.arrivals = iocpbench::core::ArrivalProcess::constant;
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_every_arrival_accounted(r);
  // Counted by intended time in the window fixed at the pacer's start, so neither the pacer's
  // lateness nor the main thread's moves an arrival in or out of it.
  EXPECT_NEAR(static_cast<double>(r.open_loop->arrivals_in_window), 5000 * spec.duration_s, 1.5);
}

TEST(OpenLoop, OverloadIsBoundedHeldAndMarkedNotHung) {
  PointSpec spec = open_spec(WorkloadKind::post, 1'000'000);  // far beyond any pool here
  spec.work_us = 200;
  spec.open_loop.in_flight_bound = 4;
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_every_arrival_accounted(r);
  const auto& o = *r.open_loop;
  EXPECT_TRUE(o.over_capacity()) << o.over_capacity_because;
  EXPECT_GT(o.held + o.unissued, 0u);
  EXPECT_LE(r.port_counters.max_depth, 4u) << "never more in flight than the bound";
  EXPECT_EQ(o.in_flight_bound, 4u);
  // The backlog is at most what fell due over the whole run (warm-up, window, a margin).
  EXPECT_GT(o.max_backlog, 0u);
  EXPECT_LT(static_cast<double>(o.max_backlog), 1e6 * (spec.warmup_s + spec.duration_s + 1));
  // Coordinated omission would hide the wait for a slot: here it is in the response time.
  EXPECT_GT(r.latency.p99, 2 * o.service_time.p99);
}

TEST(OpenLoop, LoadIsAShareOfTheCapacityMeasuredFirst) {
  PointSpec spec = open_spec(WorkloadKind::post, 0);
  spec.open_loop.load = 0.5;
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_every_arrival_accounted(r);
  ASSERT_TRUE(r.open_loop->capacity_ops_per_s.has_value());
  EXPECT_GT(*r.open_loop->capacity_ops_per_s, 0);
  EXPECT_GT(r.open_loop->capacity_run_s, 0);
  EXPECT_DOUBLE_EQ(r.open_loop->offered_ops_per_s, 0.5 * *r.open_loop->capacity_ops_per_s);
  EXPECT_EQ(r.open_loop->load, 0.5);
}

TEST(OpenLoop, FileReadsAreIssuedAtTheirTimesIntoFreeSlots) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("iocpbench-open-loop-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const PointSpec spec = open_spec(WorkloadKind::file, 1000,
                                   {{"file", (dir / "data.bin").string()}, {"file_size_mib", 16},
                                    {"block_size", 4096}, {"outstanding", 8}});
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  expect_every_arrival_accounted(r);
  EXPECT_EQ(r.bytes, r.ops * 4096);
  EXPECT_EQ(r.open_loop->in_flight_bound, 8u) << "the file workload's bound is --outstanding";
}

// The socket workload times its messages on the generator's side (a round trip from the
// intended time), not in the pool, so its latency counts messages and its ops count receives.
void expect_every_message_accounted(const RunResult& r) {
  ASSERT_TRUE(r.open_loop.has_value());
  const auto& o = *r.open_loop;
  EXPECT_EQ(r.errors, 0u);
  EXPECT_TRUE(r.drained);
  EXPECT_GT(o.arrivals_in_window, 0u);
  EXPECT_EQ(o.issued + o.unissued, o.arrivals_in_window);
  EXPECT_EQ(o.issue_failures, 0u);
  EXPECT_GT(r.latency.count, 0u);
  EXPECT_EQ(o.due, o.arrivals_in_window) << "the ledger and the pacer count the same requests";
  EXPECT_EQ(r.latency.count, o.timed + o.unfinished);
  EXPECT_EQ(o.service_time.count, o.timed) << "each timed message has both times";
  if (o.unfinished == 0) {
    EXPECT_LE(o.service_time.p50, r.latency.p50);
    EXPECT_LE(o.service_time.p99, r.latency.p99);
    EXPECT_LE(o.service_time.max, r.latency.max);
  }
  const auto& stats = r.workload_stats;
  EXPECT_EQ(stats.at("mismatched_bytes"), 0);
  EXPECT_EQ(stats.at("messages_verified"), stats.at("messages_sent")) << "every message sent came back";
  EXPECT_NE(r.latency_source.find("intended"), std::string::npos) << r.latency_source;
}

TEST(OpenLoop, SocketMessagesAreSentAtTheirTimesAndTimedFromThem) {
  const PointSpec spec = open_spec(WorkloadKind::socket, 1000);
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_every_message_accounted(r);
  EXPECT_EQ(r.open_loop->in_flight_bound, 64u) << "16 connections x 1 message, raised to 64";
  EXPECT_GE(r.workload_stats.at("messages_sent").get<std::uint64_t>(), r.open_loop->issued);
  // The thread that stamps each echo is not lowered to nice 19 in the open loop.
  const std::string priority = r.workload_stats.at("load_generator").at("priority");
  EXPECT_EQ(priority.find("nice"), std::string::npos) << priority;
}

TEST(OpenLoop, SocketOverloadIsBoundedHeldAndMarkedNotHung) {
  PointSpec spec = open_spec(WorkloadKind::socket, 1'000'000);
  spec.work_us = 200;
  spec.open_loop.in_flight_bound = 4;
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_every_message_accounted(r);
  const auto& o = *r.open_loop;
  EXPECT_TRUE(o.over_capacity()) << o.over_capacity_because;
  EXPECT_GT(o.held + o.unissued, 0u);
  EXPECT_EQ(o.in_flight_bound, 4u);
  EXPECT_GT(r.latency.p99, 2 * o.service_time.p99) << "the wait for a slot is in the response time";
}

std::string refused_flag(const PointSpec& spec) {
  try {
    iocpbench::engine::validate_point(spec);
  } catch (const BadInput& e) {
    return e.flag;
  }
  return "(accepted)";
}

TEST(OpenLoop, BadSettingsAreRefusedNamingTheirFlag) {
  PointSpec spec = open_spec(WorkloadKind::post, 0);
  spec.open_loop.load = 1.5;
  EXPECT_EQ(refused_flag(spec), "--load");
  spec.open_loop.load = 0.5;
  spec.open_loop.rate_ops_per_s = 100;
  EXPECT_EQ(refused_flag(spec), "--load") << "a rate and a load together";
  spec.open_loop.load = 0;
  spec.open_loop.rate_ops_per_s = -1;
  EXPECT_EQ(refused_flag(spec), "--rate");
  spec.open_loop.rate_ops_per_s = 5;
  EXPECT_EQ(refused_flag(spec), "--rate") << "below 10/s a quiet gap would read as a stall";
  spec.open_loop.rate_ops_per_s = 100;
  PointSpec file = open_spec(WorkloadKind::file, 100, {{"file_size_mib", 16}});
  file.open_loop.in_flight_bound = 5000;
  EXPECT_EQ(refused_flag(file), "--max-in-flight") << "refused before any run, not in open()";
  spec.dispatch = iocpbench::Dispatch::per_thread;
  EXPECT_EQ(refused_flag(spec), "--dispatch");
  spec.dispatch = iocpbench::Dispatch::shared;
  spec.metrics = false;
  EXPECT_EQ(refused_flag(spec), "--no-metrics");
  spec.metrics = true;
  EXPECT_EQ(refused_flag(spec), "(accepted)");
}

}  // namespace
