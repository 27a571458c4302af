#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "metrics/usage.hpp"

namespace iocpbench::metrics {
namespace {

double seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

Usage from_rusage(const rusage& ru) {
  Usage u;
  u.voluntary = static_cast<std::uint64_t>(ru.ru_nvcsw);
  u.involuntary = static_cast<std::uint64_t>(ru.ru_nivcsw);
  u.user_s = seconds(ru.ru_utime);
  u.sys_s = seconds(ru.ru_stime);
  u.cpu_s = u.user_s + u.sys_s;
  return u;
}

// Finds "key:\t<number>" in a /proc status text.
bool find_count(const char* text, const char* key, std::uint64_t& out) {
  const char* at = std::strstr(text, key);
  if (at == nullptr) return false;
  at += std::strlen(key);
  while (*at == ' ' || *at == '\t') ++at;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(at, &end, 10);
  if (end == at) return false;
  out = value;
  return true;
}

}  // namespace

const char* usage_method() {
  return "process: getrusage(RUSAGE_SELF) over the window; roles: each live thread's counters "
         "(/proc/self/task/<tid>/status, as RUSAGE_THREAD) sampled at the window's edges; "
         "other = process - roles";
}

std::optional<std::string> context_switches_unavailable() {
  return std::nullopt;
}

void count_exiting_thread(const Usage&) {}  // RUSAGE_SELF counts exited threads itself

bool process_switches_include_exited_threads() { return true; }

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

Usage process_usage() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return from_rusage(ru);
}

Usage current_thread_usage() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return from_rusage(ru);
}

ThreadHandle current_thread_handle() {
  ThreadHandle handle;
  handle.tid = static_cast<long>(syscall(SYS_gettid));
  handle.native = static_cast<std::uint64_t>(pthread_self());
  return handle;
}

bool sample_thread(const ThreadHandle& thread, Usage& out) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%ld/status", thread.tid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[4096];
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  Usage u;
  if (!find_count(text, "\nvoluntary_ctxt_switches:", u.voluntary) ||
      !find_count(text, "\nnonvoluntary_ctxt_switches:", u.involuntary)) {
    return false;
  }
  clockid_t clock{};
  timespec ts{};
  if (pthread_getcpuclockid(static_cast<pthread_t>(thread.native), &clock) == 0 &&
      clock_gettime(clock, &ts) == 0) {
    u.cpu_s = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  }
  out = u;
  return true;
}

// Linux reads one thread per /proc file, so there is no cheaper batch than one read each.
std::vector<std::optional<Usage>> sample_threads(const std::vector<ThreadHandle>& threads) {
  std::vector<std::optional<Usage>> out(threads.size());
  for (std::size_t i = 0; i < threads.size(); ++i) {
    Usage u;
    if (sample_thread(threads[i], u)) out[i] = u;
  }
  return out;
}

}  // namespace iocpbench::metrics
