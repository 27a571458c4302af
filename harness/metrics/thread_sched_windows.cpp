#include "metrics/thread_sched.hpp"

namespace iocpbench::metrics {

// Windows keeps no per-thread run-queue delay that a thread can read (GetThreadTimes advances
// in clock ticks of about 15.6 ms, far coarser than one handler), so the split is unavailable:
// the handler's work and its block are timed by the wall clock, and the runnable wait is part of
// the block.
ThreadSchedClock::ThreadSchedClock() noexcept = default;
ThreadSchedClock::~ThreadSchedClock() = default;

SchedSample ThreadSchedClock::sample() const noexcept {
  return {};
}

const char* ThreadSchedClock::method() noexcept {
  return "unavailable: Windows exposes no per-thread run-queue delay (GetThreadTimes advances in "
         "~15.6 ms ticks); the block's wall time includes any wait for a CPU after the wake-up";
}

}  // namespace iocpbench::metrics
