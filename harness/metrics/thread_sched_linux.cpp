#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>

#include "metrics/thread_sched.hpp"

namespace iocpbench::metrics {

ThreadSchedClock::ThreadSchedClock() noexcept {
  // schedstat is per task: "<ns on CPU> <ns waiting on a run queue> <timeslices>". Kept open
  // so that a sample is one pread (about 1 us on a KVM guest), not an open/read/close. Only its
  // run-queue delay is used: it grows when a waiting thread gets a CPU, so it is exact while the
  // thread runs, whereas its CPU time is brought up to date only at ticks and switches (a
  // running thread reads a value up to a tick old). The CPU time comes from the thread's CPU
  // clock, which the kernel brings up to date when read.
  const int fd = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  handle_ = fd;
}

ThreadSchedClock::~ThreadSchedClock() {
  if (handle_ >= 0) ::close(static_cast<int>(handle_));
}

SchedSample ThreadSchedClock::sample() const noexcept {
  SchedSample s;
  if (handle_ < 0) return s;
  // The CPU clock first: the pread's own CPU then falls after this sample's instant, so a pair
  // of samples that brackets a timed interval counts the CPU of the interval, not of the pread
  // that follows its end.
  timespec cpu{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0) {
    s.cpu_ns = static_cast<std::uint64_t>(cpu.tv_sec) * 1'000'000'000u +
               static_cast<std::uint64_t>(cpu.tv_nsec);
  }
  char text[96];
  ssize_t n;
  do {
    n = ::pread(static_cast<int>(handle_), text, sizeof text - 1, 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return s;
  text[n] = '\0';
  char* end = nullptr;
  (void)std::strtoull(text, &end, 10);  // schedstat's own CPU time: stale, see above
  s.runnable_wait_ns = std::strtoull(end, nullptr, 10);
  return s;
}

const char* ThreadSchedClock::method() noexcept {
  return "per handler: wall time (CLOCK_MONOTONIC) split by samples at "
         "the handler's start, at the block's start and at its end: cpu = CLOCK_THREAD_CPUTIME_ID, "
         "runnable_wait = /proc/thread-self/schedstat run_delay (woken or preempted, waiting for "
         "a CPU), blocked = the rest";
}

}  // namespace iocpbench::metrics
