// The emulated port's I/O feed (port/io_feed.hpp) driven by a scripted feed: the test decides
// when an I/O completes and when the watcher gets a CPU, so each transition with I/O packets is
// checked deterministically, without racing a real ring. The real feeds (io_uring, epoll) run
// the same port in tests/workloads; these scripts pin the rules: a completed I/O is a queued
// packet to every operation that would see one, whatever the watcher is doing.

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "platform/platform.hpp"
#include "port/blocking_region.hpp"
#include "port/completion_port.hpp"
#include "port/io_feed.hpp"
#include "port/port_actor.hpp"
#include "step_bound.hpp"

namespace iocpbench::port {
namespace {

using namespace std::chrono_literals;
constexpr Timeout kFeedWait = 10000ms;  // "forever", bounded

// A feed whose completions and wake-ups the test controls. A completion is ready for the next
// harvest at once (the kernel has queued it); the watcher asleep in wait() wakes only when the
// test lets it (wake_watcher: "it got a CPU") or the port interrupts it. Every wait is bounded.
class ScriptedFeed final : public IoFeed {
 public:
  void complete(std::uintptr_t key) {
    std::lock_guard lock(mutex_);
    ready_.push_back(Packet{.key = key});
  }
  void set_in_flight(bool value) { in_flight_.store(value); }
  void wake_watcher() {
    std::lock_guard lock(mutex_);
    kicked_ = true;
    changed_.notify_all();
  }
  // Until `n` threads are inside wait(); false when the bound passes first.
  bool await_sleepers(unsigned n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kStepBound, [&] { return sleepers_ == n; });
  }
  unsigned sleepers() {
    std::lock_guard lock(mutex_);
    return sleepers_;
  }
  unsigned interrupts() {
    std::lock_guard lock(mutex_);
    return interrupts_;
  }
  std::size_t unharvested() {
    std::lock_guard lock(mutex_);
    return ready_.size();
  }

  std::size_t harvest(Packet* out, std::size_t capacity) override {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    while (n < capacity && !ready_.empty()) {
      out[n++] = ready_.front();
      ready_.pop_front();
    }
    return n;
  }
  bool in_flight() const override { return in_flight_.load(); }
  void wait(const platform::Clock::time_point* deadline) override {
    std::unique_lock lock(mutex_);
    ++sleepers_;
    changed_.notify_all();
    const auto bound = std::chrono::steady_clock::now() + kStepBound;
    const auto woken = [&] { return kicked_ || interrupted_; };
    if (deadline != nullptr) {
      changed_.wait_until(lock, std::min(bound, *deadline), woken);
    } else {
      changed_.wait_until(lock, bound, woken);
    }
    kicked_ = interrupted_ = false;  // an eventfd's count: read once
    --sleepers_;
    changed_.notify_all();
  }
  void interrupt() override {
    std::lock_guard lock(mutex_);
    interrupted_ = true;
    ++interrupts_;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Packet> ready_;
  std::atomic<bool> in_flight_{true};
  bool kicked_ = false, interrupted_ = false;
  unsigned sleepers_ = 0, interrupts_ = 0;
};

template <typename T>
T finish(std::future<T>& f) {
  if (f.wait_for(kStepBound) != std::future_status::ready) {
    ADD_FAILURE() << "a step overran its bound";
    std::abort();  // a thread is stuck in the port: nothing later could be trusted
  }
  return f.get();
}

std::unique_ptr<CompletionPort> port_of(unsigned concurrency) {
  return make_port(Backend::emulated,
                   {.concurrency = concurrency, .check_invariants = true, .list_timeline = true});
}

// Until `n` threads wait in the port (its list W, from the port's own lists); false when the
// bound passes first.
bool await_waiters(CompletionPort& port, std::uint32_t n) {
  const auto bound = std::chrono::steady_clock::now() + kStepBound;
  while (port.list_totals()->now.waiting != n) {
    if (std::chrono::steady_clock::now() > bound) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// `actor` ends up released with a slot and nothing to do (a GQCS(0) that timed out: 3c).
void hold_a_slot(PortActor& actor, CompletionPort& port) {
  auto f = async_remove(actor, port, 0ms);
  EXPECT_EQ(finish(f).status, RemoveStatus::timeout);
}

// C = M, nobody watching: an I/O that completed before a post comes out before it.
TEST(ScriptedFeed, AnIoCompletionComesOutBeforeALaterPost) {
  auto port = port_of(1);
  ScriptedFeed feed;
  ASSERT_TRUE(port->attach_feed(&feed));
  PortActor r;
  hold_a_slot(r, *port);
  feed.complete(1);
  ASSERT_TRUE(port->post({.key = 2}));
  auto first = async_remove(r, *port, 0ms);
  EXPECT_EQ(finish(first).packet.key, 1u);
  auto second = async_remove(r, *port, 0ms);
  EXPECT_EQ(finish(second).packet.key, 2u);
  EXPECT_EQ(port->counters().invariant_violations, 0u);
  port->attach_feed(nullptr);
}

// depth() and counters() count a completed I/O as the queued packet it is.
TEST(ScriptedFeed, DepthCountsACompletedIo) {
  auto port = port_of(1);
  ScriptedFeed feed;
  port->attach_feed(&feed);
  PortActor r;
  hold_a_slot(r, *port);
  feed.complete(1);
  EXPECT_EQ(port->depth(), std::optional<std::size_t>(1));
  feed.complete(2);
  EXPECT_EQ(port->counters().queued, 2u);
  EXPECT_EQ(feed.unharvested(), 0u);
  port->attach_feed(nullptr);
}

// The watcher asleep on the feed (appointed while C < M, left there when C returned to M)
// hides nothing: a running thread's GQCS(0) takes the completion without waiting for it.
TEST(ScriptedFeed, ASleepingWatcherHidesNoCompletionFromAZeroTimeoutRemove) {
  auto port = port_of(1);
  ScriptedFeed feed;
  port->attach_feed(&feed);
  PortActor w;
  PortActor r;
  auto waited = async_remove(w, *port, kFeedWait);
  ASSERT_TRUE(feed.await_sleepers(1)) << "the waiter did not watch the feed";
  hold_a_slot(r, *port);  // C = M; the watcher sleeps on (it resigns when it next wakes)
  feed.complete(1);
  auto got = async_remove(r, *port, 0ms);
  const RemoveOutcome outcome = finish(got);
  EXPECT_EQ(outcome.status, RemoveStatus::ok);
  EXPECT_EQ(outcome.packet.key, 1u);
  EXPECT_EQ(feed.sleepers(), 1u) << "the watcher was woken for a packet it did not get";
  port->close();
  EXPECT_EQ(finish(waited).status, RemoveStatus::abandoned);
  EXPECT_EQ(port->counters().invariant_violations, 0u);
}

// A handler that blocks releases the newest waiter for a completion that is ready, while the
// (older) watcher sleeps on the feed and never gets a CPU.
TEST(ScriptedFeed, ABlockReleasesTheNewestWaiterWhileTheWatcherSleeps) {
  auto port = port_of(1);
  ScriptedFeed feed;
  port->attach_feed(&feed);
  PortActor older, newer, r;
  auto older_got = async_remove(older, *port, kFeedWait);
  ASSERT_TRUE(feed.await_sleepers(1));
  auto newer_got = async_remove(newer, *port, kFeedWait);
  ASSERT_TRUE(await_waiters(*port, 2)) << "the newer waiter did not reach the port";
  hold_a_slot(r, *port);
  EXPECT_EQ(feed.sleepers(), 1u) << "the newer waiter waits on its futex, not on the feed";
  feed.complete(7);
  auto blocked = r.run([&] {
    BlockingRegion region;
    return newer_got.wait_for(kStepBound) == std::future_status::ready;
  });
  EXPECT_TRUE(finish(blocked)) << "the block released nobody for the completion";
  const RemoveOutcome outcome = finish(newer_got);
  EXPECT_EQ(outcome.status, RemoveStatus::ok);
  EXPECT_EQ(outcome.packet.key, 7u);
  EXPECT_EQ(older_got.wait_for(0s), std::future_status::timeout) << "the older waiter took it";
  port->close();
  EXPECT_EQ(finish(older_got).status, RemoveStatus::abandoned);
  EXPECT_EQ(port->counters().invariant_violations, 0u);
}

// A post reaches the watcher asleep on the feed through the feed's interrupt.
TEST(ScriptedFeed, APostReachesASleepingWatcher) {
  auto port = port_of(1);
  ScriptedFeed feed;
  port->attach_feed(&feed);
  PortActor w;
  auto got = async_remove(w, *port, kFeedWait);
  ASSERT_TRUE(feed.await_sleepers(1));
  ASSERT_TRUE(port->post({.key = 5}));
  const RemoveOutcome outcome = finish(got);
  EXPECT_EQ(outcome.status, RemoveStatus::ok);
  EXPECT_EQ(outcome.packet.key, 5u);
  EXPECT_EQ(feed.interrupts(), 1u);
  port->attach_feed(nullptr);
}

// A completion the watcher finds when it wakes goes by the insert rule: to itself, the newest.
TEST(ScriptedFeed, TheWokenWatcherTakesTheCompletion) {
  auto port = port_of(2);
  ScriptedFeed feed;
  port->attach_feed(&feed);
  PortActor w;
  auto got = async_remove(w, *port, kFeedWait);
  ASSERT_TRUE(feed.await_sleepers(1));
  feed.complete(9);
  feed.wake_watcher();
  const RemoveOutcome outcome = finish(got);
  EXPECT_EQ(outcome.packet.key, 9u);
  EXPECT_EQ(feed.interrupts(), 0u) << "a watcher that takes its own completion needs no doorbell";
  port->attach_feed(nullptr);
}

// A batch remove handed one packet also takes what had completed meanwhile, in order.
TEST(ScriptedFeed, ABatchRemoveAfterAHandoffTakesTheCompletedIo) {
  auto port = port_of(1);
  ScriptedFeed feed;
  feed.set_in_flight(false);  // nothing in flight yet: the waiter sleeps on its futex
  port->attach_feed(&feed);
  PortActor w;
  auto got = w.run([&] {
    std::array<Packet, 4> out{};
    std::size_t removed = 0;
    const RemoveStatus status = port->remove_batch(out, removed, kFeedWait);
    std::vector<std::uintptr_t> keys;
    for (std::size_t i = 0; i < removed; ++i) keys.push_back(out[i].key);
    return std::pair{status, keys};
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(feed.sleepers(), 0u);
  feed.set_in_flight(true);
  feed.complete(2);
  feed.complete(3);
  ASSERT_TRUE(port->post({.key = 1}));
  const auto [status, keys] = finish(got);
  EXPECT_EQ(status, RemoveStatus::ok);
  EXPECT_EQ(keys, (std::vector<std::uintptr_t>{2, 3, 1}));
  port->attach_feed(nullptr);
}

// Close with I/O in flight and the watcher asleep on the feed: it wakes, abandoned.
TEST(ScriptedFeed, CloseWakesTheWatcher) {
  auto port = port_of(1);
  ScriptedFeed feed;
  port->attach_feed(&feed);
  PortActor w;
  auto got = async_remove(w, *port, kFeedWait);
  ASSERT_TRUE(feed.await_sleepers(1));
  port->close();
  EXPECT_EQ(finish(got).status, RemoveStatus::abandoned);
  EXPECT_TRUE(feed.await_sleepers(0));
}

// Detaching returns only once the watcher has left the feed, so the feed may be destroyed at
// once; the waiter then waits on its futex and still gets a post.
TEST(ScriptedFeed, DetachWaitsForTheWatcherToLeave) {
  auto port = port_of(1);
  auto feed = std::make_unique<ScriptedFeed>();
  port->attach_feed(feed.get());
  PortActor w;
  auto got = async_remove(w, *port, kFeedWait);
  ASSERT_TRUE(feed->await_sleepers(1));
  port->attach_feed(nullptr);
  EXPECT_EQ(feed->sleepers(), 0u);
  feed.reset();  // a later use would be a use after free (ASan, TSan)
  ASSERT_TRUE(port->post({.key = 4}));
  EXPECT_EQ(finish(got).packet.key, 4u);
}

// A feed attached under a waiter that could be handed a completion gets a watcher at once.
TEST(ScriptedFeed, AttachingUnderAWaiterAppointsAWatcher) {
  auto port = port_of(1);
  PortActor w;
  auto got = async_remove(w, *port, kFeedWait);
  std::this_thread::sleep_for(50ms);  // w waits in the port, no feed yet
  ScriptedFeed feed;
  port->attach_feed(&feed);
  EXPECT_TRUE(feed.await_sleepers(1)) << "no watcher after attaching";
  feed.complete(6);
  feed.wake_watcher();
  EXPECT_EQ(finish(got).packet.key, 6u);
  port->attach_feed(nullptr);
}

}  // namespace
}  // namespace iocpbench::port
