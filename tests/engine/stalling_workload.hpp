#pragma once
// A test-only wrapper around a real workload that injects a stall after `after` packets
// (PointSpec::wrap_workload): it stops resubmitting (its after_handler does nothing), or its
// handler does not return until the run is stopping.

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "engine/workload.hpp"

namespace iocpbench::test {

enum class Stall { stop_resubmitting, hang_in_handler };

class StallingWorkload final : public workloads::Workload {
 public:
  StallingWorkload(std::unique_ptr<workloads::Workload> inner, Stall how, std::uint64_t after)
      : inner_(std::move(inner)), how_(how), after_(after) {}

  std::string_view name() const override { return inner_->name(); }
  void open(const workloads::RunEnv& env) override {
    phase_ = env.phase;
    inner_->open(env);
  }
  void start() override { inner_->start(); }
  workloads::Completion on_packet(const port::Packet& packet,
                                  workloads::WorkerContext& worker) override {
    const bool stalled = seen_.fetch_add(1) >= after_;
    if (stalled && how_ == Stall::hang_in_handler) {
      while (phase_->load() != workloads::kStopping) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    return inner_->on_packet(packet, worker);
  }
  void after_handler(const port::Packet& packet, const workloads::Completion& c,
                     std::uint64_t t_done_ns, workloads::WorkerContext& worker) override {
    if (how_ == Stall::stop_resubmitting && seen_.load() > after_) return;  // swallowed
    inner_->after_handler(packet, c, t_done_ns, worker);
  }
  bool drain(std::chrono::steady_clock::time_point deadline) override {
    return inner_->drain(deadline);
  }
  void close() override { inner_->close(); }
  nlohmann::json stats(double window_s) const override { return inner_->stats(window_s); }
  std::uint64_t errors() const override { return inner_->errors(); }
  std::string stall_report() const override { return inner_->stall_report(); }
  std::uint64_t packets_posted() const override { return inner_->packets_posted(); }

 private:
  std::unique_ptr<workloads::Workload> inner_;
  Stall how_;
  std::uint64_t after_;
  const std::atomic<int>* phase_ = nullptr;
  std::atomic<std::uint64_t> seen_{0};
};

// For PointSpec::wrap_workload.
inline auto stalling(Stall how, std::uint64_t after) {
  return [how, after](std::unique_ptr<workloads::Workload> inner)
             -> std::unique_ptr<workloads::Workload> {
    return std::make_unique<StallingWorkload>(std::move(inner), how, after);
  };
}

}  // namespace iocpbench::test
