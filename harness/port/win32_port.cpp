// The kernel's I/O completion port behind the port interface (port-semantics.md is what the
// kernel does; this file only translates). The blocking-region guard needs nothing here: the
// kernel runs "activate" and "resume" inside every wait itself, and the guard in
// emulated_port.cpp acts only on threads associated with an *emulated* port, which a thread
// that calls GetQueuedCompletionStatus never is.
//
// A packet's status. PostQueuedCompletionStatus always queues STATUS_SUCCESS (it calls
// NtSetIoCompletion with status 0), and GetQueuedCompletionStatus decides success or failure
// from the packet's status, not from the OVERLAPPED, so an OVERLAPPED whose Internal holds an
// error would still come back as success. A packet with an error status is therefore posted
// with ntdll's NtSetIoCompletion (what PostQueuedCompletionStatus calls, exported by ntdll on
// every Windows NT and implemented by Wine) with the status as an NTSTATUS of facility
// FACILITY_NTWIN32, 0xC007xxxx: RtlNtStatusToDosError turns that back into exactly the Win32
// code, so GetQueuedCompletionStatus fails *with* the packet and GetLastError() = the code,
// which is what a failed overlapped I/O looks like. GetQueuedCompletionStatusEx hands the
// NTSTATUS back in OVERLAPPED_ENTRY::Internal; it is mapped back the same way.
//
// Closing. close() calls CloseHandle once and raises a flag; later calls answer invalid_handle
// without passing the old handle value to Windows, which may by then name another object. A
// call that read the flag just before a concurrent close can still reach the closed value:
// the harness closes a port only once its posters are done, so this window is never used.

#include "platform/windows_api.hpp"  // first: the lean <windows.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <vector>

#include "platform/platform.hpp"
#include "port/native_port.hpp"

namespace iocpbench::port {
namespace {

using NtStatus = LONG;

// ntdll entry points that the SDK headers do not all declare, resolved once.
struct NtApi {
  using SetIoCompletion = NtStatus(NTAPI*)(HANDLE, ULONG_PTR, ULONG_PTR, NtStatus, ULONG_PTR);
  using QueryIoCompletion = NtStatus(NTAPI*)(HANDLE, int, void*, ULONG, ULONG*);
  using StatusToDosError = ULONG(NTAPI*)(NtStatus);
  SetIoCompletion set_io_completion = nullptr;
  QueryIoCompletion query_io_completion = nullptr;
  StatusToDosError status_to_dos_error = nullptr;

  static const NtApi& get() {
    static const NtApi api;
    return api;
  }

 private:
  template <typename F>
  static F resolve(HMODULE ntdll, const char* name) {
    FARPROC proc = ntdll != nullptr ? GetProcAddress(ntdll, name) : nullptr;
    return reinterpret_cast<F>(reinterpret_cast<void*>(proc));
  }
  NtApi() {
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    set_io_completion = resolve<SetIoCompletion>(ntdll, "NtSetIoCompletion");
    query_io_completion = resolve<QueryIoCompletion>(ntdll, "NtQueryIoCompletion");
    status_to_dos_error = resolve<StatusToDosError>(ntdll, "RtlNtStatusToDosError");
  }
};

constexpr NtStatus kFacilityNtWin32Error = static_cast<NtStatus>(0xC0070000u);
constexpr int kIoCompletionBasicInformation = 0;

// A Win32 error code as the NTSTATUS that RtlNtStatusToDosError maps back to it.
NtStatus ntstatus_from_win32(std::uint32_t code) {
  return static_cast<NtStatus>(static_cast<std::uint32_t>(kFacilityNtWin32Error) |
                               (code & 0xFFFFu));
}

// An OVERLAPPED_ENTRY's Internal (the packet's NTSTATUS) as a Win32 code; 0 = success.
std::uint32_t win32_from_ntstatus(ULONG_PTR internal) {
  const auto status = static_cast<NtStatus>(static_cast<std::uint32_t>(internal));
  if (status >= 0) return 0;
  if ((static_cast<std::uint32_t>(status) & 0xFFFF0000u) == 0xC0070000u) {
    return static_cast<std::uint32_t>(status) & 0xFFFFu;
  }
  const auto convert = NtApi::get().status_to_dos_error;
  return convert != nullptr ? static_cast<std::uint32_t>(convert(status))
                            : static_cast<std::uint32_t>(status);
}

DWORD to_milliseconds(Timeout timeout) {
  if (timeout == kInfinite) return INFINITE;
  if (timeout.count() <= 0) return 0;
  return static_cast<DWORD>(std::min<Timeout::rep>(timeout.count(), INFINITE - 1));
}

// port-semantics.md (9) for a remove that returned no packet.
RemoveStatus status_of_failed_remove(DWORD error) {
  switch (error) {
    case WAIT_TIMEOUT: return RemoveStatus::timeout;                 // 258
    case ERROR_ABANDONED_WAIT_0: return RemoveStatus::abandoned;     // 735
    case ERROR_INVALID_PARAMETER: return RemoveStatus::invalid_parameter;  // 87
    case ERROR_INVALID_HANDLE:  // 6
    default: return RemoveStatus::invalid_handle;
  }
}

// The codes with which GQCS itself fails (no packet).
bool is_remove_failure(DWORD error) {
  return error == WAIT_TIMEOUT || error == ERROR_ABANDONED_WAIT_0 ||
         error == ERROR_INVALID_HANDLE || error == ERROR_INVALID_PARAMETER;
}

// Written into the key before a GQCS: Windows writes the key only when it dequeues a packet,
// so a FALSE return with an OVERLAPPED, or with the key changed and an error that is not one of
// GQCS's own, means "a packet whose I/O failed" -- also for a failed packet posted without an
// OVERLAPPED, which the documented test (*lpOverlapped != NULL) cannot see. A failed packet
// without an OVERLAPPED whose status is one of GQCS's own codes reads as that code.
const char kNoPacketMarker = 0;

class Win32Port final : public CompletionPort {
 public:
  Win32Port(HANDLE handle, unsigned concurrency) : handle_(handle), concurrency_(concurrency) {}
  ~Win32Port() override { close(); }
  Win32Port(const Win32Port&) = delete;
  Win32Port& operator=(const Win32Port&) = delete;

  std::string_view backend() const override { return "win32"; }
  unsigned concurrency() const override { return concurrency_; }

  bool post(const Packet& packet) override {
    if (closed_.load(std::memory_order_acquire)) return false;
    const auto overlapped = reinterpret_cast<ULONG_PTR>(packet.context);
    if (packet.status == 0) {
      return PostQueuedCompletionStatus(handle_, packet.bytes, packet.key,
                                        reinterpret_cast<LPOVERLAPPED>(overlapped)) != FALSE;
    }
    const auto set = NtApi::get().set_io_completion;
    if (set == nullptr) return false;
    return set(handle_, packet.key, overlapped, ntstatus_from_win32(packet.status),
               packet.bytes) >= 0;
  }

  RemoveStatus remove(Packet& out, Timeout timeout) override {
    if (closed_.load(std::memory_order_acquire)) return RemoveStatus::invalid_handle;
    HANDLE handle = handle_;  // `this` may be gone when a wait outlives a close (Wine)
    DWORD bytes = 0;
    ULONG_PTR key = reinterpret_cast<ULONG_PTR>(&kNoPacketMarker);
    LPOVERLAPPED overlapped = nullptr;
    if (GetQueuedCompletionStatus(handle, &bytes, &key, &overlapped, to_milliseconds(timeout))) {
      out = {.bytes = bytes, .status = 0, .key = key, .context = overlapped};
      return RemoveStatus::ok;
    }
    const DWORD error = GetLastError();
    const bool key_written = key != reinterpret_cast<ULONG_PTR>(&kNoPacketMarker);
    if (overlapped != nullptr || (key_written && !is_remove_failure(error))) {
      out = {.bytes = bytes, .status = error, .key = key, .context = overlapped};
      return RemoveStatus::io_failed;
    }
    return status_of_failed_remove(error);
  }

  RemoveStatus remove_batch(std::span<Packet> out, std::size_t& removed,
                            Timeout timeout) override {
    removed = 0;
    if (closed_.load(std::memory_order_acquire)) return RemoveStatus::invalid_handle;
    HANDLE handle = handle_;
    OVERLAPPED_ENTRY inline_entries[16];
    std::vector<OVERLAPPED_ENTRY> heap_entries;
    OVERLAPPED_ENTRY* entries = inline_entries;
    if (out.size() > std::size(inline_entries)) {
      heap_entries.resize(out.size());
      entries = heap_entries.data();
    }
    const ULONG capacity = static_cast<ULONG>(std::min<std::size_t>(out.size(), MAXLONG));
    ULONG got = 0;
    // n = 0 goes to Windows too, which refuses it with ERROR_INVALID_PARAMETER.
    if (!GetQueuedCompletionStatusEx(handle, entries, capacity, &got, to_milliseconds(timeout),
                                     FALSE)) {
      return status_of_failed_remove(GetLastError());
    }
    if (out.empty()) return RemoveStatus::invalid_parameter;  // a platform that accepted n = 0
    for (ULONG i = 0; i < got; ++i) {
      out[i] = {.bytes = entries[i].dwNumberOfBytesTransferred,
                .status = win32_from_ntstatus(entries[i].Internal),
                .key = entries[i].lpCompletionKey,
                .context = entries[i].lpOverlapped};
    }
    removed = got;
    return RemoveStatus::ok;
  }

  std::optional<std::size_t> depth() const override {
    const auto query = NtApi::get().query_io_completion;
    if (query == nullptr || closed_.load(std::memory_order_acquire)) return std::nullopt;
    LONG depth = 0;  // IO_COMPLETION_BASIC_INFORMATION { LONG Depth; }
    ULONG length = 0;
    if (query(handle_, kIoCompletionBasicInformation, &depth, sizeof depth, &length) < 0 ||
        depth < 0) {
      return std::nullopt;
    }
    return static_cast<std::size_t>(depth);
  }

  void close() override {
    if (closed_.exchange(true, std::memory_order_acq_rel)) return;
    CloseHandle(handle_);
  }

  PortCounters counters() const override { return {}; }  // the kernel keeps its own

  HANDLE handle() const { return handle_; }

 private:
  HANDLE handle_;
  const unsigned concurrency_;
  std::atomic<bool> closed_{false};
};

}  // namespace

bool native_port_available() { return true; }

std::unique_ptr<CompletionPort> make_native_port(const PortOptions& options) {
  // Concurrency 0 means "the number of processors" to Windows as well; report what it means.
  const unsigned concurrency =
      options.concurrency == 0 ? platform::logical_cpus() : options.concurrency;
  HANDLE handle = CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, options.concurrency);
  if (handle == nullptr) return nullptr;
  return std::make_unique<Win32Port>(handle, concurrency);
}

void* native_handle(CompletionPort& port) {
  auto* win32 = dynamic_cast<Win32Port*>(&port);
  return win32 != nullptr ? win32->handle() : nullptr;
}

}  // namespace iocpbench::port
