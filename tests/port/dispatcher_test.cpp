// The comparison dispatchers (condvar, asio) are not IOCPs and are not in the conformance suite
// (`iocpbench probe --port condvar|asio` shows which IOCP properties they lack). This checks what
// every dispatcher does promise: each packet is delivered exactly once however many threads
// post and remove, a remove with a timeout returns `timeout` when nothing comes, and close()
// wakes waiters and makes later calls fail. The emulated port runs the same checks as a
// reference. Every wait is bounded; nothing asserts a timing.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "port/completion_port.hpp"

namespace iocpbench::port {
namespace {

using namespace std::chrono_literals;
constexpr Timeout kDispatcherBound = 5000ms;  // "forever", bounded

class Dispatcher : public ::testing::TestWithParam<Backend> {
 protected:
  std::unique_ptr<CompletionPort> make(unsigned concurrency) {
    auto port = make_port(GetParam(), {.concurrency = concurrency});
    EXPECT_NE(port, nullptr);
    return port;
  }
};

TEST_P(Dispatcher, ReportsItsNameAndConcurrency) {
  auto port = make(3);
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->backend(), to_string(GetParam()));
  EXPECT_EQ(port->concurrency(), 3u);
  EXPECT_GE(make(0)->concurrency(), 1u);  // 0 = the logical CPU count
}

TEST_P(Dispatcher, EveryPacketExactlyOnceWithSeveralPostersAndRemovers) {
  constexpr unsigned kPosters = 3, kRemovers = 4, kPerPoster = 20000;
  constexpr unsigned kTotal = kPosters * kPerPoster;
  auto port = make(2);
  ASSERT_NE(port, nullptr);
  std::vector<std::atomic<unsigned>> seen(kTotal);
  std::atomic<unsigned> removed{0};
  std::atomic<bool> bad_status{false};

  std::vector<std::thread> removers;
  for (unsigned r = 0; r < kRemovers; ++r) {
    removers.emplace_back([&] {
      Packet p;
      while (removed.load() < kTotal) {
        const RemoveStatus s = port->remove(p, 100ms);
        if (s == RemoveStatus::timeout) continue;
        if (s == RemoveStatus::abandoned || s == RemoveStatus::invalid_handle) return;  // closed
        if (s != RemoveStatus::ok) {
          bad_status = true;
          return;
        }
        seen[p.key].fetch_add(1);
        removed.fetch_add(1);
      }
    });
  }
  std::vector<std::thread> posters;
  for (unsigned q = 0; q < kPosters; ++q) {
    posters.emplace_back([&, q] {
      for (unsigned i = 0; i < kPerPoster; ++i) {
        ASSERT_TRUE(port->post({.bytes = i, .key = q * kPerPoster + i}));
      }
    });
  }
  for (auto& t : posters) t.join();
  const auto give_up = std::chrono::steady_clock::now() + 60s;
  while (removed.load() < kTotal && !bad_status && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(1ms);
  }
  port->close();  // frees removers still waiting if a packet went missing
  for (auto& t : removers) t.join();

  EXPECT_FALSE(bad_status);
  EXPECT_EQ(removed.load(), kTotal);
  unsigned wrong = 0;
  for (auto& count : seen) wrong += count.load() != 1 ? 1 : 0;
  EXPECT_EQ(wrong, 0u) << "packets lost or delivered twice";
}

TEST_P(Dispatcher, SingleThreadKeepsFifoOrder) {
  auto port = make(1);
  for (std::uintptr_t k = 1; k <= 100; ++k) ASSERT_TRUE(port->post({.key = k}));
  for (std::uintptr_t k = 1; k <= 100; ++k) {
    Packet p;
    ASSERT_EQ(port->remove(p, kDispatcherBound), RemoveStatus::ok);
    EXPECT_EQ(p.key, k);
  }
}

TEST_P(Dispatcher, FailedIoStillReturnsItsPacket) {
  auto port = make(1);
  ASSERT_TRUE(port->post({.status = 5, .key = 9}));
  Packet p;
  EXPECT_EQ(port->remove(p, kDispatcherBound), RemoveStatus::io_failed);
  EXPECT_EQ(p.key, 9u);
  EXPECT_EQ(p.status, 5u);
}

TEST_P(Dispatcher, TimeoutsWithNothingQueued) {
  auto port = make(1);
  Packet p;
  EXPECT_EQ(port->remove(p, 0ms), RemoveStatus::timeout);
  EXPECT_EQ(port->remove(p, 20ms), RemoveStatus::timeout);
  std::size_t removed = 7;
  std::vector<Packet> batch(4);
  EXPECT_EQ(port->remove_batch(batch, removed, 20ms), RemoveStatus::timeout);
  EXPECT_EQ(removed, 0u);
  // Still usable after timing out.
  ASSERT_TRUE(port->post({.key = 1}));
  EXPECT_EQ(port->remove(p, kDispatcherBound), RemoveStatus::ok);
  EXPECT_EQ(p.key, 1u);
}

TEST_P(Dispatcher, WaiterIsWokenByALaterPost) {
  auto port = make(1);
  auto waiter = std::async(std::launch::async, [&] {
    Packet p;
    const RemoveStatus s = port->remove(p, kDispatcherBound);
    return std::make_pair(s, p.key);
  });
  std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(port->post({.key = 77}));
  ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
  const auto [status, key] = waiter.get();
  EXPECT_EQ(status, RemoveStatus::ok);
  EXPECT_EQ(key, 77u);
}

TEST_P(Dispatcher, BatchTakesUpToItsSizeAndRejectsAnEmptyOne) {
  auto port = make(1);
  for (std::uintptr_t k = 1; k <= 5; ++k) ASSERT_TRUE(port->post({.key = k}));
  std::vector<Packet> batch(3);
  std::size_t removed = 0;
  ASSERT_EQ(port->remove_batch(batch, removed, kDispatcherBound), RemoveStatus::ok);
  ASSERT_EQ(removed, 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(batch[i].key, i + 1);
  ASSERT_EQ(port->remove_batch(batch, removed, kDispatcherBound), RemoveStatus::ok);
  ASSERT_EQ(removed, 2u);
  EXPECT_EQ(batch[0].key, 4u);
  EXPECT_EQ(batch[1].key, 5u);
  EXPECT_EQ(port->remove_batch(std::span<Packet>{}, removed, kDispatcherBound),
            RemoveStatus::invalid_parameter);
}

TEST_P(Dispatcher, CloseWakesWaitersAndLaterCallsFail) {
  auto port = make(2);
  std::vector<std::future<RemoveStatus>> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.push_back(std::async(std::launch::async, [&] {
      Packet p;
      return port->remove(p, kDispatcherBound);
    }));
  }
  std::this_thread::sleep_for(30ms);
  port->close();
  for (auto& w : waiters) {
    ASSERT_EQ(w.wait_for(10s), std::future_status::ready) << "close did not wake a waiter";
    const RemoveStatus s = w.get();
    // A thread that had not reached its wait before close gets invalid_handle instead.
    EXPECT_TRUE(s == RemoveStatus::abandoned || s == RemoveStatus::invalid_handle)
        << to_string(s);
  }
  Packet p;
  EXPECT_EQ(port->remove(p, 0ms), RemoveStatus::invalid_handle);
  EXPECT_EQ(port->remove(p, kDispatcherBound), RemoveStatus::invalid_handle);
  std::size_t removed = 0;
  std::vector<Packet> batch(2);
  EXPECT_EQ(port->remove_batch(batch, removed, kDispatcherBound), RemoveStatus::invalid_handle);
  EXPECT_FALSE(port->post({.key = 1}));
  port->close();  // idempotent
}

TEST_P(Dispatcher, CloseDiscardsQueuedPackets) {
  auto port = make(1);
  for (std::uintptr_t k = 1; k <= 3; ++k) ASSERT_TRUE(port->post({.key = k}));
  port->close();
  Packet p;
  EXPECT_EQ(port->remove(p, 0ms), RemoveStatus::invalid_handle);
}

INSTANTIATE_TEST_SUITE_P(Backends, Dispatcher,
                         ::testing::Values(Backend::condvar, Backend::asio, Backend::emulated),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

}  // namespace
}  // namespace iocpbench::port
