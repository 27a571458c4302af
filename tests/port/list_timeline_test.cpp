// The port's lists over time (port/list_timeline.hpp): the totals integrate scripted
// transitions exactly, the event record keeps the first ones and says when it was cut, and the
// emulated port's own transitions (a post, a remove, a handoff, a block) show up as the lists
// they change. No timing: the port's cases wait for states, never for durations.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "port/blocking_region.hpp"
#include "port/completion_port.hpp"
#include "port/list_timeline.hpp"
#include "port/port_actor.hpp"
#include "step_bound.hpp"

namespace iocpbench::port {
namespace {

using namespace std::chrono_literals;

// A scripted clock: the tests set the time each change happens at.
std::uint64_t g_now_ns = 0;
std::uint64_t scripted_clock() { return g_now_ns; }

void change_at(ListTimeline& t, std::uint64_t at_ns, const ListLevels& levels) {
  g_now_ns = at_ns;
  t.change(levels);
}

// Changes microseconds apart: a clock read at every one, so the totals are exact.
TEST(ListTimeline, IntegratesScriptedTransitionsExactly) {
  g_now_ns = 0;
  ListTimeline t(/*concurrency=*/1, scripted_clock);
  constexpr std::uint64_t us = 1000;
  change_at(t, 100 * us, {.waiting = 1});
  change_at(t, 300 * us, {.waiting = 0, .active = 1});
  change_at(t, 700 * us, {.waiting = 1, .active = 0, .depth = 2});  // queued, a waiter, C < M
  change_at(t, 800 * us, {.waiting = 1, .active = 1, .paused = 3, .depth = 20});
  g_now_ns = 1000 * us;
  const ListTotals x = t.totals();
  EXPECT_EQ(x.t_ns, 1000 * us);
  EXPECT_DOUBLE_EQ(x.waiting_ns, (200.0 + 100 + 200) * us);
  EXPECT_DOUBLE_EQ(x.active_ns, (400.0 + 200) * us);
  EXPECT_DOUBLE_EQ(x.paused_ns, 3.0 * 200 * us);
  EXPECT_DOUBLE_EQ(x.depth_ns, (2.0 * 100 + 20 * 200) * us);
  EXPECT_DOUBLE_EQ(x.waiting_at[0], (100.0 + 400) * us);
  EXPECT_DOUBLE_EQ(x.waiting_at[1], (200.0 + 100 + 200) * us);
  EXPECT_DOUBLE_EQ(x.depth_at[kLevelBuckets - 1], 200.0 * us) << "20 queued counts as 16 or more";
  EXPECT_DOUBLE_EQ(x.queued_with_room_ns, 100.0 * us) << "only 700..800 had a packet, a waiter and C < M";
  double at = 0;
  for (double v : x.active_at) at += v;
  EXPECT_DOUBLE_EQ(at, 1000.0 * us) << "every nanosecond at exactly one level";
  EXPECT_EQ(x.changes, 4u);
  EXPECT_EQ(x.clock_reads, 4u);
}

// Changes 10 ns apart: the clock is read every K of them, and the time between reads shared
// among the states they left. The estimate keeps every nanosecond and the mean.
TEST(ListTimeline, FastChangesShareTheTimeBetweenClockReads) {
  g_now_ns = 0;
  ListTimeline t(2, scripted_clock);
  for (int i = 1; i <= 100000; ++i) change_at(t, 10u * i, {.active = static_cast<std::uint32_t>(i % 2)});
  g_now_ns = 10u * 100000;
  const ListTotals x = t.totals();
  EXPECT_EQ(x.changes, 100000u);
  EXPECT_LT(x.clock_reads, x.changes / 32) << "read every K = 64 changes once they come fast";
  EXPECT_NEAR(x.active_ns / 1e6, 0.5, 0.01) << "half the time at 1";
  EXPECT_NEAR(x.active_at[0] + x.active_at[1], 1e6, 1e-3);
}

// A window is the difference of two snapshots, so no level may lose time between them: a
// snapshot taken between clock reads (K changes pending) once split that time one way and the
// next read another, and a window's share went negative.
TEST(ListTimeline, ALaterSnapshotNeverHoldsLessAtAnyLevel) {
  g_now_ns = 0;
  ListTimeline t(2, scripted_clock);
  std::uint64_t now = 0;
  for (int i = 1; i <= 5000; ++i) change_at(t, now += 10, {.waiting = static_cast<std::uint32_t>(i % 5)});
  for (int i = 1; i <= 20; ++i) change_at(t, now += 10, {.waiting = 4});  // K is 64: pending
  g_now_ns = now += 50'000;  // a long quiet stretch before the snapshot
  const ListTotals a = t.totals();
  for (int i = 1; i <= 40; ++i) change_at(t, now += 10, {.waiting = static_cast<std::uint32_t>(i % 3)});
  g_now_ns = now += 1000;
  const ListTotals b = t.totals();
  EXPECT_GE(b.waiting_ns, a.waiting_ns);
  for (std::size_t i = 0; i < kLevelBuckets; ++i) EXPECT_GE(b.waiting_at[i], a.waiting_at[i]) << i;
  double window = 0;
  for (std::size_t i = 0; i < kLevelBuckets; ++i) window += b.waiting_at[i] - a.waiting_at[i];
  EXPECT_NEAR(window, static_cast<double>(b.t_ns - a.t_ns), 1e-6) << "every nanosecond once";
}

TEST(ListTimeline, RecordsTheFirstEventsAndSaysWhenCut) {
  g_now_ns = 10'000;
  ListTimeline t(2, scripted_clock);
  t.record_events(3);  // the lists as they are, then two changes
  change_at(t, 20'000, {.active = 1});
  change_at(t, 30'000, {.active = 2});
  EXPECT_FALSE(t.events_cut());
  change_at(t, 40'000, {.active = 1});
  ASSERT_EQ(t.events().size(), 3u);
  EXPECT_TRUE(t.events_cut());
  EXPECT_EQ(t.events()[0].t_ns, 10'000u);
  EXPECT_EQ(t.events()[2].levels.active, 2u);
}

TEST(ListTimeline, WakeDelaysGoToQuarterOctaveBuckets) {
  for (std::uint64_t ns : {0ull, 3ull, 4ull, 7ull, 9ull, 100ull, 1000ull, 123456ull, 1ull << 39}) {
    const std::size_t b = delay_bucket(ns);
    EXPECT_LE(delay_bucket_low_ns(b), ns) << ns;
    if (b + 1 < kDelayBuckets) {
      EXPECT_GT(delay_bucket_low_ns(b + 1), ns) << ns;
    }
  }
  g_now_ns = 0;
  ListTimeline t(1, scripted_clock);
  t.woke(4000);
  t.woke(0);
  const ListTotals x = t.totals();
  EXPECT_EQ(x.wakes, 2u);
  EXPECT_EQ(x.wake_ns, 4000u);
  EXPECT_EQ(x.wake_buckets[delay_bucket(4000)], 1u);
  EXPECT_EQ(x.wake_buckets[0], 1u);
}

std::unique_ptr<CompletionPort> timed_port() {
  return make_port(Backend::emulated, {.concurrency = 1, .check_invariants = true, .list_timeline = true});
}

// The lists now (the event record is one in K changes when they come fast: not a test's clock).
ListLevels last_levels(const CompletionPort& port) { return port.list_totals()->now; }

// Waits (bounded) until the port's lists satisfy `done`.
template <typename Done>
bool wait_for_lists(const CompletionPort& port, Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kStepBound;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done(last_levels(port))) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

TEST(PortLists, APostAndARemoveChangeTheQueueAndC) {
  auto port = timed_port();
  port->record_list_events(100);
  ASSERT_TRUE(port->post({.key = 1}));
  EXPECT_EQ(last_levels(*port).depth, 1u);
  Packet p;
  ASSERT_EQ(port->remove(p, 0ms), RemoveStatus::ok);
  const ListLevels after = last_levels(*port);
  EXPECT_EQ(after.depth, 0u);
  EXPECT_EQ(after.active, 1u);
  const ListTotals t = *port->list_totals();
  EXPECT_EQ(t.wakes, 0u) << "no handoff: the packet was queued";
  EXPECT_EQ(t.queued_with_room_ns, 0u) << "no waiter while it was queued";
  EXPECT_EQ(port->counters().invariant_violations, 0u);
  port->close();
}

TEST(PortLists, AHandoffIsTimedFromTheHandoffToTheWaiterRunning) {
  auto port = timed_port();
  port->record_list_events(100);
  PortActor waiter;
  auto got = async_remove(waiter, *port, 5000ms);
  ASSERT_TRUE(wait_for_lists(*port, [](const ListLevels& l) { return l.waiting == 1; }));
  ASSERT_TRUE(port->post({.key = 7}));  // handed straight to the waiter: never queued
  ASSERT_EQ(got.wait_for(kStepBound), std::future_status::ready);
  EXPECT_EQ(got.get().status, RemoveStatus::ok);
  EXPECT_EQ(port->list_totals()->wakes, 0u) << "reported at the thread's next call into the port";
  auto again = async_remove(waiter, *port, 0ms);
  ASSERT_EQ(again.wait_for(kStepBound), std::future_status::ready);
  EXPECT_EQ(again.get().status, RemoveStatus::timeout);
  const ListTotals t = *port->list_totals();
  EXPECT_EQ(t.wakes, 1u);
  EXPECT_EQ(t.queued_with_room_ns, 0u) << "a handoff in flight is not a queued packet";
  const ListLevels l = last_levels(*port);
  EXPECT_EQ(l.waiting, 0u);
  EXPECT_EQ(l.active, 1u) << "the timed-out remove keeps its slot (3c)";
  EXPECT_EQ(l.depth, 0u);
  port->close();
}

TEST(PortLists, ABlockMovesAReleasedThreadToPausedAndBack) {
  auto port = timed_port();
  port->record_list_events(100);
  PortActor r;
  ASSERT_TRUE(port->post({.key = 1}));
  auto took = async_remove(r, *port, 0ms);
  ASSERT_EQ(took.wait_for(kStepBound), std::future_status::ready);
  ASSERT_EQ(took.get().status, RemoveStatus::ok);
  std::atomic<bool> release{false};
  auto blocks = r.run([&release] {
    BlockingRegion region;
    while (!release.load()) std::this_thread::sleep_for(1ms);
  });
  EXPECT_TRUE(wait_for_lists(*port, [](const ListLevels& l) { return l.paused == 1 && l.active == 0; }));
  release.store(true);
  ASSERT_EQ(blocks.wait_for(kStepBound), std::future_status::ready);
  const ListLevels l = last_levels(*port);
  EXPECT_EQ(l.paused, 0u);
  EXPECT_EQ(l.active, 1u);
  port->close();
}

TEST(PortLists, APortWithoutTheTimelineHasNone) {
  auto port = make_port(Backend::emulated, {.concurrency = 1});
  EXPECT_FALSE(port->list_totals().has_value());
  bool cut = true;
  EXPECT_TRUE(port->list_events(cut).empty());
  EXPECT_FALSE(cut);
  port->close();
}

}  // namespace
}  // namespace iocpbench::port
