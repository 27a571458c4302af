// The emulated port's invariant checker (PortOptions::check_invariants) must be able to fire:
// the conformance suite's and the stress test's "no violations" mean something only if a port
// that breaks the invariant is caught. Each case runs one script on the faithful port (no
// violation) and on a mutant that breaks one half of the invariant (port_rules.hpp).

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "platform/platform.hpp"
#include "port/blocking_region.hpp"
#include "port/completion_port.hpp"
#include "port/port_actor.hpp"
#include "step_bound.hpp"

namespace iocpbench::port {
namespace {

using namespace std::chrono_literals;
constexpr Timeout kWaitBound = 5000ms;  // "forever", bounded
constexpr auto kSettle = 40ms;

template <typename T>
void finish_step(std::future<T>& f) {
  ASSERT_EQ(f.wait_for(kStepBound), std::future_status::ready) << "a step overran its bound";
  f.get();
}

std::unique_ptr<CompletionPort> port_with(const PortRules& rules, bool check = true) {
  return make_port(Backend::emulated, {.concurrency = 1, .check_invariants = check, .rules = rules});
}

// M = 1, R running, `waiters` threads waiting, `packets` queued; R blocks for 100 ms.
std::uint64_t violations_when_running_thread_blocks(CompletionPort& port, unsigned waiters,
                                                    unsigned packets) {
  PortActor r;
  std::vector<std::unique_ptr<PortActor>> w;
  std::vector<std::future<RemoveOutcome>> got;
  auto fr = async_remove(r, port, 0ms);
  finish_step(fr);
  for (unsigned i = 0; i < waiters; ++i) {
    w.push_back(std::make_unique<PortActor>());
    got.push_back(async_remove(*w.back(), port, kWaitBound));
    std::this_thread::sleep_for(kSettle);
  }
  for (unsigned k = 1; k <= packets; ++k) port.post({.key = k});
  auto blocks = r.run([] {
    BlockingRegion region;
    platform::precise_sleep(100ms);
  });
  finish_step(blocks);
  std::this_thread::sleep_for(kSettle);
  const std::uint64_t violations = port.counters().invariant_violations;
  port.close();
  for (auto& f : got) finish_step(f);
  return violations;
}

// "Never a queued packet, a waiter and a free slot at once": a block that counts down without
// handing the queued packet to the waiter leaves exactly that state.
TEST(InvariantChecker, CatchesAQueuedPacketWithAWaiterAndAFreeSlot) {
  auto faithful = port_with({});
  EXPECT_EQ(violations_when_running_thread_blocks(*faithful, 1, 1), 0u);
  auto mutant = port_with({.block_activates = false});
  EXPECT_GE(violations_when_running_thread_blocks(*mutant, 1, 1), 1u);
}

// "C <= M outside the resume window": a block that releases every waiter hands out a slot
// it does not have.
TEST(InvariantChecker, CatchesAGatedHandoffOverTheLimit) {
  auto faithful = port_with({});
  EXPECT_EQ(violations_when_running_thread_blocks(*faithful, 2, 2), 0u);
  auto mutant = port_with({.block_releases_within_cap = false});
  EXPECT_GE(violations_when_running_thread_blocks(*mutant, 2, 2), 1u);
}

// The same half through the post path: without the cap, a second post to a second waiter
// takes C to 2 with M = 1.
TEST(InvariantChecker, CatchesAPostOverTheLimit) {
  for (const bool cap : {true, false}) {
    auto port = port_with({.concurrency_cap = cap});
    PortActor a, b;
    auto fa = async_remove(a, *port, kWaitBound);
    auto fb = async_remove(b, *port, kWaitBound);
    std::this_thread::sleep_for(kSettle);
    port->post({.key = 1});
    port->post({.key = 2});
    std::this_thread::sleep_for(kSettle);
    const std::uint64_t violations = port->counters().invariant_violations;
    port->close();
    finish_step(fa);
    finish_step(fb);
    if (cap) {
      EXPECT_EQ(violations, 0u);
    } else {
      EXPECT_GE(violations, 1u);
    }
  }
}

// The resume window is not a violation: the faithful port's over-limit script counts none.
TEST(InvariantChecker, TheResumeWindowIsNotAViolation) {
  auto port = port_with({});
  PortActor a, b;
  auto fb = async_remove(b, *port, kWaitBound);
  std::this_thread::sleep_for(kSettle);
  auto fa = async_remove(a, *port, kWaitBound);
  std::this_thread::sleep_for(kSettle);
  port->post({.key = 1});
  port->post({.key = 2});
  finish_step(fa);
  auto blocks = a.run([] {
    BlockingRegion region;
    platform::precise_sleep(200ms);
  });
  finish_step(fb);
  finish_step(blocks);  // A resumed while B runs: C = 2 > M = 1
  port->post({.key = 3});
  EXPECT_EQ(port->counters().max_active, 2u);
  EXPECT_EQ(port->counters().invariant_violations, 0u);
  port->close();
}

// Off (the default outside tests), nothing is counted even on a port that breaks the invariant.
TEST(InvariantChecker, OffCountsNothing) {
  auto port = port_with({.block_activates = false}, false);
  EXPECT_EQ(violations_when_running_thread_blocks(*port, 1, 1), 0u);
}

}  // namespace
}  // namespace iocpbench::port
