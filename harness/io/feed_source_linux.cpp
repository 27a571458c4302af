// Linux only: the port path's ring and its side of the port (feed_source_linux.hpp).

#include "io/feed_source_linux.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "io/uring_ring_linux.hpp"
#include "metrics/clock.hpp"

namespace iocpbench::io {
namespace {

// How the port path's watcher waits, for describe().
constexpr const char* kEpollWatch =
    "epoll_pwait2 on the ring's fd, the doorbell and the sockets of the receives, which wait "
    "for readiness in epoll (edge-triggered, each socket added at its first receive) and are "
    "issued through the ring with MSG_DONTWAIT by the next thread that polls the feed, "
    "completing inline with no task work";
constexpr const char* kRingWatch = "epoll_pwait2 on the ring's fd and the doorbell";

}  // namespace

FeedSource::FeedSource(const SourceOptions& options) : options_(options) {
  follow_.reserve(options_.max_ops + 16);
  reissue_.reserve(options_.max_ops + 16);
  epoll_recv_ = options_.readiness_receives;
  tcp_reports_leftover_ = uring::kernel_at_least(5, 19);
  // Read only by the watcher, after epoll reports it: never blocks.
  doorbell_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (doorbell_fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  const unsigned entries = uring::round_up_pow2(options_.max_ops + 8);
  // No SINGLE_ISSUER/DEFER_TASKRUN: every worker submits. A completion's task work runs in
  // its submitter; COOP_TASKRUN spares a running submitter the interrupt (it runs the work at
  // its next kernel entry: its next submit, or the next tick), and still wakes one asleep
  // in the port (the kernel wakes an interruptible sleeper for task work either way).
  // IOCPBENCH_PORT_PATH_IPI=1 sets it up without, for comparison.
  const bool coop = std::getenv("IOCPBENCH_PORT_PATH_IPI") == nullptr;
  io_uring_params params{};
  params.flags = IORING_SETUP_CQSIZE | (coop ? IORING_SETUP_COOP_TASKRUN : 0u);
  params.cq_entries = entries * 2;
  int rc = io_uring_queue_init_params(entries, &ring_, &params);
  if (rc == -EINVAL && coop) {  // a kernel before 5.19
    params = io_uring_params{};
    params.flags = IORING_SETUP_CQSIZE;
    params.cq_entries = entries * 2;
    rc = io_uring_queue_init_params(entries, &ring_, &params);
  }
  const char* setup = (params.flags & IORING_SETUP_COOP_TASKRUN) ? "COOP_TASKRUN" : "none";
  if (rc < 0) {
    ::close(doorbell_fd_);
    throw std::runtime_error(std::string("io_uring_queue_init: ") + std::strerror(-rc));
  }
  // A timed wait must not take an SQE (the watcher does not hold the submission lock).
  if ((params.features & IORING_FEAT_EXT_ARG) == 0) {
    io_uring_queue_exit(&ring_);
    ::close(doorbell_fd_);
    throw std::runtime_error("io_uring lacks IORING_FEAT_EXT_ARG (kernel 5.11+)");
  }
  ring_ready_ = true;
  if (std::string problem = open_epoll(); !problem.empty()) {
    io_uring_queue_exit(&ring_);
    ::close(doorbell_fd_);
    throw std::runtime_error(problem);
  }
  description_ = "io_uring read by the port itself, no completion thread (--completion-path "
                 "port): workers submit their own next I/O; every remove harvests ready CQEs; "
                 "while a completion would go to a waiter the newest waiter waits on the ring "
                 "(" + std::string(epoll_recv_ ? kEpollWatch : kRingWatch) +
                 ") and inserts what completes by the port's rule; setup " +
                 std::string(setup) + " (task work runs in the submitter); " +
                 std::to_string(entries) +
                 " entries; kernel " + uring::kernel_release() + "; io_uring features " +
                 uring::feature_names(params.features);
}

FeedSource::~FeedSource() {
  stop();
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (ring_ready_) io_uring_queue_exit(&ring_);
  if (doorbell_fd_ >= 0) ::close(doorbell_fd_);
}

void FeedSource::submit(IoOp& op) {
  if (epoll_recv_ && op.kind == IoOp::Kind::recv && op.to_port && arm_recv(op)) {
    options_.port->feed_submitted();
    return;
  }
  {
    std::lock_guard lock(sq_mutex_);
    prep(op);
    publish_locked();
  }
  enter_pending();
  options_.port->feed_submitted();
}

void FeedSource::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (attached_) options_.port->attach_feed(nullptr);
  attached_ = false;
  if (epoll_fd_ >= 0) {  // a receive only armed in epoll has no buffer in the kernel's hands
    ::close(epoll_fd_);
    epoll_fd_ = -1;
    const std::size_t armed = armed_.exchange(0);
    in_flight_.fetch_sub(armed);
    dropped_.fetch_add(armed, std::memory_order_relaxed);
  }
  // Cancel what is in flight and wait (at most a second) for it, so no buffer is written
  // after its owner frees it.
  std::lock_guard lock(sq_mutex_);
  io_uring_sqe* sqe = get_sqe();
  io_uring_prep_cancel(sqe, nullptr, IORING_ASYNC_CANCEL_ANY);
  io_uring_sqe_set_data64(sqe, uring::kCancelTag);
  io_uring_submit(&ring_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (in_flight_.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    __kernel_timespec ts{0, 10'000'000};
    io_uring_cqe* cqe = nullptr;
    io_uring_wait_cqe_timeout(&ring_, &cqe, &ts);
    drop_ready();
  }
}

SourceStats FeedSource::stats() const {
  SourceStats s;
  s.completions = completions_.load(std::memory_order_relaxed);
  s.posted = posted_.load(std::memory_order_relaxed);
  s.enters = enters_.load(std::memory_order_relaxed) + waits_.load(std::memory_order_relaxed);
  s.parks = waits_.load(std::memory_order_relaxed);
  s.doorbells = doorbells_.load(std::memory_order_relaxed);
  s.max_batch = max_batch_.load(std::memory_order_relaxed);
  return s;
}

std::size_t FeedSource::harvest(port::Packet* out, std::size_t capacity) {
  unsigned head = 0;
  unsigned seen = 0;
  std::size_t n = 0;
  std::uint64_t stamp = 0;
  io_uring_cqe* cqe = nullptr;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    if (n == capacity) break;
    ++seen;
    if (io_uring_cqe_get_data64(cqe) == uring::kCancelTag) continue;
    auto* op = reinterpret_cast<IoOp*>(io_uring_cqe_get_data(cqe));
    (void)std::atomic_ref<std::uint32_t>(op->handoff).load(std::memory_order_acquire);
    if (epoll_recv_ && op->kind == IoOp::Kind::recv && op->in_epoll && waits_again(*op, *cqe)) {
      continue;
    }
    in_flight_.fetch_sub(1, std::memory_order_relaxed);
    completions_.fetch_add(1, std::memory_order_relaxed);
    op->result = cqe->res;
    if (const uring::AfterCompletion next = uring::after_completion(*op, cqe->res); !next.post) {
      if (next.resubmit != nullptr) follow_.push_back(next.resubmit);
      continue;
    }
    if (stamp == 0) stamp = metrics::now_ns();  // one clock read per harvest
    op->t_insert_ns = stamp;
    out[n++] = uring::completion_packet(*op, cqe->res);
  }
  if (seen > 0) io_uring_cq_advance(&ring_, seen);
  resubmit_harvested();
  posted_.fetch_add(n, std::memory_order_relaxed);
  if (n > max_batch_.load(std::memory_order_relaxed)) {
    max_batch_.store(n, std::memory_order_relaxed);
  }
  return n;
}

void FeedSource::resubmit_harvested() {
  if (follow_.empty() && reissue_.empty()) return;
  std::lock_guard lock(sq_mutex_);
  for (IoOp* op : follow_) prep(*op);
  for (IoOp* op : reissue_) prep_readable(*op);  // still in flight: not counted again
  follow_.clear();
  reissue_.clear();
  publish_locked();
}

void FeedSource::wait(const platform::Clock::time_point* deadline) {
  // Not io_uring_cq_ready(): its plain read of the head races the harvest that advances it.
  if (io_uring_smp_load_acquire(ring_.cq.ktail) != io_uring_smp_load_acquire(ring_.cq.khead)) {
    return;
  }
  waits_.fetch_add(1, std::memory_order_relaxed);
  timespec ts{};
  timespec* timeout = nullptr;
  if (deadline != nullptr) {
    const auto left = *deadline - platform::Clock::now();
    if (left <= platform::Clock::duration::zero()) return;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    ts = {static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    timeout = &ts;
  }
  std::array<epoll_event, 32> events;
  const int got = ::epoll_pwait2(epoll_fd_, events.data(), static_cast<int>(events.size()),
                                 timeout, nullptr);
  issue_readable(events.data(), got, Reader::watcher);
}

void FeedSource::interrupt() {
  doorbells_.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(doorbell_fd_, &one, sizeof one);
}

io_uring_sqe* FeedSource::get_sqe() {  // under sq_mutex_
  return uring::sqe_or_submit(ring_, nullptr);
}

void FeedSource::publish_locked() {
  io_uring_sq& sq = ring_.sq;
  const unsigned published = sq.sqe_tail - sq.sqe_head;
  if (published == 0) return;
  sq.sqe_head = sq.sqe_tail;
  io_uring_smp_store_release(sq.ktail, sq.sqe_tail);
  unsubmitted_.fetch_add(published, std::memory_order_seq_cst);
}

void FeedSource::enter_pending() {
  while (unsubmitted_.load(std::memory_order_seq_cst) > 0 &&
         !entering_.exchange(true, std::memory_order_seq_cst)) {
    const unsigned n = unsubmitted_.exchange(0, std::memory_order_seq_cst);
    bool retry = true;
    if (n > 0) {
      // The ring's own fd: no registered-ring flag to pass.
      const int rc = io_uring_enter(static_cast<unsigned>(ring_.ring_fd), n, 0, 0, nullptr);
      ++enters_;
      const unsigned taken = rc > 0 ? static_cast<unsigned>(rc) : 0;
      // What the kernel left in the ring (a short submit, an interrupted or refused enter),
      // not what unsubmitted_ over-counted: counted again for the next enter.
      const unsigned left = std::min(n - std::min(n, taken), sq_unconsumed());
      if (left > 0) unsubmitted_.fetch_add(left, std::memory_order_seq_cst);
      if (rc < 0 && rc != -EINTR) {
        enter_errors_.fetch_add(1, std::memory_order_relaxed);
        retry = false;  // -EBUSY, -EAGAIN: the next submit or flush tries again
      } else if (left > 0 && taken == 0 && rc != -EINTR) {
        retry = false;
      }
    }
    entering_.store(false, std::memory_order_seq_cst);
    if (!retry) return;
  }
}

unsigned FeedSource::sq_unconsumed() const {
  return io_uring_smp_load_acquire(ring_.sq.ktail) - io_uring_smp_load_acquire(ring_.sq.khead);
}

void FeedSource::prep(IoOp& op) {  // under sq_mutex_
  io_uring_sqe* sqe = get_sqe();
  uring::fill_sqe(sqe, op);
  in_flight_.fetch_add(1, std::memory_order_seq_cst);  // before the port's watcher check
  if (op.linked != nullptr) {
    sqe->flags |= IOSQE_IO_LINK;
    prep(*op.linked);
  }
}

void FeedSource::drop_ready() {
  unsigned head = 0;
  unsigned seen = 0;
  io_uring_cqe* cqe = nullptr;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    ++seen;
    const std::uint64_t tag = io_uring_cqe_get_data64(cqe);
    if (tag != uring::kCancelTag) {
      in_flight_.fetch_sub(1, std::memory_order_relaxed);
      completions_.fetch_add(1, std::memory_order_relaxed);
      dropped_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  io_uring_cq_advance(&ring_, seen);
}

}  // namespace iocpbench::io
