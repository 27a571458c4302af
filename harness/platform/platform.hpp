#pragma once
// Operating-system primitives the harness needs, one implementation file per OS
// (platform_linux.cpp, platform_windows.cpp); nothing outside this folder asks which OS it is on.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace iocpbench::platform {

using Clock = std::chrono::steady_clock;

// Block while `word` still holds `expected`, until woken or `deadline` (nullptr = forever).
// Returns false only when the deadline passed. Spurious returns are allowed: callers loop.
bool futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                const Clock::time_point* deadline) noexcept;
// Wake one thread blocked on `word`. Safe on memory whose owner may already have returned:
// the address is only used as a key.
void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept;

unsigned logical_cpus() noexcept;
bool pin_current_thread_to_cpu(unsigned cpu) noexcept;
// Finer sleeps: on Linux the timer slack goes to 1 ns for the calling thread.
void set_fine_timer_slack() noexcept;
// Give the calling thread the least claim on a CPU that the OS offers short of idle-only
// scheduling, so that a thread the harness runs beside the pool (the socket workload's load
// generator) yields to the workers under test instead of delaying them once they are woken.
// Returns what was applied, in words (a static string, "" when the OS refused).
const char* lower_current_thread_priority() noexcept;
// Give the calling thread a real-time priority, so that it runs the moment it wakes, ahead of
// every normal thread (the open loop's pacer and stall meter: the workers must not delay them).
// `level` 1 or 2, higher preempts lower. Linux: SCHED_FIFO at that priority; Windows:
// THREAD_PRIORITY_TIME_CRITICAL (level 2) or HIGHEST (level 1). Returns what was applied, in
// words, or, when the OS refused, "" with the reason in *why_not.
std::string raise_current_thread_to_realtime(int level, std::string* why_not);
// Sleep with the finest timer the OS offers (high-resolution waitable timer on Windows).
void precise_sleep(std::chrono::nanoseconds duration) noexcept;

// Run fn(arg) when the calling thread exits, latest registration first. Use it instead of a
// thread_local object with a destructor: MinGW-w64's emulated TLS (GCC 12, static) frees a
// thread's thread_local storage before it runs their destructors, which then read freed memory.
void at_thread_exit(void (*fn)(void*), void* arg) noexcept;

// The Wine version when running under Wine (ntdll exports wine_get_version), else nothing.
std::optional<std::string> wine_version();

}  // namespace iocpbench::platform
