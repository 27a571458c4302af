// Linux only: the thread path of completion_source_linux.hpp. One completion thread owns the
// ring (SINGLE_ISSUER, DEFER_TASKRUN where the kernel has them) and is the only caller of
// io_uring_enter; submitters queue operations under a short lock and ring a doorbell (an
// eventfd whose read stays armed in the ring) when it is parked. Without its own thread
// (SourceOptions::own_thread false) the owner pumps the ring instead.

#include "io/thread_source_linux.hpp"

#include <liburing.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "io/uring_ring_linux.hpp"
#include "metrics/clock.hpp"

namespace iocpbench::io {
namespace {

class ThreadSource final : public CompletionSource {
 public:
  explicit ThreadSource(const SourceOptions& options) : options_(options) {
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

  ~ThreadSource() override {
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
    const unsigned entries = uring::round_up_pow2(options_.max_ops + 8);
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
    std::uint64_t submits = 0;
    io_uring_sqe* sqe = uring::sqe_or_submit(ring_, &submits);
    if (submits > 0) bump(enters_, submits);
    return sqe;
  }

  void prep(IoOp& op) {
    io_uring_sqe* sqe = get_sqe();
    uring::fill_sqe(sqe, op);
    ++in_flight_;
    if (op.linked != nullptr) {
      sqe->flags |= IOSQE_IO_LINK;
      prep(*op.linked);
    }
  }

  void arm_doorbell() {
    io_uring_sqe* sqe = get_sqe();
    io_uring_prep_read(sqe, doorbell_fd_, &doorbell_value_, sizeof doorbell_value_, 0);
    io_uring_sqe_set_data64(sqe, uring::kDoorbellTag);
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
      if (tag == uring::kDoorbellTag) {
        doorbell_armed_ = false;
        if (!stop_.load(std::memory_order_relaxed) && !dropping && options_.own_thread) {
          arm_doorbell();
        }
        continue;
      }
      if (tag == uring::kCancelTag) continue;
      auto* op = reinterpret_cast<IoOp*>(io_uring_cqe_get_data(cqe));
      (void)std::atomic_ref<std::uint32_t>(op->handoff).load(std::memory_order_acquire);
      --in_flight_;
      bump(completions_);
      op->result = cqe->res;
      if (dropping) {
        bump(dropped_);
        continue;
      }
      if (const uring::AfterCompletion next = uring::after_completion(*op, cqe->res); !next.post) {
        if (next.resubmit != nullptr) prep(*next.resubmit);
        continue;
      }
      if (stamp == 0) stamp = metrics::now_ns();  // one clock read per batch
      op->t_insert_ns = stamp;
      if (options_.port->post(uring::completion_packet(*op, cqe->res))) {
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
      io_uring_sqe_set_data64(sqe, uring::kCancelTag);
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

}  // namespace

std::unique_ptr<CompletionSource> make_thread_source(const SourceOptions& options,
                                                     const std::string& note) {
  auto source = std::make_unique<ThreadSource>(options);
  if (!note.empty()) source->note(note);
  return source;
}

}  // namespace iocpbench::io
