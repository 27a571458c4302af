#pragma once
// The emulated port's lock: a futex mutex (Drepper's "mutex 3": 0 free, 1 held, 2 held with
// sleepers) that spins briefly before sleeping. The port's critical sections are a few dozen
// instructions, so a contending thread almost always gets the lock within the spin; std::mutex
// (glibc's default kind) puts it to sleep at once, which costs two context switches and a
// wake-up syscall per collision. Uncontended, lock and unlock are one atomic each (callgrind:
// about 10 instructions against about 55 for pthread_mutex_lock + unlock). Meets BasicLockable,
// so std::lock_guard and std::unique_lock work with it.

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
  static constexpr int kSpins = 100;

  void lock_contended() noexcept {
    for (int i = 0; i < kSpins; ++i) {
      cpu_relax();
      std::uint32_t expected = 0;
      if (state_.load(std::memory_order_relaxed) == 0 &&
          state_.compare_exchange_weak(expected, 1, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        return;
      }
    }
    // Mark "held with sleepers" and sleep until the holder's unlock wakes us.
    while (state_.exchange(2, std::memory_order_acquire) != 0) {
      platform::futex_wait(state_, 2, nullptr);
    }
  }

  std::atomic<std::uint32_t> state_{0};
};

}  // namespace iocpbench::port
