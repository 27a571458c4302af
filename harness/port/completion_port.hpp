#pragma once
// The completion-port interface. Every backend (the emulated port, the kernel's IOCP, and the
// comparison dispatchers) implements it, so workloads and the conformance suite are written once.

#include <cstddef>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "port/list_timeline.hpp"
#include "port/packet.hpp"
#include "port/port_counters.hpp"
#include "port/port_rules.hpp"

namespace iocpbench::port {

class IoFeed;  // io_feed.hpp

class CompletionPort {
 public:
  virtual ~CompletionPort() = default;

  virtual std::string_view backend() const = 0;
  // The effective concurrency value M (0 at creation resolves to the logical CPU count).
  virtual unsigned concurrency() const = 0;

  // Insert a packet (PostQueuedCompletionStatus). Never blocks. False once the port is closed.
  virtual bool post(const Packet& packet) = 0;

  // GetQueuedCompletionStatus: the calling thread becomes associated with this port.
  virtual RemoveStatus remove(Packet& out, Timeout timeout) = 0;

  // GetQueuedCompletionStatusEx: up to out.size() packets, one concurrency slot. `removed` is
  // set to the number of entries filled (each carries its own status).
  virtual RemoveStatus remove_batch(std::span<Packet> out, std::size_t& removed,
                                    Timeout timeout) = 0;

  // |E|, where the backend can tell.
  virtual std::optional<std::size_t> depth() const = 0;

  // Close the port (the last handle): waiters return `abandoned`, later calls `invalid_handle`,
  // queued packets are discarded. Idempotent.
  virtual void close() = 0;

  virtual PortCounters counters() const = 0;

  // The lists over time (list_timeline.hpp), where the backend keeps them (the emulated port,
  // with PortOptions::list_timeline); nullopt / nothing elsewhere.
  virtual std::optional<ListTotals> list_totals() const { return std::nullopt; }
  // Starts a record of the next `max` transitions (replacing the last one).
  virtual void record_list_events(std::size_t /*max*/) {}
  virtual std::vector<ListEvent> list_events(bool& cut) const {
    cut = false;
    return {};
  }

  // I/O completions this port reads itself (io_feed.hpp); nullptr detaches the feed, which
  // must outlive its attachment. False where the backend takes none: the kernel's IOCP queues
  // completions itself, and the comparison dispatchers have no waiter stack to hand them to.
  virtual bool attach_feed(IoFeed* /*feed*/) { return false; }
  // The feed's owner, after it submitted an operation: a port that keeps a watcher starts one
  // where a completion would now find a waiter and nobody watches. Cheap when there is one.
  virtual void feed_submitted() {}
};

// emulated_fifo_wakeup, emulated_no_cap, emulated_no_block_release: the emulated port with one
// IOCP property removed (port_rules.hpp), to measure what that property is worth.
enum class Backend {
  emulated,
  win32,
  condvar,
  asio,
  emulated_fifo_wakeup,
  emulated_no_cap,
  emulated_no_block_release,
};

std::optional<Backend> parse_backend(std::string_view name);
std::string_view to_string(Backend backend);
// "emulated, win32, condvar, asio, emulated-fifo-wakeup, ...": every name parse_backend takes.
std::string backend_names();
// Test names and messages show the backend's name (GoogleTest prints parameters with it).
inline std::ostream& operator<<(std::ostream& out, Backend backend) { return out << to_string(backend); }
// The backend a user gets without asking: the kernel's IOCP on Windows, the emulated port elsewhere.
Backend default_backend();
bool backend_available(Backend backend);

struct PortOptions {
  unsigned concurrency = 0;       // M; 0 = logical CPUs
  bool check_invariants = false;  // emulated: count violations of the port invariant (tests)
  PortRules rules{};              // emulated: which kernel rules apply (all: the faithful port)
  bool list_timeline = false;     // emulated: keep the lists over time (list_timeline.hpp)
};

// nullptr when the backend is not built on this OS.
std::unique_ptr<CompletionPort> make_port(Backend backend, const PortOptions& options);

}  // namespace iocpbench::port
