#pragma once
// The calling thread's own scheduler accounting: how long it has run on a CPU and how long it
// has waited, runnable, for one. The handler's time splits into CPU work, blocked time (from the
// blocking call until the thread is woken) and runnable wait (woken, waiting for a CPU) with two
// samples, one at each edge. One implementation file per OS (thread_sched_linux.cpp: the
// thread's CPU clock and /proc/thread-self/schedstat's run-queue delay; thread_sched_windows.cpp
// has no per-thread run-queue delay).

#include <cstdint>

namespace iocpbench::metrics {

struct SchedSample {
  std::uint64_t cpu_ns = 0;            // time on a CPU since the thread started
  std::uint64_t runnable_wait_ns = 0;  // time runnable but waiting for a CPU
};

// Opened by the thread it measures, and used only by that thread.
class ThreadSchedClock {
 public:
  ThreadSchedClock() noexcept;
  ~ThreadSchedClock();
  ThreadSchedClock(const ThreadSchedClock&) = delete;
  ThreadSchedClock& operator=(const ThreadSchedClock&) = delete;

  // False where this OS cannot split the thread's time (then sample() returns zeros).
  bool available() const noexcept { return handle_ >= 0; }
  SchedSample sample() const noexcept;

  // How the split is measured on this OS, or why it cannot be, for the results.
  static const char* method() noexcept;

 private:
  long long handle_ = -1;  // the OS's handle (a file descriptor on Linux); -1: unavailable
};

}  // namespace iocpbench::metrics
