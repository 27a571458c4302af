#include "io/overlapped_windows.hpp"

#include <stdexcept>

#include "metrics/clock.hpp"
#include "port/native_port.hpp"

namespace iocpbench::io {
namespace {

constexpr ULONG_PTR kQuitKey = ~ULONG_PTR{0} - 1;  // the forwarding thread's own stop packet
constexpr ULONG kBatch = 64;

using StatusToDosError = ULONG(NTAPI*)(LONG);

StatusToDosError status_to_dos_error() {
  static const auto fn = reinterpret_cast<StatusToDosError>(reinterpret_cast<void*>(
      GetProcAddress(GetModuleHandleW(L"ntdll.dll"), "RtlNtStatusToDosError")));
  return fn;
}

std::string last_error(const char* what) {
  return std::string(what) + " failed: Windows error " + std::to_string(GetLastError());
}

}  // namespace

std::uint32_t win32_error_of(ULONG_PTR ntstatus) {
  const auto status = static_cast<LONG>(static_cast<std::uint32_t>(ntstatus));
  if (status >= 0) return 0;
  if ((static_cast<std::uint32_t>(status) & 0xFFFF0000u) == 0xC0070000u) {
    return static_cast<std::uint32_t>(status) & 0xFFFFu;  // FACILITY_NTWIN32
  }
  const StatusToDosError convert = status_to_dos_error();
  return convert != nullptr ? static_cast<std::uint32_t>(convert(status))
                            : static_cast<std::uint32_t>(status);
}

OverlappedSource::OverlappedSource(port::CompletionPort& port, metrics::RoleRegistry* roles)
    : port_(port), roles_(roles) {
  if (port::native_handle(port) != nullptr) return;  // the kernel queues into the run's port
  private_port_ = CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 1);
  if (private_port_ == nullptr) throw std::runtime_error(last_error("CreateIoCompletionPort"));
  forwarding_ = true;
  thread_ = std::thread([this] { forward(); });
}

OverlappedSource::~OverlappedSource() {
  stop();
}

void OverlappedSource::associate(HANDLE handle, ULONG_PTR key) {
  HANDLE target = private_port_ != nullptr ? private_port_
                                           : static_cast<HANDLE>(port::native_handle(port_));
  if (CreateIoCompletionPort(handle, target, key, 0) == nullptr) {
    throw std::runtime_error(last_error("CreateIoCompletionPort (associating a handle)"));
  }
}

bool OverlappedSource::post(WinOp& op, std::uint32_t bytes, std::uint32_t status, ULONG_PTR key) {
  op.t_insert_ns = metrics::now_ns();
  port::Packet packet;
  packet.bytes = bytes;
  packet.status = status;
  packet.key = key;
  packet.context = &op;
  posted_by_issuer_.fetch_add(1, std::memory_order_relaxed);
  if (port_.post(packet)) return true;
  post_failures_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void OverlappedSource::forward() {
  if (roles_ != nullptr) roles_->enrol(metrics::Role::completion_source);
  OVERLAPPED_ENTRY entries[kBatch];
  for (;;) {
    ULONG got = 0;
    if (!GetQueuedCompletionStatusEx(private_port_, entries, kBatch, &got, INFINITE, FALSE)) {
      return;  // the private port is gone
    }
    const std::uint64_t now = metrics::now_ns();  // one clock read per batch
    batches_.fetch_add(1, std::memory_order_relaxed);
    if (got > max_batch_.load(std::memory_order_relaxed)) max_batch_.store(got);
    bool quit = false;
    for (ULONG i = 0; i < got; ++i) {
      const OVERLAPPED_ENTRY& e = entries[i];
      if (e.lpCompletionKey == kQuitKey && e.lpOverlapped == nullptr) {
        quit = true;
        continue;
      }
      auto* op = reinterpret_cast<WinOp*>(e.lpOverlapped);
      op->t_insert_ns = now;
      port::Packet packet;
      packet.bytes = e.dwNumberOfBytesTransferred;
      packet.status = win32_error_of(op->ov.Internal);
      packet.key = e.lpCompletionKey;
      packet.context = op;
      if (!port_.post(packet)) post_failures_.fetch_add(1, std::memory_order_relaxed);
      forwarded_.fetch_add(1, std::memory_order_relaxed);
    }
    if (quit) return;
  }
}

void OverlappedSource::stop() {
  if (private_port_ == nullptr) return;
  if (thread_.joinable()) {
    PostQueuedCompletionStatus(private_port_, 0, kQuitKey, nullptr);
    thread_.join();
  }
  // Whatever completed after the quit packet stays behind: counted, never posted.
  OVERLAPPED_ENTRY entries[kBatch];
  ULONG got = 0;
  while (GetQueuedCompletionStatusEx(private_port_, entries, kBatch, &got, 0, FALSE) && got > 0) {
    dropped_at_stop_.fetch_add(got, std::memory_order_relaxed);
  }
  CloseHandle(private_port_);
  private_port_ = nullptr;
}

std::string OverlappedSource::describe() const {
  if (direct()) {
    return "overlapped I/O; handles associated with the run's win32 port: the kernel queues "
           "every completion (no completion thread)";
  }
  return "overlapped I/O into a private IOCP; one completion thread moves completions into the "
         "run's port (GetQueuedCompletionStatusEx, up to 64 a batch, one clock read a batch)";
}

nlohmann::json OverlappedSource::stats() const {
  return {{"design", describe()},
          {"kernel_queues_into_run_port", direct()},
          {"forwarded", forwarded_.load()},
          {"forward_batches", batches_.load()},
          {"max_batch", max_batch_.load()},
          {"posted_by_issuer", posted_by_issuer_.load()},
          {"post_failures", post_failures_.load()},
          {"dropped_at_stop", dropped_at_stop_.load()}};
}

}  // namespace iocpbench::io
