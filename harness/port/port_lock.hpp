#pragma once
// The emulated port's lock: a futex mutex (Drepper's "mutex 3": 0 free, 1 held, 2 held with
// sleepers) that spins, backing off exponentially, before it sleeps. The port's critical
// sections are a few dozen instructions, so a contending thread almost always gets the lock
// within the spin; std::mutex (glibc's default kind) puts it to sleep at once, which costs two
// context switches and a wake-up syscall per collision. Uncontended, lock and unlock are one
// atomic each (callgrind: about 10 instructions against about 55 for pthread_mutex_lock +
// unlock). Meets BasicLockable, so std::lock_guard and std::unique_lock work with it.

#include <atomic>
#include <cstdint>

#include "platform/platform.hpp"

#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#include <intrin.h>
#endif

namespace iocpbench::port {

// A spin-wait hint to the CPU (x86 PAUSE); nothing where there is none.
inline void cpu_relax() noexcept {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __builtin_ia32_pause();
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
  _mm_pause();
#endif
}

class PortLock {
 public:
  void lock() noexcept {
    std::uint32_t expected = 0;
    if (state_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
      return;
    }
    lock_contended();
  }

  bool try_lock() noexcept {
    std::uint32_t expected = 0;
    return state_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }

  void unlock() noexcept {
    if (state_.exchange(0, std::memory_order_release) == 2) platform::futex_wake_one(state_);
  }

 private:
  // Under a sustained collision (two running threads passing packets through the port, P1's
  // closed loop and streaming) the holder takes the lock again within nanoseconds of its
  // unlock. A waiter that probes the word after every PAUSE pulls the line to its CPU at each
  // release, so every acquisition, the holder's too, pays a cross-CPU transfer (about 150 ns
  // against about 15 ns for a local one). Doubling the pause between probes leaves the holder
  // longer and longer runs of acquisitions in its own cache: the throughput of glibc's
  // sleeping mutex (which parks the loser at once) without its sleep, its wake-up syscall and
  // its two context switches. The pause grows to at most 128 PAUSEs between probes (about
  // 3.7 us on this project's AMD EPYC guest, 29 ns each), so a waiter notices a free lock soon
  // enough. The spin is bounded in PAUSEs, not time (no clock read): 1000 in all, about 29 us
  // here (a PAUSE takes from about 10 to about 140 cycles across x86 generations, so 1000 are
  // a few to about 50 us elsewhere); then the waiter sleeps as before, so a preempted holder
  // costs a spinner no more than that. docs/performance.md, "The hot
  // path", has the measurements behind both numbers.
  static constexpr unsigned kMaxDelayPauses = 128;
  static constexpr unsigned kSpinBudgetPauses = 1000;

  void lock_contended() noexcept {
    unsigned delay = 1;
    for (unsigned spent = 0; spent < kSpinBudgetPauses; spent += delay) {
      for (unsigned i = 0; i < delay; ++i) cpu_relax();
      std::uint32_t expected = 0;
      if (state_.load(std::memory_order_relaxed) == 0 &&
          state_.compare_exchange_weak(expected, 1, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        return;
      }
      delay = delay * 2 > kMaxDelayPauses ? kMaxDelayPauses : delay * 2;
    }
    // Mark "held with sleepers" and sleep until the holder's unlock wakes us.
    while (state_.exchange(2, std::memory_order_acquire) != 0) {
      platform::futex_wait(state_, 2, nullptr);
    }
  }

  std::atomic<std::uint32_t> state_{0};
};

}  // namespace iocpbench::port
