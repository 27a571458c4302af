#pragma once
// Linux only: the port path of completion_source_linux.hpp. The ring is the port's I/O feed
// (port/io_feed.hpp); no thread of its own. Submission (any worker) writes SQEs under
// sq_mutex_ and enters the kernel without it (enter_pending: combined, one thread at a time);
// the completion queue is read only under the port's lock (harvest, memory only) and waited on
// by one watcher at a time through epoll (wait), which never consumes a CQE, so a reader that
// takes one first leaves it asleep rather than stranded. The doorbell is an eventfd in that
// epoll set, never in the ring: no harvest can take a wake-up meant for the watcher.
//
// The ring and the port's side are in feed_source_linux.cpp; the receives by readiness
// (SourceOptions::readiness_receives: a receive waits for its socket in epoll, not in the ring)
// in readiness_receives_linux.cpp.

#include <liburing.h>
#include <sys/epoll.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/completion_source_linux.hpp"
#include "platform/platform.hpp"
#include "port/io_feed.hpp"
#include "port/port_lock.hpp"

namespace iocpbench::io {

class FeedSource final : public CompletionSource, public port::IoFeed {
 public:
  explicit FeedSource(const SourceOptions& options);

  ~FeedSource() override;

  bool attach() { return attached_ = options_.port->attach_feed(this); }

  // ---- CompletionSource ----
  void submit(IoOp& op) override;

  void stop() override;

  SourceStats stats() const override;

  std::string describe() const override { return description_; }

  // ---- port::IoFeed ----
  // Without the port's lock: the receives whose socket became readable are issued through the
  // ring with MSG_DONTWAIT, so each completes inline in that io_uring_enter (its CQE posted by
  // the entering thread, with no task work) or fails with EAGAIN (a stale edge whose data the
  // last receive took: harvest waits again). Nothing to do (no system call) when no receive
  // waits in epoll.
  void poll() override;

  // Under the port's lock: reads the completion queue (memory only). A resubmission (the rest
  // of a short send, a send's follow-up, a receive whose stale edge met a new one) is written
  // and published here and entered by flush(), after the lock.
  std::size_t harvest(port::Packet* out, std::size_t capacity) override;

  void flush() override { enter_pending(); }

  bool in_flight() const override { return in_flight_.load(std::memory_order_seq_cst) > 0; }

  // The watcher's wait, in epoll: the ring's fd (a CQE), the doorbell and, with receives by
  // readiness, every socket a receive was armed on. A CQE taken by another thread before the
  // watcher runs leaves the ring's fd unready, and epoll keeps it asleep.
  void wait(const platform::Clock::time_point* deadline) override;

  void interrupt() override;

 private:
  io_uring_sqe* get_sqe();  // under sq_mutex_

  // ---- receives by readiness (completion_source.hpp) ----
  std::string open_epoll();

  // A receive's socket stays in the epoll set, edge-triggered, from its first receive on, so
  // arming one costs no system call (an EPOLLONESHOT re-arm cost an epoll_ctl per message:
  // P5 1.12-1.16 against 1.25-1.28 edge-triggered): each edge is kept in the receive's state.
  enum Readiness : std::uint32_t { kIdle = 0, kArmed = 1, kPending = 2 };

  // From the worker that handled the last one (no port lock). False: epoll refused the socket
  // (no watch left, say), and the caller arms the receive in the ring as before.
  bool arm_recv(IoOp& op);

  // Adds the receive's socket to the epoll set, edge-triggered (added while readable, it is
  // reported at once), and learns whether the kernel says when a receive leaves data behind.
  bool watch_socket(IoOp& op);

  static bool is_tcp(int fd);

  // Arms the receive (true), or takes the pending edge (false: the socket is readable now).
  bool wait_for_socket(IoOp& op);

  void prep_readable(IoOp& op);  // under sq_mutex_

  // What epoll reported (poll() or the watcher's wait, without the port's lock): the armed
  // receives among them are issued now, through the ring; an edge with no receive armed is
  // kept for the next arm. Only the watcher reads the doorbell's count (level-triggered: read,
  // or every later wait returns at once); a poller that took it would leave the watcher asleep
  // through the interrupt meant for it.
  enum class Reader { poller, watcher };
  void issue_readable(const epoll_event* events, int count, Reader reader);

  // An edge on a receive's socket: the armed receive, now to issue (it leaves the armed count),
  // or nullptr with the edge kept (kPending) for the receive's next arm.
  IoOp* take_edge(IoOp& op);
  // Under the port's lock (harvest): a receive by readiness's CQE. True: it was a stale edge
  // (EAGAIN), and the receive waits again or is queued to issue again (reissue_). False: a
  // real completion, with any data it left behind kept as a pending edge.
  bool waits_again(IoOp& op, const io_uring_cqe& cqe);

  // Under sq_mutex_: publishes the SQEs written since the last publish (the SQ tail), as
  // io_uring_submit does before it enters, and counts them for enter_pending(), which enters
  // for them after the lock is dropped. A submit holds the lock for the SQE writes only, never
  // across the syscall: held across it, the lock outlasted a waiter's spin and put it to sleep
  // (16 of the workers' 20 futex sleeps in a file run at b = 0, C = N, pool 2N, perf
  // sched_switch stacks), a switch an IOCP's ReadFile never makes.
  void publish_locked();

  // Not under sq_mutex_ nor the port's lock: every kernel entry for submissions on the shared
  // ring comes through here. Enters combine: a thread that finds another in io_uring_enter
  // leaves its entries to it, and the one inside enters again, for all of them, before it
  // leaves. Two workers entering at once spun on the kernel's ring lock (ctx->uring_lock): 29%
  // of the CPU samples of the file workload at 4 KiB, no work, with a 140k IOPS device (perf).
  // A worker's read is still issued at once: by itself, or by the thread already entering.
  // unsubmitted_ only ever over-counts (the kernel submits at most what the ring holds). What
  // the kernel did not take (a short or failed enter) is counted again for the next enter; an
  // interrupted one is retried at once.
  void enter_pending();

  // SQEs published to the kernel and not yet consumed by it.
  unsigned sq_unconsumed() const;

  void prep(IoOp& op);  // under sq_mutex_

  // At stop, detached from the port: completions are dropped.
  void drop_ready();
  // After a harvest: what it collected to submit (follow_, reissue_), written and published.
  void resubmit_harvested();

  SourceOptions options_;
  io_uring ring_{};
  bool ring_ready_ = false;
  bool attached_ = false;
  bool stopped_ = false;
  std::string description_;
  int doorbell_fd_ = -1;
  // Guards the SQ ring's userspace side (SQE writes, the tail): held for those writes only
  // (publish_locked). The port's own lock spins (about 29 us, backing off) before it sleeps, so
  // a worker waiting to submit almost never switches.
  port::PortLock sq_mutex_;
  std::vector<IoOp*> follow_;   // harvest's resubmissions (under the port's lock)
  std::vector<IoOp*> reissue_;  // harvest's receives to issue again (under the port's lock)
  bool epoll_recv_ = false;
  bool tcp_reports_leftover_ = false;  // IORING_CQE_F_SOCK_NONEMPTY: Linux 5.19+
  int epoll_fd_ = -1;
  std::atomic<std::size_t> armed_{0};  // receives armed in epoll, not yet reported
  std::atomic<std::size_t> in_flight_{0};
  std::atomic<unsigned> unsubmitted_{0};  // published, not yet entered for (enter_pending())
  std::atomic<bool> entering_{false};     // a thread is in enter_pending()'s io_uring_enter
  std::atomic<std::uint64_t> completions_{0}, posted_{0}, enters_{0}, waits_{0}, doorbells_{0},
      max_batch_{0}, dropped_{0}, enter_errors_{0};
};

}  // namespace iocpbench::io
