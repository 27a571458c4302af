// The io_uring completion source (see completion_source.hpp for the design).

#include <liburing.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "io/completion_source.hpp"
#include "metrics/clock.hpp"
#include "port/io_feed.hpp"
#include "port/port_lock.hpp"

namespace iocpbench::io {
namespace {

constexpr std::uint64_t kDoorbellTag = 1;  // user_data of the doorbell's eventfd read
constexpr std::uint64_t kCancelTag = 2;    // user_data of the cancel-all at stop
constexpr std::uint64_t kRingTag = 3;      // epoll: the ring's own fd (a CQE is ready)
constexpr const char* kEpollWatch =
    "epoll_pwait2 on the ring's fd, the doorbell and the sockets of the receives, which wait "
    "for readiness in epoll (edge-triggered, each socket added at its first receive) and are "
    "issued through the ring with MSG_DONTWAIT by the next thread that polls the feed, "
    "completing inline with no task work";
constexpr const char* kRingWatch = "epoll_pwait2 on the ring's fd and the doorbell";

// One operation's SQE, for both paths: the rest of the transfer (op.done bytes are already done)
// and the release bump of op.handoff that orders the submitter's writes before the reaper's reads.
void fill_sqe(io_uring_sqe* sqe, IoOp& op) {
    auto* buf = static_cast<char*>(op.buf) + op.done;
    const unsigned len = op.len - op.done;
    switch (op.kind) {
      case IoOp::Kind::read:
        io_uring_prep_read(sqe, op.fd, buf, len, op.offset + op.done);
        break;
      case IoOp::Kind::write:
        io_uring_prep_write(sqe, op.fd, buf, len, op.offset + op.done);
        break;
      case IoOp::Kind::recv:
        io_uring_prep_recv(sqe, op.fd, buf, len, 0);
        break;
      case IoOp::Kind::send:
        io_uring_prep_send(sqe, op.fd, buf, len, MSG_NOSIGNAL | MSG_WAITALL);
        break;
    }
    std::atomic_ref<std::uint32_t>(op.handoff).fetch_add(1, std::memory_order_release);
    io_uring_sqe_set_data(sqe, &op);
}

unsigned round_up_pow2(unsigned v) {
  unsigned p = 1;
  while (p < v) p <<= 1;
  return p;
}

class UringSource final : public CompletionSource {
 public:
  explicit UringSource(const SourceOptions& options) : options_(options) {
    if (options_.port == nullptr) throw std::invalid_argument("completion source needs a port");
    pending_.reserve(options_.max_ops + 16);
    taken_.reserve(options_.max_ops + 16);
    if (!options_.own_thread) {  // threadless: the owner pumps; no doorbell, no thread
      if (std::string problem = init_ring(); !problem.empty()) throw std::runtime_error(problem);
      description_ = "io_uring reaped by its owner thread (no completion thread); " + description_;
      return;
    }
    doorbell_fd_ = ::eventfd(0, EFD_CLOEXEC);
    if (doorbell_fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
    // The ring is created on the completion thread: with SINGLE_ISSUER the creator is the
    // issuer, and with DEFER_TASKRUN only it may reap.
    std::promise<std::string> ready;
    auto started = ready.get_future();
    thread_ = std::thread([this, &ready] { run(ready); });
    const std::string problem = started.get();
    if (!problem.empty()) {
      thread_.join();
      ::close(doorbell_fd_);
      throw std::runtime_error(problem);
    }
  }

  ~UringSource() override {
    stop();
    if (doorbell_fd_ >= 0) ::close(doorbell_fd_);
  }

  int pump(unsigned wait_us) override {
    if (options_.own_thread || stopped_) return -1;
    take_pending();
    if (in_flight_ == 0) return -1;
    const std::uint64_t before = posted_.load(std::memory_order_relaxed);
    int rc = 0;
    if (io_uring_cq_ready(&ring_) > 0 || wait_us == 0) {
      rc = io_uring_submit(&ring_);  // completions already there: no wait
    } else {
      __kernel_timespec ts{0, static_cast<long long>(wait_us) * 1000};
      io_uring_cqe* cqe = nullptr;
      rc = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &ts, nullptr);
      bump(parks_);
    }
    bump(enters_);
    (void)rc;  // -ETIME / -EINTR: nothing ready yet; a broken ring shows as no progress
    const unsigned n = reap(false);
    if (n > max_batch_.load(std::memory_order_relaxed)) max_batch_.store(n, std::memory_order_relaxed);
    return static_cast<int>(posted_.load(std::memory_order_relaxed) - before);
  }

  void submit(IoOp& op) override {
    {
      std::lock_guard lock(mutex_);
      pending_.push_back(&op);
    }
    if (!options_.own_thread) return;  // the owner's next pump() submits it
    if (parked_.load(std::memory_order_seq_cst) && parked_.exchange(false)) {
      doorbells_.fetch_add(1, std::memory_order_relaxed);
      ring_doorbell();
    }
  }

  void stop() override {
    if (!options_.own_thread) {
      if (!stopped_) shutdown_ring();
      stopped_ = true;
      return;
    }
    if (!thread_.joinable()) return;
    stop_.store(true, std::memory_order_seq_cst);
    ring_doorbell();
    thread_.join();
  }

  SourceStats stats() const override {
    SourceStats s;
    s.completions = completions_.load(std::memory_order_relaxed);
    s.posted = posted_.load(std::memory_order_relaxed);
    s.enters = enters_.load(std::memory_order_relaxed);
    s.parks = parks_.load(std::memory_order_relaxed);
    s.doorbells = doorbells_.load(std::memory_order_relaxed);
    s.max_batch = max_batch_.load(std::memory_order_relaxed);
    s.post_failures = post_failures_.load(std::memory_order_relaxed);
    s.dropped_at_stop = dropped_.load(std::memory_order_relaxed);
    return s;
  }

  std::string describe() const override { return description_; }
  void note(const std::string& prefix) { description_ = prefix + description_; }

 private:
  void ring_doorbell() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(doorbell_fd_, &one, sizeof one);
  }

  // Relaxed counters written by the completion thread only.
  static void bump(std::atomic<std::uint64_t>& counter, std::uint64_t by = 1) {
    counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }

  std::string init_ring() {
    const unsigned entries = round_up_pow2(options_.max_ops + 8);
    struct Attempt {
      unsigned flags;
      const char* name;
    };
    const Attempt attempts[] = {
        {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_COOP_TASKRUN,
         "SINGLE_ISSUER|DEFER_TASKRUN|COOP_TASKRUN"},
        {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, "SINGLE_ISSUER|DEFER_TASKRUN"},
        {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN, "SINGLE_ISSUER|COOP_TASKRUN"},
        {IORING_SETUP_COOP_TASKRUN, "COOP_TASKRUN"},
        {0, "none"},
    };
    int rc = -EINVAL;
    for (const auto& attempt : attempts) {
      if (!options_.defer_taskrun && (attempt.flags & IORING_SETUP_DEFER_TASKRUN)) continue;
      if (!options_.own_thread && (attempt.flags & IORING_SETUP_SINGLE_ISSUER)) continue;
      io_uring_params params{};
      params.flags = attempt.flags;
      params.cq_entries = entries * 2;
      params.flags |= IORING_SETUP_CQSIZE;
      rc = io_uring_queue_init_params(entries, &ring_, &params);
      if (rc == 0) {
        description_ = std::string(options_.own_thread
                                       ? "io_uring, completion thread is the only submitter; setup "
                                       : "setup ") +
                       attempt.name + "; " + std::to_string(entries) + " entries";
        return {};
      }
      if (rc != -EINVAL) break;
    }
    return std::string("io_uring_queue_init: ") + std::strerror(-rc) +
           (rc == -EPERM || rc == -ENOSYS ? " (io_uring disabled on this system?)" : "");
  }

  io_uring_sqe* get_sqe() {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    while (sqe == nullptr) {  // cannot happen with max_ops respected, but never lose an op
      io_uring_submit(&ring_);
      bump(enters_);
      sqe = io_uring_get_sqe(&ring_);
    }
    return sqe;
  }

  void prep(IoOp& op) {
    io_uring_sqe* sqe = get_sqe();
    fill_sqe(sqe, op);
    ++in_flight_;
    if (op.linked != nullptr) {
      sqe->flags |= IOSQE_IO_LINK;
      prep(*op.linked);
    }
  }

  void arm_doorbell() {
    io_uring_sqe* sqe = get_sqe();
    io_uring_prep_read(sqe, doorbell_fd_, &doorbell_value_, sizeof doorbell_value_, 0);
    io_uring_sqe_set_data64(sqe, kDoorbellTag);
    doorbell_armed_ = true;
  }

  // Queued operations become SQEs. Returns how many.
  std::size_t take_pending() {
    {
      std::lock_guard lock(mutex_);
      if (pending_.empty()) return 0;
      pending_.swap(taken_);  // both keep their reserved capacity: no allocation
    }
    for (IoOp* op : taken_) prep(*op);
    const std::size_t n = taken_.size();
    taken_.clear();
    return n;
  }

  bool pending_empty() {
    std::lock_guard lock(mutex_);
    return pending_.empty();
  }

  // Handles every CQE ready now. Returns how many.
  unsigned reap(bool dropping) {
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_cqe* cqe = nullptr;
    std::uint64_t stamp = 0;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      const std::uint64_t tag = io_uring_cqe_get_data64(cqe);
      if (tag == kDoorbellTag) {
        doorbell_armed_ = false;
        if (!stop_.load(std::memory_order_relaxed) && !dropping && options_.own_thread) {
          arm_doorbell();
        }
        continue;
      }
      if (tag == kCancelTag) continue;
      auto* op = reinterpret_cast<IoOp*>(io_uring_cqe_get_data(cqe));
      (void)std::atomic_ref<std::uint32_t>(op->handoff).load(std::memory_order_acquire);
      --in_flight_;
      bump(completions_);
      op->result = cqe->res;
      if (dropping) {
        bump(dropped_);
        continue;
      }
      if (!op->to_port && cqe->res > 0) {
        op->done += static_cast<std::uint32_t>(cqe->res);
        if (op->done >= op->len) {
          if (op->then != nullptr) prep(*op->then);
          continue;
        }
        if (op->linked == nullptr) {
          prep(*op);  // a short send: the rest
          continue;
        }
        // Short with a link: the linked operation was cancelled; post this one as failed.
      }
      if (stamp == 0) stamp = metrics::now_ns();  // one clock read per batch
      op->t_insert_ns = stamp;
      port::Packet packet;
      packet.bytes = cqe->res > 0 ? static_cast<std::uint32_t>(cqe->res) : 0;
      packet.status =
          cqe->res < 0 ? static_cast<std::uint32_t>(-cqe->res) : (!op->to_port ? EPIPE : 0);
      if (!op->to_port) packet.bytes = op->done;
      packet.key = op->key;
      packet.context = op;
      if (options_.port->post(packet)) {
        bump(posted_);
      } else {
        bump(post_failures_);
      }
    }
    io_uring_cq_advance(&ring_, seen);
    return seen;
  }

  void run(std::promise<std::string>& ready) {
    if (options_.roles != nullptr) options_.roles->enrol(metrics::Role::completion_source);
    if (std::string problem = init_ring(); !problem.empty()) {
      ready.set_value(problem);
      return;
    }
    arm_doorbell();
    io_uring_submit(&ring_);
    ready.set_value({});

    bool idle = false;
    while (!stop_.load(std::memory_order_acquire)) {
      const std::size_t queued = take_pending();
      int rc = 0;
      if (queued == 0 && idle) {
        // Park: announce it, then look once more for work queued meanwhile (Dekker with
        // submit(): one side always sees the other).
        parked_.store(true, std::memory_order_seq_cst);
        if (!pending_empty() || stop_.load(std::memory_order_seq_cst)) {
          parked_.store(false, std::memory_order_relaxed);
          idle = false;
          continue;
        }
        bump(parks_);
        rc = io_uring_submit_and_wait(&ring_, 1);
        parked_.store(false, std::memory_order_relaxed);
      } else {
        rc = io_uring_submit_and_get_events(&ring_);
      }
      bump(enters_);
      if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY && rc != -ETIME) {
        // The ring is unusable; nothing sensible is left but to stop reaping.
        break;
      }
      const unsigned n = reap(false);
      if (n > max_batch_.load(std::memory_order_relaxed)) {
        max_batch_.store(n, std::memory_order_relaxed);
      }
      idle = n == 0;
    }
    shutdown_ring();
  }

  // Cancels whatever is still in flight and waits (at most a second) for it to finish, so no
  // buffer is written after the owner frees it.
  void shutdown_ring() {
    take_pending();  // submitted ops are in flight until cancelled: count them
    if (in_flight_ > 0 || doorbell_armed_) {
      io_uring_sqe* sqe = get_sqe();
      io_uring_prep_cancel(sqe, nullptr, IORING_ASYNC_CANCEL_ANY);
      io_uring_sqe_set_data64(sqe, kCancelTag);
      io_uring_submit(&ring_);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      while ((in_flight_ > 0 || doorbell_armed_) && std::chrono::steady_clock::now() < deadline) {
        __kernel_timespec ts{0, 10'000'000};
        io_uring_cqe* cqe = nullptr;
        io_uring_wait_cqe_timeout(&ring_, &cqe, &ts);
        reap(true);
      }
    }
    io_uring_queue_exit(&ring_);
  }

  SourceOptions options_;
  io_uring ring_{};
  std::string description_;
  std::thread thread_;
  int doorbell_fd_ = -1;
  std::uint64_t doorbell_value_ = 0;
  bool doorbell_armed_ = false;
  bool stopped_ = false;  // threadless: the ring is gone
  std::size_t in_flight_ = 0;

  std::mutex mutex_;
  std::vector<IoOp*> pending_;
  std::vector<IoOp*> taken_;
  std::atomic<bool> parked_{false};
  std::atomic<bool> stop_{false};

  std::atomic<std::uint64_t> completions_{0}, posted_{0}, enters_{0}, parks_{0}, doorbells_{0},
      max_batch_{0}, post_failures_{0}, dropped_{0};
};


// What the kernel offers that the port path relies on or records.
std::string kernel_release() {
  utsname u{};
  return ::uname(&u) == 0 ? std::string(u.release) : std::string("unknown");
}

bool kernel_at_least(int major, int minor) {
  int have_major = 0;
  int have_minor = 0;
  if (std::sscanf(kernel_release().c_str(), "%d.%d", &have_major, &have_minor) != 2) return false;
  return have_major > major || (have_major == major && have_minor >= minor);
}

std::string feature_names(unsigned features) {
  struct Name {
    unsigned bit;
    const char* name;
  };
  const Name names[] = {{IORING_FEAT_SINGLE_MMAP, "SINGLE_MMAP"}, {IORING_FEAT_NODROP, "NODROP"},
                        {IORING_FEAT_SUBMIT_STABLE, "SUBMIT_STABLE"},
                        {IORING_FEAT_FAST_POLL, "FAST_POLL"}, {IORING_FEAT_EXT_ARG, "EXT_ARG"},
                        {IORING_FEAT_NATIVE_WORKERS, "NATIVE_WORKERS"}};
  std::string text;
  for (const auto& n : names) {
    if ((features & n.bit) == 0) continue;
    if (!text.empty()) text += '|';
    text += n.name;
  }
  return text.empty() ? "none" : text;
}

// The port path (completion_source.hpp): the ring is the port's feed; no thread of its own.
// Submission (any worker) writes SQEs under sq_mutex_ and enters the kernel without it
// (enter_pending: combined, one thread at a time); the completion queue is read only under the
// port's lock (harvest, memory only) and waited on by one watcher at a time through epoll
// (wait), which never consumes a CQE, so a reader that takes one first leaves it asleep
// rather than stranded. The doorbell is an eventfd in that epoll set, never in the ring: no
// harvest can take a wake-up meant for the watcher.
class FeedSource final : public CompletionSource, public port::IoFeed {
 public:
  explicit FeedSource(const SourceOptions& options) : options_(options) {
    follow_.reserve(options_.max_ops + 16);
    reissue_.reserve(options_.max_ops + 16);
    epoll_recv_ = options_.readiness_receives;
    tcp_reports_leftover_ = kernel_at_least(5, 19);
    // Read only by the watcher, after epoll reports it: never blocks.
    doorbell_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (doorbell_fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
    const unsigned entries = round_up_pow2(options_.max_ops + 8);
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
                   " entries; kernel " + kernel_release() + "; io_uring features " +
                   feature_names(params.features);
  }

  ~FeedSource() override {
    stop();
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
    if (ring_ready_) io_uring_queue_exit(&ring_);
    if (doorbell_fd_ >= 0) ::close(doorbell_fd_);
  }

  bool attach() { return attached_ = options_.port->attach_feed(this); }

  // ---- CompletionSource ----
  void submit(IoOp& op) override {
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

  void stop() override {
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
    io_uring_sqe_set_data64(sqe, kCancelTag);
    io_uring_submit(&ring_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (in_flight_.load() > 0 && std::chrono::steady_clock::now() < deadline) {
      __kernel_timespec ts{0, 10'000'000};
      io_uring_cqe* cqe = nullptr;
      io_uring_wait_cqe_timeout(&ring_, &cqe, &ts);
      drop_ready();
    }
  }

  SourceStats stats() const override {
    SourceStats s;
    s.completions = completions_.load(std::memory_order_relaxed);
    s.posted = posted_.load(std::memory_order_relaxed);
    s.enters = enters_.load(std::memory_order_relaxed) + waits_.load(std::memory_order_relaxed);
    s.parks = waits_.load(std::memory_order_relaxed);
    s.doorbells = doorbells_.load(std::memory_order_relaxed);
    s.max_batch = max_batch_.load(std::memory_order_relaxed);
    return s;
  }

  std::string describe() const override { return description_; }

  // ---- port::IoFeed ----
  // Without the port's lock: the receives whose socket became readable are issued through the
  // ring with MSG_DONTWAIT, so each completes inline in that io_uring_enter (its CQE posted by
  // the entering thread, with no task work) or fails with EAGAIN (a stale edge whose data the
  // last receive took: harvest waits again). Nothing to do (no system call) when no receive
  // waits in epoll.
  void poll() override {
    if (!epoll_recv_ || armed_.load(std::memory_order_relaxed) == 0) return;
    const int fd = epoll_fd_;
    if (fd < 0) return;
    std::array<epoll_event, 32> events;
    const int got = ::epoll_wait(fd, events.data(), static_cast<int>(events.size()), 0);
    issue_readable(events.data(), got, Reader::poller);
  }

  // Under the port's lock: reads the completion queue (memory only). A resubmission (the rest
  // of a short send, a send's follow-up, a receive whose stale edge met a new one) is written
  // and published here and entered by flush(), after the lock.
  std::size_t harvest(port::Packet* out, std::size_t capacity) override {
    unsigned head = 0;
    unsigned seen = 0;
    std::size_t n = 0;
    std::uint64_t stamp = 0;
    io_uring_cqe* cqe = nullptr;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      if (n == capacity) break;
      ++seen;
      const std::uint64_t tag = io_uring_cqe_get_data64(cqe);
      if (tag == kCancelTag) continue;
      auto* op = reinterpret_cast<IoOp*>(io_uring_cqe_get_data(cqe));
      (void)std::atomic_ref<std::uint32_t>(op->handoff).load(std::memory_order_acquire);
      if (epoll_recv_ && op->kind == IoOp::Kind::recv && op->in_epoll) {
        if (cqe->res == -EAGAIN) {  // a stale edge (its data taken by the last receive): wait again
          if (!wait_for_socket(*op)) reissue_.push_back(op);  // a new edge came: issue again
          continue;
        }
        // Data left behind brings no new edge: the next arm takes it at once. TCP on 5.19+ says
        // so (IORING_CQE_F_SOCK_NONEMPTY); elsewhere a full buffer may have left some (one
        // EAGAIN at worst). The socket workload's buffer holds all its messages in flight.
        const bool leftover = op->reports_leftover
                                  ? (cqe->flags & IORING_CQE_F_SOCK_NONEMPTY) != 0
                                  : cqe->res == static_cast<std::int32_t>(op->len);
        std::uint32_t idle = kIdle;
        if (cqe->res > 0 && leftover) {
          std::atomic_ref<std::uint32_t>(op->readiness)
              .compare_exchange_strong(idle, kPending, std::memory_order_acq_rel);
        }
      }
      in_flight_.fetch_sub(1, std::memory_order_relaxed);
      completions_.fetch_add(1, std::memory_order_relaxed);
      op->result = cqe->res;
      if (!op->to_port && cqe->res > 0) {  // a send the source finishes (completion_source.hpp)
        op->done += static_cast<std::uint32_t>(cqe->res);
        if (op->done >= op->len) {
          if (op->then != nullptr) follow_.push_back(op->then);
          continue;
        }
        if (op->linked == nullptr) {
          follow_.push_back(op);  // a short send: the rest
          continue;
        }
      }
      if (stamp == 0) stamp = metrics::now_ns();  // one clock read per harvest
      op->t_insert_ns = stamp;
      port::Packet& packet = out[n++];
      packet.bytes = cqe->res > 0 ? static_cast<std::uint32_t>(cqe->res) : 0;
      packet.status =
          cqe->res < 0 ? static_cast<std::uint32_t>(-cqe->res) : (!op->to_port ? EPIPE : 0);
      if (!op->to_port) packet.bytes = op->done;
      packet.key = op->key;
      packet.context = op;
    }
    if (seen > 0) io_uring_cq_advance(&ring_, seen);
    if (!follow_.empty() || !reissue_.empty()) {
      std::lock_guard lock(sq_mutex_);
      for (IoOp* op : follow_) prep(*op);
      for (IoOp* op : reissue_) prep_readable(*op);  // still in flight: not counted again
      follow_.clear();
      reissue_.clear();
      publish_locked();
    }
    posted_.fetch_add(n, std::memory_order_relaxed);
    if (n > max_batch_.load(std::memory_order_relaxed)) {
      max_batch_.store(n, std::memory_order_relaxed);
    }
    return n;
  }

  void flush() override { enter_pending(); }

  bool in_flight() const override { return in_flight_.load(std::memory_order_seq_cst) > 0; }

  // The watcher's wait, in epoll: the ring's fd (a CQE), the doorbell and, with receives by
  // readiness, every socket a receive was armed on. A CQE taken by another thread before the
  // watcher runs leaves the ring's fd unready, and epoll keeps it asleep.
  void wait(const platform::Clock::time_point* deadline) override {
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

  void interrupt() override {
    doorbells_.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(doorbell_fd_, &one, sizeof one);
  }

 private:
  io_uring_sqe* get_sqe() {  // under sq_mutex_
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    while (sqe == nullptr) {  // cannot happen with max_ops respected, but never lose an op
      io_uring_submit(&ring_);
      sqe = io_uring_get_sqe(&ring_);
    }
    return sqe;
  }

  // ---- receives by readiness (completion_source.hpp) ----
  std::string open_epoll() {
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) return std::string("epoll_create1: ") + std::strerror(errno);
    for (const auto& [fd, tag] : {std::pair{ring_.ring_fd, kRingTag}, std::pair{doorbell_fd_, kDoorbellTag}}) {
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

  // A receive's socket stays in the epoll set, edge-triggered, from its first receive on, so
  // arming one costs no system call (an EPOLLONESHOT re-arm cost an epoll_ctl per message:
  // P5 1.12-1.16 against 1.25-1.28 edge-triggered): each edge is kept in the receive's state.
  enum Readiness : std::uint32_t { kIdle = 0, kArmed = 1, kPending = 2 };

  // From the worker that handled the last one (no port lock). False: epoll refused the socket
  // (no watch left, say), and the caller arms the receive in the ring as before.
  bool arm_recv(IoOp& op) {
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

  // Adds the receive's socket to the epoll set, edge-triggered (added while readable, it is
  // reported at once), and learns whether the kernel says when a receive leaves data behind.
  bool watch_socket(IoOp& op) {
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

  static bool is_tcp(int fd) {
    int domain = 0;
    int type = 0;
    socklen_t len = sizeof domain;
    if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0) return false;
    len = sizeof type;
    if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) return false;
    return (domain == AF_INET || domain == AF_INET6) && type == SOCK_STREAM;
  }

  // Arms the receive (true), or takes the pending edge (false: the socket is readable now).
  bool wait_for_socket(IoOp& op) {
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

  void prep_readable(IoOp& op) {  // under sq_mutex_
    io_uring_sqe* sqe = get_sqe();
    io_uring_prep_recv(sqe, op.fd, op.buf, op.len, MSG_DONTWAIT);
    io_uring_sqe_set_data(sqe, &op);
  }

  // What epoll reported (poll() or the watcher's wait, without the port's lock): the armed
  // receives among them are issued now, through the ring; an edge with no receive armed is
  // kept for the next arm. Only the watcher reads the doorbell's count (level-triggered: read,
  // or every later wait returns at once); a poller that took it would leave the watcher asleep
  // through the interrupt meant for it.
  enum class Reader { poller, watcher };
  void issue_readable(const epoll_event* events, int count, Reader reader) {
    std::array<IoOp*, 32> readable;
    std::size_t n = 0;
    for (int i = 0; i < count; ++i) {
      const epoll_event& ev = events[i];
      if (ev.data.u64 == kDoorbellTag) {
        if (reader == Reader::watcher) {
          std::uint64_t value = 0;
          [[maybe_unused]] const auto r = ::read(doorbell_fd_, &value, sizeof value);
        }
      } else if (ev.data.u64 != kRingTag) {
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

  // An edge on a receive's socket: the armed receive, now to issue (it leaves the armed count),
  // or nullptr with the edge kept (kPending) for the receive's next arm.
  IoOp* take_edge(IoOp& op) {
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

  // Under sq_mutex_: publishes the SQEs written since the last publish (the SQ tail), as
  // io_uring_submit does before it enters, and counts them for enter_pending(), which enters
  // for them after the lock is dropped. A submit holds the lock for the SQE writes only, never
  // across the syscall: held across it, the lock outlasted a waiter's spin and put it to sleep
  // (16 of the workers' 20 futex sleeps in a file run at b = 0, C = N, pool 2N, perf
  // sched_switch stacks), a switch an IOCP's ReadFile never makes.
  void publish_locked() {
    io_uring_sq& sq = ring_.sq;
    const unsigned published = sq.sqe_tail - sq.sqe_head;
    if (published == 0) return;
    sq.sqe_head = sq.sqe_tail;
    io_uring_smp_store_release(sq.ktail, sq.sqe_tail);
    unsubmitted_.fetch_add(published, std::memory_order_seq_cst);
  }

  // Not under sq_mutex_ nor the port's lock: every kernel entry for submissions on the shared
  // ring comes through here. Enters combine: a thread that finds another in io_uring_enter
  // leaves its entries to it, and the one inside enters again, for all of them, before it
  // leaves. Two workers entering at once spun on the kernel's ring lock (ctx->uring_lock): 29%
  // of the CPU samples of the file workload at 4 KiB, no work, with a 140k IOPS device (perf).
  // A worker's read is still issued at once: by itself, or by the thread already entering.
  // unsubmitted_ only ever over-counts (the kernel submits at most what the ring holds). What
  // the kernel did not take (a short or failed enter) is counted again for the next enter; an
  // interrupted one is retried at once.
  void enter_pending() {
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

  // SQEs published to the kernel and not yet consumed by it.
  unsigned sq_unconsumed() const {
    return io_uring_smp_load_acquire(ring_.sq.ktail) - io_uring_smp_load_acquire(ring_.sq.khead);
  }

  void prep(IoOp& op) {  // under sq_mutex_
    io_uring_sqe* sqe = get_sqe();
    fill_sqe(sqe, op);
    in_flight_.fetch_add(1, std::memory_order_seq_cst);  // before the port's watcher check
    if (op.linked != nullptr) {
      sqe->flags |= IOSQE_IO_LINK;
      prep(*op.linked);
    }
  }

  // At stop, detached from the port: completions are dropped.
  void drop_ready() {
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_cqe* cqe = nullptr;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      const std::uint64_t tag = io_uring_cqe_get_data64(cqe);
      if (tag != kCancelTag) {
        in_flight_.fetch_sub(1, std::memory_order_relaxed);
        completions_.fetch_add(1, std::memory_order_relaxed);
        dropped_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    io_uring_cq_advance(&ring_, seen);
  }

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

}  // namespace

std::unique_ptr<CompletionSource> make_completion_source(const SourceOptions& options) {
  if (options.own_thread && options.port_reads) {
    std::string why;
    try {
      auto feed = std::make_unique<FeedSource>(options);
      if (feed->attach()) return feed;
      why = "the port takes no I/O feed";
    } catch (const std::runtime_error& e) {
      why = e.what();
    }
    // The thread path, saying why (describe()).
    auto source = std::make_unique<UringSource>(options);
    source->note("--completion-path port not available (" + why + "): ");
    return source;
  }
  return std::make_unique<UringSource>(options);
}

}  // namespace iocpbench::io
