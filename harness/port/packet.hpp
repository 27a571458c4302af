#pragma once
// A completion packet and the outcome of removing one: the vocabulary every backend shares.

#include <chrono>
#include <cstdint>

namespace iocpbench::port {

// What GetQueuedCompletionStatus hands back: bytes transferred, the completion key, the
// per-I/O context (the OVERLAPPED on Windows) and the I/O status (0 = success).
struct Packet {
  std::uint32_t bytes = 0;
  std::uint32_t status = 0;
  std::uintptr_t key = 0;
  void* context = nullptr;
};

// Result mapping of port-semantics.md (9): a failed I/O still returns its packet, which is
// how a caller tells "the I/O failed" from "the remove failed".
enum class RemoveStatus {
  ok,                 // a packet with success status
  io_failed,          // a packet whose status is an error; the packet is returned
  timeout,            // no packet within the timeout (WAIT_TIMEOUT, 258)
  abandoned,          // the port was closed while this thread waited (ERROR_ABANDONED_WAIT_0)
  invalid_handle,     // the port is closed
  invalid_parameter,  // e.g. a batch of zero entries
};

const char* to_string(RemoveStatus status);

// A removed packet's status as remove() reports it (9): ok, or io_failed with the packet.
inline RemoveStatus status_of(const Packet& packet) {
  return packet.status == 0 ? RemoveStatus::ok : RemoveStatus::io_failed;
}

using Timeout = std::chrono::milliseconds;
inline constexpr Timeout kInfinite = Timeout::max();

}  // namespace iocpbench::port
