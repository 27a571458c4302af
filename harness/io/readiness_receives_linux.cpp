// Linux only: the port path's receives by readiness (feed_source_linux.hpp,
// completion_source_linux.hpp "Receives by readiness"): a receive waits for its socket in
// epoll, edge-triggered, and is issued through the ring with MSG_DONTWAIT once readable.

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>

#include "io/feed_source_linux.hpp"
#include "io/uring_ring_linux.hpp"

namespace iocpbench::io {

void FeedSource::poll() {
  if (!epoll_recv_ || armed_.load(std::memory_order_relaxed) == 0) return;
  const int fd = epoll_fd_;
  if (fd < 0) return;
  std::array<epoll_event, 32> events;
  const int got = ::epoll_wait(fd, events.data(), static_cast<int>(events.size()), 0);
  issue_readable(events.data(), got, Reader::poller);
}

std::string FeedSource::open_epoll() {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return std::string("epoll_create1: ") + std::strerror(errno);
  for (const auto& [fd, tag] : {std::pair{ring_.ring_fd, uring::kRingTag}, std::pair{doorbell_fd_, uring::kDoorbellTag}}) {
    epoll_event ev{};
    ev.events = EPOLLIN;  // level-triggered: CQEs in the ring, a count in the doorbell
    ev.data.u64 = tag;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      const std::string problem = std::string("epoll_ctl: ") + std::strerror(errno);
      ::close(epoll_fd_);
      epoll_fd_ = -1;
      return problem;
    }
  }
  return {};
}

bool FeedSource::arm_recv(IoOp& op) {
  if (!op.in_epoll) {
    if (op.epoll_refused) return false;
    if (!watch_socket(op)) {
      op.epoll_refused = true;
      return false;
    }
    op.in_epoll = true;
  }
  // After the writes above: the reaper reads them behind the acquire of op.handoff.
  std::atomic_ref<std::uint32_t>(op.handoff).fetch_add(1, std::memory_order_release);
  in_flight_.fetch_add(1, std::memory_order_seq_cst);  // before the port's watcher check
  if (wait_for_socket(op)) return true;
  // Readable already (an edge came while no receive was armed): issued now, by this thread,
  // as ReadFile issues; it completes inline, and the ring's fd wakes the watcher.
  {
    std::lock_guard lock(sq_mutex_);
    prep_readable(op);
    publish_locked();
  }
  enter_pending();
  return true;
}

bool FeedSource::watch_socket(IoOp& op) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;
  ev.data.ptr = &op;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, op.fd, &ev) != 0 &&
      (errno != EEXIST || ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, op.fd, &ev) != 0)) {
    return false;
  }
  op.reports_leftover = tcp_reports_leftover_ && is_tcp(op.fd);
  return true;
}

bool FeedSource::is_tcp(int fd) {
  int domain = 0;
  int type = 0;
  socklen_t len = sizeof domain;
  if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0) return false;
  len = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) return false;
  return (domain == AF_INET || domain == AF_INET6) && type == SOCK_STREAM;
}

bool FeedSource::wait_for_socket(IoOp& op) {
  std::atomic_ref<std::uint32_t> state(op.readiness);
  std::uint32_t s = state.load(std::memory_order_acquire);
  for (;;) {
    if (s == kPending) {
      if (state.compare_exchange_weak(s, kIdle, std::memory_order_acq_rel)) return false;
      continue;
    }
    armed_.fetch_add(1, std::memory_order_relaxed);  // first: an edge may take it at once
    if (state.compare_exchange_weak(s, kArmed, std::memory_order_acq_rel)) return true;
    armed_.fetch_sub(1, std::memory_order_relaxed);
  }
}

void FeedSource::prep_readable(IoOp& op) {  // under sq_mutex_
  io_uring_sqe* sqe = get_sqe();
  io_uring_prep_recv(sqe, op.fd, op.buf, op.len, MSG_DONTWAIT);
  io_uring_sqe_set_data(sqe, &op);
}

void FeedSource::issue_readable(const epoll_event* events, int count, Reader reader) {
  std::array<IoOp*, 32> readable;
  std::size_t n = 0;
  for (int i = 0; i < count; ++i) {
    const epoll_event& ev = events[i];
    if (ev.data.u64 == uring::kDoorbellTag) {
      if (reader == Reader::watcher) {
        std::uint64_t value = 0;
        [[maybe_unused]] const auto r = ::read(doorbell_fd_, &value, sizeof value);
      }
    } else if (ev.data.u64 != uring::kRingTag) {
      if (IoOp* op = take_edge(*static_cast<IoOp*>(ev.data.ptr))) readable[n++] = op;
    }
  }
  if (n == 0) return;
  {
    std::lock_guard lock(sq_mutex_);
    for (std::size_t i = 0; i < n; ++i) prep_readable(*readable[i]);
    publish_locked();
  }
  enter_pending();
}

bool FeedSource::waits_again(IoOp& op, const io_uring_cqe& cqe) {
  if (cqe.res == -EAGAIN) {  // a stale edge (its data taken by the last receive): wait again
    if (!wait_for_socket(op)) reissue_.push_back(&op);  // a new edge came: issue again
    return true;
  }
  // Data left behind brings no new edge: the next arm takes it at once. TCP on 5.19+ says so
  // (IORING_CQE_F_SOCK_NONEMPTY); elsewhere a full buffer may have left some (one EAGAIN at
  // worst). The socket workload's buffer holds all its messages in flight.
  const bool leftover = op.reports_leftover ? (cqe.flags & IORING_CQE_F_SOCK_NONEMPTY) != 0
                                            : cqe.res == static_cast<std::int32_t>(op.len);
  std::uint32_t idle = kIdle;
  if (cqe.res > 0 && leftover) {
    std::atomic_ref<std::uint32_t>(op.readiness)
        .compare_exchange_strong(idle, kPending, std::memory_order_acq_rel);
  }
  return false;
}

IoOp* FeedSource::take_edge(IoOp& op) {
  std::atomic_ref<std::uint32_t> state(op.readiness);
  std::uint32_t s = state.load(std::memory_order_acquire);
  for (;;) {
    if (s == kPending) return nullptr;
    if (s == kArmed) {
      if (state.compare_exchange_weak(s, kIdle, std::memory_order_acq_rel)) {
        armed_.fetch_sub(1, std::memory_order_relaxed);
        return &op;
      }
    } else if (state.compare_exchange_weak(s, kPending, std::memory_order_acq_rel)) {
      return nullptr;
    }
  }
}

}  // namespace iocpbench::io
