// Windows primitives: WaitOnAddress for the futex, SetThreadAffinityMask for pinning, a
// high-resolution waitable timer for sleeps, and Wine detection through ntdll.

#include "platform/windows_api.hpp"  // first: the lean <windows.h>
#include <timeapi.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "platform/platform.hpp"

#ifndef CREATE_WAITABLE_TIMER_HIGH_RESOLUTION
#define CREATE_WAITABLE_TIMER_HIGH_RESOLUTION 0x00000002
#endif

namespace iocpbench::platform {

std::string win32_error_text(DWORD code) {
  char* text = nullptr;
  const DWORD n = FormatMessageA(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM |
                                     FORMAT_MESSAGE_IGNORE_INSERTS,
                                 nullptr, code, 0, reinterpret_cast<char*>(&text), 0, nullptr);
  std::string out = n > 0 && text ? std::string(text, n) : "error " + std::to_string(code);
  if (text) LocalFree(text);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == '.')) {
    out.pop_back();
  }
  return out;
}

std::string registry_string(HKEY root, const char* subkey, const char* value) {
  char buffer[512];
  DWORD size = sizeof buffer;
  if (RegGetValueA(root, subkey, value, RRF_RT_REG_SZ, nullptr, buffer, &size) != ERROR_SUCCESS) {
    return {};
  }
  std::string text(buffer);
  const auto first = text.find_first_not_of(' ');
  const auto last = text.find_last_not_of(' ');
  return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

bool futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                const Clock::time_point* deadline) noexcept {
  DWORD milliseconds = INFINITE;
  if (deadline != nullptr) {
    const auto left = *deadline - Clock::now();
    if (left <= Clock::duration::zero()) return false;
    // Round up: WaitOnAddress rounds its timeout to the system tick, and a wait that ends early
    // must not read as "the deadline passed".
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    milliseconds = static_cast<DWORD>(std::min<long long>(ms, INFINITE - 1));
  }
  // std::atomic<uint32_t> is a plain 32-bit word on every Windows compiler (lock-free).
  auto* address = reinterpret_cast<volatile std::uint32_t*>(&word);
  if (WaitOnAddress(address, &expected, sizeof expected, milliseconds)) return true;
  if (GetLastError() != ERROR_TIMEOUT) return true;  // treat as spurious: the caller loops
  return deadline == nullptr || Clock::now() < *deadline;
}

void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept {
  WakeByAddressSingle(reinterpret_cast<void*>(&word));
}

unsigned logical_cpus() noexcept {
  // The count a completion port's concurrency value 0 resolves to: every active processor.
  const DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
  if (n != 0) return static_cast<unsigned>(n);
  const unsigned fallback = std::thread::hardware_concurrency();
  return fallback == 0 ? 1 : fallback;
}

bool pin_current_thread_to_cpu(unsigned cpu) noexcept {
  if (cpu >= sizeof(DWORD_PTR) * 8) return false;  // beyond the first processor group
  return SetThreadAffinityMask(GetCurrentThread(), DWORD_PTR{1} << cpu) != 0;
}

// The nearest Windows has to a timer slack: a 1 ms system timer period for the process (it is
// process-wide, so it is asked for once). High-resolution waitable timers do not need it.
void set_fine_timer_slack() noexcept {
  static std::once_flag once;
  std::call_once(once, [] { timeBeginPeriod(1); });
}

namespace {

// One timer per thread, created on first use and kept in a fiber-local slot whose callback
// closes it when the thread exits. (Not a C++ thread_local with a destructor: MinGW's static
// emutls runs such destructors from a pthread key destructor in no fixed order with the one
// that frees the TLS block, which crashed threads at exit under Wine.)
// CREATE_WAITABLE_TIMER_HIGH_RESOLUTION exists from Windows 10 1803; where it is refused
// (older Windows, Wine 8.0) a plain waitable timer is used.
void WINAPI close_timer(void* handle) {
  if (handle != nullptr) CloseHandle(static_cast<HANDLE>(handle));
}

HANDLE thread_timer() {
  static const DWORD slot = FlsAlloc(close_timer);
  if (slot == FLS_OUT_OF_INDEXES) return nullptr;
  if (void* existing = FlsGetValue(slot)) return static_cast<HANDLE>(existing);
  HANDLE timer = CreateWaitableTimerExW(nullptr, nullptr, CREATE_WAITABLE_TIMER_HIGH_RESOLUTION,
                                        TIMER_ALL_ACCESS);
  if (timer == nullptr) timer = CreateWaitableTimerExW(nullptr, nullptr, 0, TIMER_ALL_ACCESS);
  if (timer != nullptr && !FlsSetValue(slot, timer)) {
    CloseHandle(timer);
    return nullptr;
  }
  return timer;
}

}  // namespace

const char* lower_current_thread_priority() noexcept {
  // Windows schedules by strict priority (with a starvation boost), so LOWEST already yields
  // to every normal-priority worker; IDLE would add nothing but the risk of long starvation.
  if (!SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_LOWEST)) return "";
  return "THREAD_PRIORITY_LOWEST";
}

std::string raise_current_thread_to_realtime(int level, std::string* why_not) {
  const int priority = level >= 2 ? THREAD_PRIORITY_TIME_CRITICAL : THREAD_PRIORITY_HIGHEST;
  if (!SetThreadPriority(GetCurrentThread(), priority)) {
    if (why_not != nullptr) {
      *why_not = "SetThreadPriority refused: error " + std::to_string(GetLastError());
    }
    return "";
  }
  return level >= 2 ? "THREAD_PRIORITY_TIME_CRITICAL" : "THREAD_PRIORITY_HIGHEST";
}

void precise_sleep(std::chrono::nanoseconds duration) noexcept {
  if (duration.count() <= 0) return;
  if (HANDLE timer = thread_timer()) {
    LARGE_INTEGER due;
    // Relative times are negative, in 100 ns units; at least one unit.
    due.QuadPart = -std::max<long long>(1, (duration.count() + 99) / 100);
    if (SetWaitableTimer(timer, &due, 0, nullptr, nullptr, FALSE) &&
        WaitForSingleObject(timer, INFINITE) == WAIT_OBJECT_0) {
      return;
    }
  }
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(duration).count();
  Sleep(static_cast<DWORD>(std::min<long long>(ms, INFINITE - 1)));
}

namespace {

// Thread-exit hooks in a fiber-local slot: Windows (and Wine) call an FLS callback when the
// thread exits, before the DLL_THREAD_DETACH / TLS callbacks in which MinGW's emulated TLS is
// torn down, so the hooks may still read thread_local variables.
struct ThreadExitHooks {
  std::vector<std::pair<void (*)(void*), void*>> hooks;
};

void WINAPI run_exit_hooks(void* data) {
  auto* list = static_cast<ThreadExitHooks*>(data);
  if (list == nullptr) return;
  while (!list->hooks.empty()) {
    const auto [fn, arg] = list->hooks.back();
    list->hooks.pop_back();
    fn(arg);
  }
  delete list;
}

}  // namespace

void at_thread_exit(void (*fn)(void*), void* arg) noexcept {
  static const DWORD slot = FlsAlloc(run_exit_hooks);
  if (slot == FLS_OUT_OF_INDEXES) return;  // the hook never runs: what it frees is leaked
  auto* list = static_cast<ThreadExitHooks*>(FlsGetValue(slot));
  if (list == nullptr) {
    list = new ThreadExitHooks;
    if (!FlsSetValue(slot, list)) {
      delete list;
      return;
    }
  }
  list->hooks.emplace_back(fn, arg);
}

std::optional<std::string> wine_version() {
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  if (ntdll == nullptr) return std::nullopt;
  using WineGetVersion = const char*(__cdecl*)();
  auto* proc = GetProcAddress(ntdll, "wine_get_version");
  if (proc == nullptr) return std::nullopt;
  // FARPROC to the real signature: the documented way to call a GetProcAddress result.
  const auto get_version = reinterpret_cast<WineGetVersion>(reinterpret_cast<void*>(proc));
  const char* version = get_version();
  return std::string(version != nullptr ? version : "unknown");
}

}  // namespace iocpbench::platform
