#pragma once
// Counters a port keeps about its own scheduling, for the metrics of a run.

#include <cstdint>

namespace iocpbench::port {

struct PortCounters {
  bool available = false;             // false where the backend cannot see them (win32, asio)
  std::uint64_t handoffs = 0;         // inserts handed straight to a waiting thread
  std::uint64_t queued = 0;           // inserts appended to the packet queue
  std::uint64_t max_active = 0;       // high-water of C, the active thread count
  std::uint64_t over_limit_ns = 0;    // time spent with C > M (the resume window)
  std::uint64_t max_depth = 0;        // high-water of the packet queue
  std::uint64_t invariant_violations = 0;  // only counted when the port checks invariants
};

}  // namespace iocpbench::port
