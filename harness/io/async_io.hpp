#pragma once
// The asynchronous-I/O transport of the file and socket workloads: one interface, one backend
// per OS, so that each workload is written once (workloads/file_workload.cpp,
// workloads/socket_workload.cpp) and only the OS calls differ.
//
// A transport opens its handles (a data file, or loopback socket pairs), associates them with
// the run's port and submits operations for a *unit* (a file slot, a connection) into that
// unit's own buffer. Each completion arrives as a port packet; done() reads it back as the unit,
// the bytes and the error (0 = success). What the backends are built on:
//   - Linux (file_io_linux.cpp, socket_io_linux.cpp): io_uring rings through io::SourceSet
//     (completion_source_linux.hpp): the completion thread, the port path (`--completion-path
//     port`: the port reads the ring itself) and per-thread rings pumped by their workers.
//   - Windows (file_io_windows.cpp, socket_io_windows.cpp): overlapped I/O through
//     io::OverlappedSource: handles associated with the kernel's port (`win32`), or with a
//     private IOCP whose thread forwards completions into another port.
// Counters that only one OS has (Windows' immediate completions, io_uring's enters) stay in the
// backend, which adds them to the workload's stats with the `completion_source` block.

#include <chrono>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kinds.hpp"
#include "metrics/usage.hpp"
#include "port/completion_port.hpp"
#include "port/worker_io.hpp"

namespace iocpbench::io {

// Where a transport's completions go: the run's port, or per-thread dispatch's worker ports.
struct TransportEnv {
  port::CompletionPort* port = nullptr;
  std::vector<port::CompletionPort*> worker_ports;  // empty: the shared port
  metrics::RoleRegistry* roles = nullptr;
  bool port_reads = false;  // `--completion-path port` (Linux: SourceOptions::port_reads)
  // Whether to ask for FILE_SKIP_COMPLETION_PORT_ON_SUCCESS on the handles (Windows; the
  // workload's resolution of --skip-on-success), and what was requested, for the record.
  bool skip_on_success = false;
  SkipOnSuccess skip_requested = SkipOnSuccess::by_default;
};

// The watchdog's view of a source: operations completed, and packets posted into the port.
struct TransportProgress {
  std::uint64_t completions = 0;
  std::uint64_t posted = 0;
};

// What every transport answers, whichever handles it drives.
// It is also the pool's view of the workers' own I/O (port::WorkerIo): Windows keeps its
// defaults (the kernel queues every completion, and does not cancel a thread's I/O on a
// port-associated handle when it exits: thread-agnostic I/O since Vista); Linux's rings answer
// in RingTransport (source_set_linux.hpp).
class Transport : public port::WorkerIo {
 public:
  Transport() = default;
  virtual ~Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Cancels what is still in flight (bounded wait, so no buffer is written after it is freed),
  // stops the completion source(s) and closes the handles. Idempotent.
  virtual void close() = 0;
  // The workload_stats keys the backend owns: `completion_source` and the counters only this
  // OS has. Valid after close().
  virtual nlohmann::json stats() const = 0;
  // Errors the backend counted (post failures; Windows: immediate failures, short sends).
  virtual std::uint64_t errors() const = 0;
  // The watchdog's counts; false where the backend keeps none live.
  virtual bool progress(TransportProgress& out) const = 0;
};

// --skip-on-success on: whether this OS has FILE_SKIP_COMPLETION_PORT_ON_SUCCESS (Windows), and
// where it has not, the reason to refuse it with.
bool skip_on_success_supported();
const char* skip_on_success_refusal();

// Refuses a dispatch the backend does not implement (Windows: per-thread), before anything is
// opened. Throws BadInput{"--dispatch", ...} naming `workload` ("file", "socket").
void require_dispatch(const TransportEnv& env, const char* workload);

}  // namespace iocpbench::io
