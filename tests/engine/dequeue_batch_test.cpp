// The pool's dequeue batch (harness/engine/dequeue_batch.hpp, --dequeue-batch) on every port
// backend this OS builds (the emulated port, the kernel's IOCP under Windows or Wine, the
// condvar and Asio dispatchers): a worker takes up to b queued packets in one remove and handles
// each in order; a stop packet inside a batch is the thread's own, and any further one goes back
// to the port for another thread; the removes' histogram adds up. Packets are posted before the
// pool starts, so a lone worker's removes are determined by the queue alone; nothing asserts a
// duration, and every wait is bounded (ctest's TIMEOUT, a deadline per wait).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "../support/wait_for.hpp"
#include "engine/dequeue_batch.hpp"
#include "engine/pool.hpp"
#include "engine/run_point.hpp"
#include "engine/workload.hpp"
#include "metrics/usage.hpp"
#include "port/completion_port.hpp"
#include "results/dequeue_batch_json.hpp"

namespace {

using namespace iocpbench;
using namespace std::chrono_literals;

// Records the key of every packet the pool hands it, in order.
class RecordingWorkload final : public workloads::Workload {
 public:
  std::string_view name() const override { return "recording"; }
  void open(const workloads::RunEnv&) override {}
  void start() override {}
  workloads::Completion on_packet(const port::Packet& packet, workloads::WorkerContext&) override {
    std::lock_guard lock(mutex_);
    keys_.push_back(packet.key);
    return {};
  }
  void after_handler(const port::Packet&, const workloads::Completion&, std::uint64_t,
                     workloads::WorkerContext&) override {}
  bool drain(std::chrono::steady_clock::time_point) override { return true; }
  void close() override {}
  nlohmann::json stats(double) const override { return nlohmann::json::object(); }
  std::vector<std::uintptr_t> keys() const {
    std::lock_guard lock(mutex_);
    return keys_;
  }
  std::size_t handled() const { return keys().size(); }

 private:
  mutable std::mutex mutex_;
  std::vector<std::uintptr_t> keys_;
};

using test_support::wait_for;

struct BatchBench {
  explicit BatchBench(port::Backend backend, unsigned concurrency)
      : port(port::make_port(backend, {.concurrency = concurrency})) {}
  std::unique_ptr<port::CompletionPort> port;
  RecordingWorkload workload;
  metrics::RoleRegistry roles;
  std::atomic<int> phase{workloads::kMeasuring};

  void post_keys(const std::vector<std::uintptr_t>& keys) {
    for (const std::uintptr_t key : keys) {
      port::Packet p;
      p.key = key;
      ASSERT_TRUE(port->post(p));
    }
  }
};

engine::HandlerSpec no_work() { return engine::HandlerSpec{}; }

class DequeueBatchOnPort : public ::testing::TestWithParam<port::Backend> {
 protected:
  void SetUp() override {
    if (!port::backend_available(GetParam())) GTEST_SKIP() << GetParam() << " is not built here";
  }
};

std::vector<std::uintptr_t> keys_from(std::uintptr_t first, std::size_t count) {
  std::vector<std::uintptr_t> keys(count);
  std::iota(keys.begin(), keys.end(), first);
  return keys;
}

// 20 packets queued, one worker, b = 8: removes of 8, 8 and 4, every packet handled in order.
TEST_P(DequeueBatchOnPort, OneWorkerTakesUpToTheBatchInOneRemoveAndHandlesEveryPacketInOrder) {
  BatchBench b(GetParam(), 1);
  b.post_keys(keys_from(1, 20));
  engine::Pool pool({b.port.get()}, b.workload, no_work(), 1, b.roles, b.phase, std::nullopt, 8);
  pool.start();
  ASSERT_TRUE(wait_for([&] { return b.workload.handled() == 20; })) << b.workload.handled();
  b.phase.store(workloads::kStopping);  // the stop packet's remove is not the window's
  pool.stop();
  EXPECT_EQ(b.workload.keys(), keys_from(1, 20));
  const engine::WorkerStats& s = pool.stats().front();
  EXPECT_EQ(s.batches.removes(), 3u);
  EXPECT_EQ(s.batches.packets(), 20u);
  const auto buckets = s.batches.buckets();
  ASSERT_EQ(buckets.size(), 8u);  // k = 1..8, one each
  EXPECT_EQ(buckets[7].removes, 2u);
  EXPECT_EQ(buckets[3].removes, 1u);
  EXPECT_EQ(s.stop_packets, 1u);
  EXPECT_EQ(s.stop_packets_reposted, 0u);
}

// A batch holding [P1, stop, P2, stop, P3]: the first stop is the worker's own, the second goes
// back to the port, and P1..P3 are all handled (P2 and P3 after the stop) before it exits.
TEST_P(DequeueBatchOnPort, AStopInsideABatchEndsTheThreadAfterItsOtherPacketsAndRepostsTheNext) {
  BatchBench b(GetParam(), 1);
  const std::uintptr_t stop = workloads::kStopKey;
  b.post_keys({1, stop, 2, stop, 3});
  engine::Pool pool({b.port.get()}, b.workload, no_work(), 1, b.roles, b.phase, std::nullopt, 8);
  pool.start();
  ASSERT_TRUE(wait_for([&] { return b.workload.handled() == 3; })) << b.workload.handled();
  b.phase.store(workloads::kStopping);
  pool.stop();  // its stop packet finds the thread gone: it stays in the port
  EXPECT_EQ(b.workload.keys(), (std::vector<std::uintptr_t>{1, 2, 3}));
  const engine::WorkerStats& s = pool.stats().front();
  EXPECT_EQ(s.stop_packets, 1u);
  EXPECT_EQ(s.stop_packets_reposted, 1u);
  EXPECT_EQ(s.packets_total, 3u);
  EXPECT_EQ(s.batches.removes(), 1u) << "the thread removed once and never again";
  EXPECT_EQ(s.batches.buckets()[4].removes, 1u);
  // The reposted stop and stop()'s own: nobody took either (where the backend can tell).
  if (const auto depth = b.port->depth()) {
    EXPECT_EQ(*depth, 2u);
  }
}

// Many threads, batches, a queue still full when stop() posts: every thread takes exactly one
// stop packet (a batch holding several posts the rest back) and every packet is handled once.
TEST_P(DequeueBatchOnPort, EveryThreadTakesExactlyOneStopPacketWhenBatchesHoldSeveral) {
  BatchBench b(GetParam(), 2);
  engine::Pool pool({b.port.get()}, b.workload, no_work(), 6, b.roles, b.phase, std::nullopt, 4);
  pool.start();
  b.post_keys(keys_from(1, 3000));
  b.phase.store(workloads::kStopping);
  pool.stop();  // returns only if every thread took a stop packet
  EXPECT_EQ(b.workload.handled(), 3000u);
  std::uint64_t stops = 0, packets = 0;
  for (const auto& s : pool.stats()) {
    stops += s.stop_packets;
    packets += s.packets_total;
    EXPECT_EQ(s.remove_failures, 0u);
  }
  EXPECT_EQ(stops, 6u);
  EXPECT_EQ(packets, 3000u);
}

INSTANTIATE_TEST_SUITE_P(Backends, DequeueBatchOnPort,
                         ::testing::Values(port::Backend::emulated, port::Backend::win32,
                                           port::Backend::condvar, port::Backend::asio,
                                           port::Backend::emulated_fifo_wakeup),
                         [](const auto& backend) {
                           std::string name(port::to_string(backend.param));
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

TEST(BatchSizes, ExactCountsUpToSixteenAndPowersOfTwoAbove) {
  engine::BatchSizes small(3);
  small.record(1);
  small.record(3);
  small.record(3);
  small.record(0);  // took nothing: not counted
  const auto s = small.buckets();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[2].min_packets, 3u);
  EXPECT_EQ(s[2].removes, 2u);
  EXPECT_EQ(small.removes(), 3u);
  EXPECT_EQ(small.packets(), 7u);

  engine::BatchSizes large(100);
  for (unsigned k = 1; k <= 100; ++k) large.record(k);
  const auto l = large.buckets();
  ASSERT_EQ(l.size(), 7u);  // 1, 2-3, 4-7, 8-15, 16-31, 32-63, 64-100
  EXPECT_EQ(l[1].min_packets, 2u);
  EXPECT_EQ(l[1].max_packets, 3u);
  EXPECT_EQ(l[6].min_packets, 64u);
  EXPECT_EQ(l[6].max_packets, 100u);
  EXPECT_EQ(l[6].removes, 37u);
  std::uint64_t removes = 0;
  for (const auto& bucket : l) {
    EXPECT_EQ(bucket.removes, bucket.max_packets - bucket.min_packets + 1);
    removes += bucket.removes;
  }
  EXPECT_EQ(removes, large.removes());
  EXPECT_EQ(engine::BatchSizes(1024).buckets().size(), 11u);
  EXPECT_EQ(engine::BatchSizes(1024).buckets().back().min_packets, 1024u);
  EXPECT_THROW(engine::BatchSizes(0), std::invalid_argument);
  EXPECT_THROW(engine::BatchSizes(1025), std::invalid_argument);
}

engine::PointSpec post_point(unsigned batch) {
  engine::PointSpec spec;
  spec.workload = WorkloadKind::post;
  spec.workload_params = iocpbench::workloads::parse_workload_params(spec.workload, {{"posters", 1}, {"in_flight", 64}});
  spec.port = port::Backend::emulated;
  spec.concurrency = {"2", 0, 2};
  spec.concurrency_value = 2;
  spec.pool = core::CountSpec{"4", 0, 4};
  spec.pool_value = 4;
  spec.dequeue_batch = {std::to_string(batch), 0, static_cast<long>(batch)};
  spec.dequeue_batch_value = batch;
  spec.work_us = 5;
  spec.duration_s = 0.2;
  spec.warmup_s = 0.05;
  return spec;
}

// A real run: the histogram's removes add up to the window's removes, and every thread still
// takes exactly one stop packet.
TEST(RunPoint, ARunRecordsItsBatchAndTheHistogramAddsUpToItsRemoves) {
  for (const unsigned batch : {1u, 8u}) {
    const engine::RunResult r = engine::run_point(post_point(batch), nullptr);
    ASSERT_GT(r.ops, 0u);
    const nlohmann::json j = results::dequeue_batch_json(r.dequeue_batch);
    EXPECT_EQ(j.at("requested").get<unsigned>(), batch);
    std::uint64_t removes = 0, at_least = 0;
    for (const auto& bucket : j.at("histogram")) {
      removes += bucket.at("removes").get<std::uint64_t>();
      at_least += bucket.at("removes").get<std::uint64_t>() * bucket.at("min_packets").get<std::uint64_t>();
    }
    EXPECT_EQ(removes, j.at("removes").get<std::uint64_t>()) << j.dump();
    EXPECT_LE(at_least, j.at("packets").get<std::uint64_t>()) << j.dump();
    EXPECT_GT(j.at("packets").get<std::uint64_t>(), 0u);
    if (batch == 1) {
      EXPECT_EQ(j.at("packets").get<std::uint64_t>(), j.at("removes").get<std::uint64_t>()) << j.dump();
    }
    EXPECT_EQ(r.stop_packets_taken, 4u) << "each thread took exactly one stop packet";
  }
}

}  // namespace
