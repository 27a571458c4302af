#pragma once
// A thread that runs scripted steps on request: the probes and the conformance suite use actors
// to make "A, B, C enter GQCS in that order" happen. Between steps an actor spin-yields rather
// than blocking, so that it stays *running* in the port's eyes on every backend (a kernel wait
// would release its IOCP slot on Windows, and the emulated port would not see it).

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <thread>
#include <type_traits>

#include "port/completion_port.hpp"

namespace iocpbench::port {

class PortActor {
 public:
  PortActor() : thread_([this] { loop(); }) {}
  ~PortActor() {
    stop_.store(true, std::memory_order_release);
    thread_.join();
  }
  PortActor(const PortActor&) = delete;
  PortActor& operator=(const PortActor&) = delete;

  // Run `step` on the actor's thread after the steps already given. The future bounds the wait.
  template <typename F>
  std::future<std::invoke_result_t<F>> run(F step) {
    using R = std::invoke_result_t<F>;
    auto task = std::make_shared<std::packaged_task<R()>>(std::move(step));
    std::future<R> result = task->get_future();
    auto* job = new std::function<void()>([task] { (*task)(); });
    std::function<void()>* expected = nullptr;
    while (!mailbox_.compare_exchange_weak(expected, job, std::memory_order_acq_rel)) {
      expected = nullptr;
      std::this_thread::yield();
    }
    return result;
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()>* job = mailbox_.exchange(nullptr, std::memory_order_acq_rel);
      if (job != nullptr) {
        (*job)();
        delete job;
        continue;
      }
      if (stop_.load(std::memory_order_acquire)) return;
      std::this_thread::yield();
    }
  }

  std::atomic<std::function<void()>*> mailbox_{nullptr};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// What one remove returned, for scripts that check who got which packet.
struct RemoveOutcome {
  RemoveStatus status = RemoveStatus::timeout;
  Packet packet;
  std::chrono::steady_clock::time_point returned_at;
};

// `actor` calls GQCS on `port` with `timeout`; the future carries the outcome.
inline std::future<RemoveOutcome> async_remove(PortActor& actor, CompletionPort& port,
                                               Timeout timeout) {
  return actor.run([&port, timeout] {
    RemoveOutcome outcome;
    outcome.status = port.remove(outcome.packet, timeout);
    outcome.returned_at = std::chrono::steady_clock::now();
    return outcome;
  });
}

// Spin (stay running, never block) for `duration`.
inline void spin_for(std::chrono::nanoseconds duration) {
  const auto end = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < end) {
  }
}

}  // namespace iocpbench::port
