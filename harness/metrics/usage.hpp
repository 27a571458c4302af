#pragma once
// Context switches and CPU time: for the whole process (getrusage RUSAGE_SELF on Linux: every
// thread, exited ones included) and per thread, grouped by role. One implementation file per OS
// (usage_linux.cpp).
//
// Per-thread counts are sampled by the controller at the edges of the measured window while the
// threads are alive. A worker asleep in the port cannot read its own RUSAGE_THREAD at that
// moment without being woken (which would add the very switches being counted), so on Linux
// the controller reads /proc/self/task/<tid>/status (the same counters RUSAGE_THREAD returns)
// and the thread's CPU clock. RUSAGE_THREAD itself is used for the calling thread.

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace iocpbench::metrics {

struct Usage {
  std::uint64_t voluntary = 0;
  std::uint64_t involuntary = 0;
  double user_s = 0;  // process samples only (threads report cpu_s)
  double sys_s = 0;
  double cpu_s = 0;  // user + sys
};

Usage operator-(const Usage& a, const Usage& b);
Usage& operator+=(Usage& a, const Usage& b);

// The whole process (on Linux exited threads included; on Windows the live threads).
Usage process_usage();
// The process's CPU time (user + system, every thread), cheaper than process_usage(): no
// context-switch counts.
double process_cpu_seconds();
// How this OS counts, for the results.
const char* usage_method();
// Why this OS's context-switch counts cannot be trusted here (under Wine every thread's
// ContextSwitches reads 0), or nothing when they can. Per OS (usage_linux.cpp, ...).
std::optional<std::string> context_switches_unavailable();
// True where process_usage() counts every thread that ever ran (Linux: RUSAGE_SELF), so that two
// readings bracket every switch between them even when threads started and exited meanwhile;
// false where it sums the live threads (Windows: an exited thread's switches are lost unless it
// retired through a RoleRegistry). The benchmarks (bench/), whose threads do not enrol, count
// switches only where this is true.
bool process_switches_include_exited_threads();
// The calling thread (RUSAGE_THREAD on Linux).
Usage current_thread_usage();
// A thread that leaves mid-run reports its final counts here, where the OS's process counts
// lose an exited thread's switches (Windows sums the live threads; Linux's RUSAGE_SELF keeps
// them, so there this does nothing). Called by RoleRegistry::retire.
void count_exiting_thread(const Usage& final_usage);

// An OS handle for sampling a live thread from another thread.
struct ThreadHandle {
  long tid = 0;
  std::uint64_t native = 0;  // pthread_t on POSIX
};
ThreadHandle current_thread_handle();
// False when the thread is gone or the OS refuses.
bool sample_thread(const ThreadHandle& thread, Usage& out);
// Every thread of `threads` at one moment: out[i] is threads[i]'s counts, or nothing when that
// thread is gone or the OS refuses. One OS snapshot for all of them where the OS counts per
// snapshot (Windows: one NtQuerySystemInformation call per sample, not one per thread, so a
// sample inside the measured window costs one system-wide walk).
std::vector<std::optional<Usage>> sample_threads(const std::vector<ThreadHandle>& threads);

enum class Role { workers, completion_source, load_generator };
const char* to_string(Role role);
inline constexpr int kRoles = 3;

// Threads of a run enrol here when they start (and must stay alive until the last sample).
class RoleRegistry {
 public:
  void enrol(Role role);  // the calling thread
  // The calling thread is about to exit (a self-sizing pool's thread leaving mid-run): its
  // counts so far stay in its role's sums (sample() adds every retired thread), so a window
  // keeps the switches of a thread that left during it.
  void retire();
  // Per-role sums over the enrolled threads; threads that could not be sampled are counted.
  struct Snapshot {
    Usage by_role[kRoles];
    unsigned threads[kRoles] = {};
    unsigned unsampled = 0;
  };
  Snapshot sample() const;
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<Role, ThreadHandle>> threads_;
  Usage retired_[kRoles];
};

}  // namespace iocpbench::metrics
