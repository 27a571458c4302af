#pragma once
// A completion source turns asynchronous I/O completions into completion-port packets, which
// is what the Windows kernel does for a handle associated with an IOCP. Linux only
// (io_uring through liburing: thread_source_linux.cpp, feed_source_linux.cpp): on Windows the kernel queues the
// packets itself and the workloads use io/overlapped_windows instead.
//
// The thread path (measured in harness/workloads/README.md): one completion thread owns the ring and
// is the only caller of io_uring_enter. Any thread submits an operation by queueing a pointer
// to it under a short lock; the completion thread turns queued operations into SQEs, submits
// them and reaps CQEs, posting one packet per completion into the port (context = the IoOp,
// bytes = the result, status = the errno). When it has nothing to do it parks in
// io_uring_enter; a submitter that finds it parked rings a doorbell: an eventfd whose read is
// kept armed in the ring. The thread enrols as the `completion_source` role so its CPU time and
// context switches are reported apart from the workers'.
//
// The port path (SourceOptions::port_reads, `--completion-path port`): no completion thread.
// The source is the port's I/O feed (port/io_feed.hpp): the worker that handles a completion
// submits the next operation itself (SQEs written under a short submission lock, the
// io_uring_enter made outside it and combined with other threads', as ReadFile/WSARecv issue
// from the calling thread); the emulated port harvests ready CQEs (memory reads only, under its
// lock) before every operation that would see a queued packet and, while a completion would be
// handed to a waiter, lets its newest waiter wait in epoll on the ring's fd and the doorbell
// and insert what completes by the port's own rule. A handoff to that watcher rings the
// doorbell (an eventfd only the watcher reads) instead of its futex. Kernel and ring features
// used are in describe(). A port that takes no feed gets the thread path, and describe() says so.
//
// Receives by readiness (SourceOptions::readiness_receives, the socket workload's default on
// the port path): io_uring runs a request's completion (its task work) in the thread that
// submitted it, so a worker asleep in the port was woken for every receive it had armed, even
// while C = M, where an IOCP wakes nobody (0.30 of the counted switches at b = 0, C = N, pool
// 2N; perf: futex sleeps ended by task_work_add from io_poll_wake). Instead a receive waits in
// epoll (each socket added once, edge-triggered), whose readiness wakes only a thread waiting
// in epoll_wait: the watcher. Whoever polls the feed next (before every port operation,
// without the port's lock, or the woken watcher) issues the readable receives through the ring
// with MSG_DONTWAIT, where they complete inline, in that enter, with no task work (an EAGAIN
// waits again). The watcher waits in epoll_pwait2 on the sockets, the ring's fd (the other
// completions) and the doorbell. A socket epoll refuses has its receives armed in the ring.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "metrics/usage.hpp"
#include "port/completion_port.hpp"

namespace iocpbench::io {

// One asynchronous operation: the per-I/O data (the OVERLAPPED of Windows). It must stay alive
// and untouched from submit() until its packet has been handled.
struct IoOp {
  enum class Kind : std::uint8_t { read, write, recv, send };
  Kind kind = Kind::read;
  // true: the completion becomes a port packet. false: the source finishes the operation
  // itself (a send: a short one is resubmitted for the rest; then `then` is submitted). A
  // failed operation is always posted, so its owner sees the error.
  bool to_port = true;
  int fd = -1;
  void* buf = nullptr;
  std::uint32_t len = 0;
  std::uint32_t done = 0;  // bytes already transferred (sends the source completes)
  std::uint64_t offset = 0;
  std::int32_t result = 0;  // the CQE's result
  IoOp* then = nullptr;
  // Submitted right behind this operation with IOSQE_IO_LINK: it starts only once this one has
  // fully succeeded; otherwise it completes with ECANCELED (posted like any failure). With a
  // link, a short send is a failure rather than resubmitted (sends use MSG_WAITALL).
  IoOp* linked = nullptr;
  std::uintptr_t key = 0;         // the packet's completion key
  std::uint64_t t_submit_ns = 0;  // set by the submitter
  std::uint64_t t_insert_ns = 0;  // set by the source just before posting (once per CQE batch)
  std::uint32_t index = 0;        // free for the owner
  // Bumped (release) by whoever submits the operation and read (acquire) by whoever reaps its
  // completion: the kernel orders the two, but only through the ring, where neither the C++
  // memory model nor ThreadSanitizer can see it. With the port path the submitter and the
  // reaper are different workers, so this is the edge that makes the reaper's reads of the
  // operation (written by the submitter) ordered. A plain load and store on x86.
  std::uint32_t handoff = 0;
  // The source's, for a receive by readiness (SourceOptions::readiness_receives): whether its
  // socket is in the epoll set (edge-triggered, added once) or epoll refused it (the receive
  // then waits in the ring), whether the kernel reports data a receive left behind, and the
  // receive's state: 0 idle, 1 armed (it waits for the socket), 2 pending (the socket became
  // readable while no receive was armed, or a receive left data behind). Atomic through
  // std::atomic_ref.
  bool in_epoll = false;
  bool epoll_refused = false;
  bool reports_leftover = false;
  std::uint32_t readiness = 0;
};

struct SourceOptions {
  port::CompletionPort* port = nullptr;
  unsigned max_ops = 64;  // operations in flight at once, at most
  metrics::RoleRegistry* roles = nullptr;
  // Ring set-up: try SINGLE_ISSUER + DEFER_TASKRUN (one thread owns the ring) before plain
  // COOP_TASKRUN; the first set the kernel accepts is used and recorded.
  bool defer_taskrun = true;
  // false: no completion thread. The owner thread calls pump(), which submits the queued
  // operations, reaps and posts (the per-thread-port model's "the worker reaps its own ring":
  // no thread hop between the ring and the port). The ring is then set up without
  // SINGLE_ISSUER (it is created on one thread and used from another).
  bool own_thread = true;
  // With own_thread: no completion thread; the port reads the ring itself (above). Falls back
  // to the completion thread where the port takes no feed or the kernel lacks what it needs.
  bool port_reads = false;
  // With port_reads: receives wait for their socket in epoll, not in the ring (the socket
  // workload; see "Receives by readiness" above). Ignored by the thread path.
  bool readiness_receives = false;
};

struct SourceStats {
  std::uint64_t completions = 0;  // CQEs of operations (the doorbell's excluded)
  std::uint64_t posted = 0;       // packets posted to the port
  std::uint64_t enters = 0;       // io_uring_enter calls
  std::uint64_t parks = 0;        // enters that waited for a completion
  std::uint64_t doorbells = 0;    // doorbell rings by submitters
  std::uint64_t max_batch = 0;    // most CQEs reaped at once
  std::uint64_t post_failures = 0;
  std::uint64_t dropped_at_stop = 0;
};

// Several rings' counters as one (per-thread ports: a ring per worker); max_batch is the largest.
inline SourceStats& operator+=(SourceStats& sum, const SourceStats& s) {
  sum.completions += s.completions;
  sum.posted += s.posted;
  sum.enters += s.enters;
  sum.parks += s.parks;
  sum.doorbells += s.doorbells;
  sum.max_batch = sum.max_batch > s.max_batch ? sum.max_batch : s.max_batch;
  sum.post_failures += s.post_failures;
  sum.dropped_at_stop += s.dropped_at_stop;
  return sum;
}

class CompletionSource {
 public:
  virtual ~CompletionSource() = default;
  // From any thread.
  virtual void submit(IoOp& op) = 0;
  // Only without a completion thread (own_thread false), from the one owner thread: submits
  // what is queued, reaps what is ready (waiting up to `wait_us` for a first completion when
  // operations are in flight) and posts it. Returns the packets posted, or -1 at once when
  // nothing is in flight.
  virtual int pump(unsigned /*wait_us*/) { return -1; }
  // Whether operations are in flight, from any thread; true where the source cannot tell
  // without a race (the completion thread's count is its own).
  virtual bool in_flight() const { return true; }
  // Stops the completion thread: operations still in flight are cancelled and their
  // completions dropped (bounded wait). Idempotent; the destructor calls it.
  virtual void stop() = 0;
  virtual SourceStats stats() const = 0;
  // How the source is built, for the results ("io_uring: flags ...").
  virtual std::string describe() const = 0;
};

// Starts the completion thread. Throws std::runtime_error when the OS refuses (with the reason).
std::unique_ptr<CompletionSource> make_completion_source(const SourceOptions& options);

}  // namespace iocpbench::io
