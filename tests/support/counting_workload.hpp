#pragma once
// A workload for pool tests: packets the test posts itself; it only counts what the pool hands
// it (`counted`: whether each counts as a completion in the run's totals; `io_pending`: whether
// its workers say they have I/O of their own in flight, as Linux's port path does).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/workload.hpp"

namespace iocpbench::test_support {

class CountingWorkload final : public workloads::Workload {
 public:
  explicit CountingWorkload(bool counted = false, bool io_pending = false)
      : counted_(counted), io_(io_pending) {}
  std::string_view name() const override { return "counting"; }
  void open(const workloads::RunEnv&) override {}
  void start() override {}
  workloads::Completion on_packet(const port::Packet&, workloads::WorkerContext&) override {
    handled.fetch_add(1, std::memory_order_relaxed);
    workloads::Completion c;
    c.counted = counted_;
    return c;
  }
  void after_handler(const port::Packet&, const workloads::Completion&, std::uint64_t,
                     workloads::WorkerContext&) override {}
  bool drain(std::chrono::steady_clock::time_point) override { return true; }
  void close() override {}
  nlohmann::json stats(double) const override { return nlohmann::json::object(); }
  port::WorkerIo* worker_io() const override { return &io_; }
  std::atomic<std::uint64_t> handled{0};

 private:
  // Every worker has I/O of its own in flight (or none), as the port path's transports say.
  struct PendingIo final : port::WorkerIo {
    explicit PendingIo(bool is_pending) : pending(is_pending) {}
    bool io_pending(unsigned) const override { return pending; }
    const bool pending;
  };
  bool counted_;
  mutable PendingIo io_;
};

}  // namespace iocpbench::test_support
