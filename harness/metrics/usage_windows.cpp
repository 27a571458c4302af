// Context switches and CPU time on Windows: per-thread ContextSwitches from
// NtQuerySystemInformation(SystemProcessInformation), summed over the process's live threads
// (Windows keeps no count for exited threads and does not split voluntary from involuntary:
// the total is reported as voluntary). CPU times from GetProcessTimes / the same snapshot.
// Under Wine the ContextSwitches field is always 0.

#include "platform/windows_api.hpp"  // first: the lean <windows.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "metrics/usage.hpp"
#include "platform/platform.hpp"

namespace iocpbench::metrics {
namespace {

// The documented x64 layouts (winternl.h hides ContextSwitches behind a reserved field).
struct ThreadInformation {
  LARGE_INTEGER kernel_time;
  LARGE_INTEGER user_time;
  LARGE_INTEGER create_time;
  ULONG wait_time;
  PVOID start_address;
  HANDLE unique_process;
  HANDLE unique_thread;
  LONG priority;
  LONG base_priority;
  ULONG context_switches;
  ULONG thread_state;
  ULONG wait_reason;
};

struct ProcessInformation {
  ULONG next_entry_offset;
  ULONG number_of_threads;
  BYTE reserved1[48];
  struct {
    USHORT length, maximum_length;
    PWSTR buffer;
  } image_name;
  LONG base_priority;
  HANDLE unique_process_id;
  BYTE rest[256 - 88];  // up to the thread array, which starts at offset 256 on x64
};

static_assert(sizeof(void*) != 8 || sizeof(ThreadInformation) == 0x50, "x64 layout");
static_assert(sizeof(void*) != 8 || offsetof(ProcessInformation, unique_process_id) == 80,
              "x64 layout");
static_assert(sizeof(void*) != 8 || sizeof(ProcessInformation) == 256, "x64 layout");

using QueryFn = LONG(WINAPI*)(ULONG, PVOID, ULONG, PULONG);

QueryFn query() {
  static const QueryFn fn = reinterpret_cast<QueryFn>(reinterpret_cast<void*>(
      GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "NtQuerySystemInformation")));
  return fn;
}

double seconds_of(const LARGE_INTEGER& t) {
  return static_cast<double>(t.QuadPart) / 1e7;
}
double seconds_of(const FILETIME& t) {
  ULARGE_INTEGER v;
  v.LowPart = t.dwLowDateTime;
  v.HighPart = t.dwHighDateTime;
  return static_cast<double>(v.QuadPart) / 1e7;
}

// Calls `visit(thread)` for each thread of this process; false when the OS refuses.
template <typename Visit>
bool for_each_own_thread(Visit visit) {
  const QueryFn fn = query();
  if (fn == nullptr) return false;
  thread_local std::vector<std::byte> buffer(1 << 20);
  ULONG needed = 0;
  LONG status = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    status = fn(5 /* SystemProcessInformation */, buffer.data(), static_cast<ULONG>(buffer.size()),
                &needed);
    if (status != static_cast<LONG>(0xC0000004L)) break;  // STATUS_INFO_LENGTH_MISMATCH
    buffer.resize(needed + (64u << 10));
  }
  if (status < 0) return false;
  const auto self = static_cast<ULONG_PTR>(GetCurrentProcessId());
  std::size_t offset = 0;
  for (;;) {
    const auto* process = reinterpret_cast<const ProcessInformation*>(buffer.data() + offset);
    if (reinterpret_cast<ULONG_PTR>(process->unique_process_id) == self) {
      const auto* threads = reinterpret_cast<const ThreadInformation*>(process + 1);
      for (ULONG i = 0; i < process->number_of_threads; ++i) visit(threads[i]);
      return true;
    }
    if (process->next_entry_offset == 0) return false;
    offset += process->next_entry_offset;
  }
}

}  // namespace

const char* usage_method() {
  return "Windows: NtQuerySystemInformation ContextSwitches per live thread (no voluntary / "
         "involuntary split: the total is reported as voluntary)";
}

std::optional<std::string> context_switches_unavailable() {
  if (const auto wine = platform::wine_version()) {
    return "Wine " + *wine + " reads every thread's ContextSwitches as 0 "
           "(NtQuerySystemInformation): context switches are unavailable under Wine";
  }
  if (query() == nullptr) return std::string("ntdll has no NtQuerySystemInformation");
  return std::nullopt;
}

// Switches of threads that left mid-run (a self-sizing pool's): the live-thread sum below no
// longer sees them.
std::atomic<std::uint64_t> g_exited_switches{0};

void count_exiting_thread(const Usage& final_usage) {
  g_exited_switches.fetch_add(final_usage.voluntary, std::memory_order_relaxed);
}

// The live threads' ContextSwitches plus those that retired (count_exiting_thread).
bool process_switches_include_exited_threads() { return false; }

double process_cpu_seconds() {
  FILETIME created, exited, kernel, user;
  if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user)) return 0;
  return seconds_of(user) + seconds_of(kernel);
}

Usage process_usage() {
  Usage u;
  FILETIME created, exited, kernel, user;
  if (GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user)) {
    u.user_s = seconds_of(user);
    u.sys_s = seconds_of(kernel);
    u.cpu_s = u.user_s + u.sys_s;
  }
  for_each_own_thread([&](const ThreadInformation& t) { u.voluntary += t.context_switches; });
  u.voluntary += g_exited_switches.load(std::memory_order_relaxed);
  return u;
}

Usage current_thread_usage() {
  Usage u;
  sample_thread(current_thread_handle(), u);
  FILETIME created, exited, kernel, user;
  if (GetThreadTimes(GetCurrentThread(), &created, &exited, &kernel, &user)) {
    u.user_s = seconds_of(user);
    u.sys_s = seconds_of(kernel);
    u.cpu_s = u.user_s + u.sys_s;
  }
  return u;
}

ThreadHandle current_thread_handle() {
  ThreadHandle handle;
  handle.tid = static_cast<long>(GetCurrentThreadId());
  return handle;
}

bool sample_thread(const ThreadHandle& thread, Usage& out) {
  const std::optional<Usage> u = sample_threads({thread}).front();
  if (u) out = *u;
  return u.has_value();
}

// One NtQuerySystemInformation snapshot for the whole sample (it walks every process and thread
// of the system: taking one per enrolled thread, inside the measured window, multiplied that cost
// by the pool size), then each handle is looked up in this process's threads of that snapshot.
std::vector<std::optional<Usage>> sample_threads(const std::vector<ThreadHandle>& threads) {
  std::vector<std::pair<ULONG_PTR, Usage>> own;  // this process's threads, by thread id
  const bool ok = for_each_own_thread([&](const ThreadInformation& t) {
    Usage u;
    u.voluntary = t.context_switches;
    u.cpu_s = seconds_of(t.kernel_time) + seconds_of(t.user_time);
    own.emplace_back(reinterpret_cast<ULONG_PTR>(t.unique_thread), u);
  });
  std::vector<std::optional<Usage>> out(threads.size());
  if (!ok) return out;
  std::sort(own.begin(), own.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < threads.size(); ++i) {
    const auto tid = static_cast<ULONG_PTR>(threads[i].tid);
    const auto it = std::lower_bound(own.begin(), own.end(), tid,
                                     [](const auto& entry, ULONG_PTR id) { return entry.first < id; });
    if (it != own.end() && it->first == tid) out[i] = it->second;
  }
  return out;
}

}  // namespace iocpbench::metrics
