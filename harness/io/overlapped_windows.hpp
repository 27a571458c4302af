#pragma once
// Windows only: how the file and socket workloads' overlapped I/O reaches the run's port.
//
// - Port `win32` (the kernel's IOCP): each file or socket handle is associated with the run's
//   port itself (CreateIoCompletionPort(handle, port, key)), and the kernel queues one packet
//   per completion: context = the OVERLAPPED (the WinOp), bytes, status; nothing in between.
// - Any other port (`emulated`, `condvar`, `asio`): the handles are associated with a private
//   IOCP, and one completion thread (enrolled as the `completion_source` role, as the io_uring
//   thread is on Linux) moves completions from it into the run's port in batches
//   (GetQueuedCompletionStatusEx, up to 64 at once), stamping the insert time once per batch.
//
// Either way a packet is {bytes, status (a Win32 error, 0 = success), key, context = WinOp*}.

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "metrics/usage.hpp"
#include "platform/windows_api.hpp"
#include "port/completion_port.hpp"

namespace iocpbench::io {

// One overlapped operation. The OVERLAPPED comes first: a packet's context is the WinOp.
struct WinOp {
  OVERLAPPED ov{};
  std::uint64_t t_submit_ns = 0;
  std::uint64_t t_insert_ns = 0;  // stamped by the forwarding thread; 0 when the kernel queued it
  std::uint32_t index = 0;        // free for the owner
  std::uint32_t kind = 0;         // free for the owner
  // Clears the OVERLAPPED for a new operation (keeps nothing: hEvent is set per issue).
  void reset(std::uint64_t offset = 0) {
    ov = OVERLAPPED{};
    ov.Offset = static_cast<DWORD>(offset);
    ov.OffsetHigh = static_cast<DWORD>(offset >> 32);
  }
  // Still owned by the kernel (ReadFile/WSARecv set Internal to STATUS_PENDING until done).
  bool pending() const {
    return static_cast<std::uint32_t>(ov.Internal) == 0x103u;  // STATUS_PENDING
  }
};

// An NTSTATUS (OVERLAPPED::Internal) as a Win32 error code; 0 for success.
std::uint32_t win32_error_of(ULONG_PTR ntstatus);

class OverlappedSource {
 public:
  // Throws std::runtime_error when Windows refuses the private port or the thread.
  OverlappedSource(port::CompletionPort& port, metrics::RoleRegistry* roles);
  ~OverlappedSource();
  OverlappedSource(const OverlappedSource&) = delete;
  OverlappedSource& operator=(const OverlappedSource&) = delete;

  // Associates a file or socket handle; its completions become packets with `key`.
  void associate(HANDLE handle, ULONG_PTR key);
  // True: the kernel queues completions straight into the run's (win32) port.
  bool direct() const { return !forwarding_; }
  // A completion the issuer learnt of itself (an immediate failure, or an immediate success
  // with FILE_SKIP_COMPLETION_PORT_ON_SUCCESS): posted into the run's port like the others.
  bool post(WinOp& op, std::uint32_t bytes, std::uint32_t status, ULONG_PTR key);
  // Stops the forwarding thread (completions still in the private port are dropped and
  // counted). Idempotent.
  void stop();
  std::string describe() const;
  nlohmann::json stats() const;
  std::uint64_t post_failures() const { return post_failures_.load(); }

 private:
  void forward();

  port::CompletionPort& port_;
  metrics::RoleRegistry* roles_;
  HANDLE private_port_ = nullptr;
  bool forwarding_ = false;
  std::thread thread_;
  std::atomic<std::uint64_t> forwarded_{0}, batches_{0}, max_batch_{0}, posted_by_issuer_{0};
  std::atomic<std::uint64_t> post_failures_{0}, dropped_at_stop_{0};
};

}  // namespace iocpbench::io
