// The pool's inline completions (Workload::completes_inline; Windows' skip on success): a
// completion that a worker's own after_handler reached at once, with no packet, is handled next
// on the same thread exactly as a packet (the workload's part, the records, after_handler),
// counted as a completion and not as a packet; after kMaxInlineRun in a row the context offers
// no place, so the workload posts the next one into the port and the thread goes back to it. A
// workload that does not complete inline never sees a place (the Linux hot path). Real emulated
// port, one worker; nothing asserts a duration, every wait is bounded.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "../support/wait_for.hpp"
#include "engine/pool.hpp"
#include "engine/workload.hpp"
#include "metrics/usage.hpp"
#include "port/completion_port.hpp"

namespace {

using namespace iocpbench;
using namespace std::chrono_literals;

constexpr std::uint32_t kInline = 1;  // packet.bytes of a completion handed back inline

// Each completion's after_handler "re-issues" its chain: while the chain has completions left,
// the next one completes at once: handed back inline where the context offers a place, else
// posted into the port as the transport would.
class ChainWorkload final : public workloads::Workload {
 public:
  ChainWorkload(port::CompletionPort& port, bool inlines, unsigned chain)
      : port_(port), inlines_(inlines), chain_(chain) {}
  std::string_view name() const override { return "chain"; }
  void open(const workloads::RunEnv&) override {}
  void start() override {}
  bool completes_inline() const override { return inlines_; }
  workloads::Completion on_packet(const port::Packet& packet, workloads::WorkerContext&) override {
    std::lock_guard lock(mutex_);
    ++handled_;
    run_ = packet.bytes == kInline ? run_ + 1 : 0;
    longest_run_ = std::max(longest_run_, run_);
    workloads::Completion c;
    c.t_start_ns = 1;  // long before the handler ends: the pool records a latency for each
    c.bytes = 1;
    return c;
  }
  void after_handler(const port::Packet&, const workloads::Completion&, std::uint64_t,
                     workloads::WorkerContext& worker) override {
    std::lock_guard lock(mutex_);
    if (issued_ == chain_) return;
    ++issued_;
    workloads::InlineCompletion* place = worker.inline_completion;
    if (place == nullptr) {
      ++posted_;
      port_.post(port::Packet{});  // bytes 0: a packet
      return;
    }
    place->packet = port::Packet{};
    place->packet.bytes = kInline;
    place->ready = true;
  }
  bool drain(std::chrono::steady_clock::time_point) override { return true; }
  void close() override {}
  nlohmann::json stats(double) const override { return nlohmann::json::object(); }

  unsigned handled() const {
    std::lock_guard lock(mutex_);
    return handled_;
  }
  unsigned posted() const {
    std::lock_guard lock(mutex_);
    return posted_;
  }
  unsigned longest_run() const {
    std::lock_guard lock(mutex_);
    return longest_run_;
  }

 private:
  port::CompletionPort& port_;
  const bool inlines_;
  const unsigned chain_;
  mutable std::mutex mutex_;
  unsigned handled_ = 0, issued_ = 0, posted_ = 0, run_ = 0, longest_run_ = 0;
};

using test_support::wait_for;

struct ChainBench {
  ChainBench(bool inlines, unsigned chain)
      : port(port::make_port(port::Backend::emulated, {.concurrency = 1})),
        workload(*port, inlines, chain) {}
  std::unique_ptr<port::CompletionPort> port;
  ChainWorkload workload;
  metrics::RoleRegistry roles;
  std::atomic<int> phase{workloads::kMeasuring};

  // One packet starts the chain; one worker handles it and every completion after it.
  engine::WorkerStats run(unsigned expected) {
    EXPECT_TRUE(port->post(port::Packet{}));
    engine::Pool pool({port.get()}, workload, engine::HandlerSpec{}, 1, roles, phase);
    pool.start();
    EXPECT_TRUE(wait_for([&] { return workload.handled() == expected; })) << workload.handled();
    phase.store(workloads::kStopping);
    pool.stop();
    return pool.stats().front();
  }
};

TEST(InlineCompletions, AreHandledOnTheThreadAsCompletionsNotPackets) {
  ChainBench b(true, 10);
  const engine::WorkerStats s = b.run(11);
  EXPECT_EQ(b.workload.posted(), 0u);
  EXPECT_EQ(s.packets_total, 1u) << "the one packet posted";
  EXPECT_EQ(s.inline_total, 10u);
  EXPECT_EQ(s.handled_total, 11u);
  EXPECT_EQ(s.completions, 11u) << "each inline completion counts as one of the run";
  EXPECT_EQ(s.bytes, 11u);
  EXPECT_EQ(s.latency.count(), 11u) << "and is timed like a packet";
  EXPECT_EQ(b.workload.longest_run(), 10u);
}

TEST(InlineCompletions, ARunLongerThanTheLimitGoesBackToThePort) {
  const unsigned chain = 3 * engine::kMaxInlineRun;
  ChainBench b(true, chain);
  const engine::WorkerStats s = b.run(chain + 1);
  EXPECT_EQ(b.workload.longest_run(), engine::kMaxInlineRun);
  EXPECT_GE(b.workload.posted(), 2u);
  EXPECT_EQ(s.packets_total, 1u + b.workload.posted()) << "each posted one is a packet";
  EXPECT_EQ(s.inline_total + s.packets_total, chain + 1u);
  EXPECT_EQ(s.completions, chain + 1u);
}

TEST(InlineCompletions, AWorkloadThatDoesNotCompleteInlineNeverGetsAPlace) {
  ChainBench b(false, 5);
  const engine::WorkerStats s = b.run(6);
  EXPECT_EQ(b.workload.posted(), 5u) << "every completion went through the port";
  EXPECT_EQ(s.packets_total, 6u);
  EXPECT_EQ(s.inline_total, 0u);
  EXPECT_EQ(s.completions, 6u);
}

}  // namespace
