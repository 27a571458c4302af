// The port's lists in a run's result (engine/port_lists.hpp): kept for a shared emulated port,
// consistent with the window (every moment at one level, C never above what the port allowed),
// the first repetition's transitions recorded; null with the reason where they are not kept.
#include <gtest/gtest.h>

#include <numeric>

#include "engine/run_point.hpp"
#include "platform/platform.hpp"

namespace {

using iocpbench::WorkloadKind;
using iocpbench::engine::PointSpec;
using iocpbench::engine::RunResult;

PointSpec post_spec(double blocking) {
  const unsigned n = iocpbench::platform::logical_cpus();
  PointSpec spec;
  spec.workload = WorkloadKind::post;
  spec.concurrency = {"N", 1, 0};
  spec.concurrency_value = n;
  spec.pool = iocpbench::core::CountSpec{"2N+2", 2, 2};
  spec.pool_value = 2 * n + 2;
  spec.blocking_ratio = blocking;
  spec.work_us = 50;
  spec.duration_s = 0.3;
  spec.warmup_s = 0.05;
  return spec;
}

double sum(const std::array<double, iocpbench::port::kLevelBuckets>& shares) {
  return std::accumulate(shares.begin(), shares.end(), 0.0);
}

TEST(PortListsRun, ASharedEmulatedPortKeepsItsListsOverTheWindow) {
  const PointSpec spec = post_spec(0.5);
  const RunResult r = iocpbench::engine::run_point(spec, nullptr, 0);
  ASSERT_TRUE(r.port_lists.has_value()) << r.port_lists_unavailable_because;
  const auto& l = *r.port_lists;
  EXPECT_EQ(l.concurrency, spec.concurrency_value);
  // The lists' window is the measured one, taken a few reads after each of its ends (how much
  // later depends on the machine's load, so no closer bound than this): most of the window, and
  // not the warm-up.
  EXPECT_GT(l.window_s, 0.5 * r.seconds);
  EXPECT_LT(l.window_s, r.seconds + spec.warmup_s);
  for (const auto* shares : {&l.waiting, &l.active, &l.paused, &l.depth}) EXPECT_NEAR(sum(shares->at), 1.0, 1e-6);
  // C exceeds M only by resumes (a paused thread counted again at once): never by more than
  // the threads that can be paused.
  EXPECT_LE(l.mean_active, static_cast<double>(spec.pool_value));
  EXPECT_LE(l.mean_waiting + l.mean_active + l.mean_paused, static_cast<double>(spec.pool_value) + 1e-6);
  EXPECT_GT(l.mean_paused, 0) << "b = 0.5: handlers block";
  EXPECT_GT(l.wakes, 0u) << "a block releases a waiter: a handoff";
  EXPECT_LE(l.wake_p50_us, l.wake_p99_us);
  ASSERT_FALSE(l.events.empty()) << "repetition 0 records its first transitions";
  for (const auto& e : l.events) EXPECT_LE(static_cast<double>(e.t_ns) / 1e9, l.window_s + 1e-3);
}

TEST(PortListsRun, OnlyTheFirstRepetitionRecordsTransitions) {
  const RunResult r = iocpbench::engine::run_point(post_spec(0), nullptr, 1);
  ASSERT_TRUE(r.port_lists.has_value());
  EXPECT_TRUE(r.port_lists->events.empty());
  EXPECT_FALSE(r.port_lists->events_cut);
}

TEST(PortListsRun, WhereTheyAreNotKeptTheRunSaysWhy) {
  PointSpec per_thread = post_spec(0);
  per_thread.dispatch = iocpbench::Dispatch::per_thread;
  RunResult r = iocpbench::engine::run_point(per_thread, nullptr, 0);
  EXPECT_FALSE(r.port_lists.has_value());
  EXPECT_NE(r.port_lists_unavailable_because.find("per-thread"), std::string::npos);

  PointSpec condvar = post_spec(0);
  condvar.port = iocpbench::port::Backend::condvar;
  r = iocpbench::engine::run_point(condvar, nullptr, 0);
  EXPECT_FALSE(r.port_lists.has_value());
  EXPECT_NE(r.port_lists_unavailable_because.find("not a completion port model"), std::string::npos);

  PointSpec quiet = post_spec(0);
  quiet.metrics = false;
  r = iocpbench::engine::run_point(quiet, nullptr, 0);
  EXPECT_FALSE(r.port_lists.has_value());
  EXPECT_NE(r.port_lists_unavailable_because.find("--no-metrics"), std::string::npos);
}

}  // namespace
