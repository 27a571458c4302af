#pragma once
// The run watchdog (R7): a run that stops making progress ends with an error naming the stuck
// part instead of hanging.
//
// While a run is measured (warm-up and window), a watchdog thread samples a progress counter
// (packets handled by the pool) every tenth of the limit (at most 0.5 s). When it has not
// moved for the stall limit it builds a report with `describe` (pool threads, port,
// workload), marks itself fired and sets `fired_flag()`, which run_point treats like a stop
// request; run_point then tears the run down and throws the report (a one-line error, exit 1;
// a sweep records it as a failed run).
// Teardown itself is bounded too: once teardown() has been called, a run whose teardown takes
// longer than the teardown limit (a thread stuck for good inside a handler) is ended with the
// report on stderr and _Exit(1), the one thing left that is better than a hang.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace iocpbench::engine {

// What the pool's threads are doing, for the watchdog: each worker writes its own slot
// (relaxed stores on its own cache line); the watchdog reads them all.
class ProgressBoard {
 public:
  enum Where : std::uint8_t { kInPort, kInHandler, kBlocking, kExited, kParked };
  struct Census {
    unsigned in_port = 0;     // waiting in remove()
    unsigned in_handler = 0;  // the workload's code or the handler's CPU work
    unsigned blocking = 0;    // inside the handler's blocking region (sleep or reads)
    unsigned exited = 0;
    unsigned parked = 0;  // a controlled pool's threads over its target, asleep (engine/pool.hpp)
  };

  explicit ProgressBoard(unsigned threads)
      : threads_(threads), slots_(std::make_unique<Slot[]>(threads)) {}

  // Worker `i`: took a packet / is now at `where`.
  void took(unsigned i) {
    slots_[i].packets.store(slots_[i].packets.load(std::memory_order_relaxed) + 1,
                            std::memory_order_relaxed);
  }
  void at(unsigned i, Where where) { slots_[i].where.store(where, std::memory_order_relaxed); }

  // Any thread.
  std::uint64_t packets() const;
  Census census() const;

 private:
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> packets{0};
    std::atomic<std::uint8_t> where{kInPort};
  };
  unsigned threads_;
  std::unique_ptr<Slot[]> slots_;
};

// The stall limit: max(5 s, 10 x the expected service time of one completion), or `override_s`
// when positive (tests).
double watchdog_limit_s(double work_us, double block_us, double override_s = 0);

class Watchdog {
 public:
  using Progress = std::function<std::uint64_t()>;
  // The state of the run, e.g. "pool threads: 4 waiting in the port, 0 in the handler; ...".
  using Describe = std::function<std::string(double stalled_s)>;

  Watchdog(double limit_s, Progress progress, Describe describe,
           double teardown_limit_s = 30.0);
  ~Watchdog();  // stops the thread (disarms)
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Set when a stall was found; run_point polls it with its stop request.
  const std::atomic<bool>& fired_flag() const { return fired_; }
  bool fired() const { return fired_.load(std::memory_order_acquire); }
  // The report (valid once fired): "watchdog: no completion for 5.0 s; ...".
  std::string message() const;

  // The run is being torn down: stop watching progress, start the teardown bound.
  void teardown();
  // The run is over: stop the thread.
  void disarm();

 private:
  void loop();

  const double limit_s_;
  const double teardown_limit_s_;
  Progress progress_;
  Describe describe_;
  std::atomic<bool> fired_{false};
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool disarmed_ = false;
  bool tearing_down_ = false;
  std::chrono::steady_clock::time_point teardown_since_;
  std::string message_;
  std::thread thread_;
};

}  // namespace iocpbench::engine
