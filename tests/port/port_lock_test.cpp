// PortLock (harness/port/port_lock.hpp) on its own: mutual exclusion under sustained contention
// (the backoff path), a waiter that outlasts the spin and sleeps is woken by the unlock (the
// futex path), and try_lock. Real threads, real futexes; every wait is bounded.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "port/port_lock.hpp"

namespace iocpbench::port {
namespace {

using namespace std::chrono_literals;

constexpr auto kLockBound = 10s;  // "forever", bounded: a lock that loses a wake-up fails, not hangs

// Threads increment a plain counter under the lock and flag their presence inside it: a lost
// increment or two threads inside at once means the lock did not exclude.
TEST(PortLock, ExcludesUnderSustainedContention) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 100'000;
  PortLock lock;
  std::uint64_t counter = 0;  // guarded by `lock`, deliberately not atomic
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard guard(lock);
        if (inside.fetch_add(1, std::memory_order_relaxed) != 0) overlaps.fetch_add(1);
        ++counter;
        inside.fetch_sub(1, std::memory_order_relaxed);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(counter, std::uint64_t{kThreads} * kRounds);
}

// The holder keeps the lock far longer than the waiter's whole spin (1000 PAUSEs, tens of
// microseconds), so the waiter ends up asleep on the futex; the unlock must wake it.
TEST(PortLock, SleepingWaiterIsWokenByUnlock) {
  PortLock lock;
  lock.lock();
  std::atomic<bool> waiting{false};
  auto waiter = std::async(std::launch::async, [&] {
    waiting.store(true);
    lock.lock();
    lock.unlock();
    return true;
  });
  while (!waiting.load()) std::this_thread::yield();
  EXPECT_EQ(waiter.wait_for(100ms), std::future_status::timeout) << "got a held lock";
  lock.unlock();
  ASSERT_EQ(waiter.wait_for(kLockBound), std::future_status::ready) << "the unlock lost the wake-up";
  EXPECT_TRUE(waiter.get());
  EXPECT_TRUE(lock.try_lock()) << "the lock stayed held after both released it";
  lock.unlock();
}

TEST(PortLock, TryLockFailsWhileHeld) {
  PortLock lock;
  ASSERT_TRUE(lock.try_lock());
  auto other = std::async(std::launch::async, [&] { return lock.try_lock(); });
  ASSERT_EQ(other.wait_for(kLockBound), std::future_status::ready);
  EXPECT_FALSE(other.get());
  lock.unlock();
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

}  // namespace
}  // namespace iocpbench::port
