#include "engine/open_loop.hpp"

#include <algorithm>
#include <chrono>

#include "engine/affinity.hpp"
#include "metrics/clock.hpp"
#include "platform/platform.hpp"

namespace iocpbench::engine {
namespace {

// The pacer sleeps at most this long at a time, so a stop is seen within it.
constexpr std::uint64_t kMaxSleepNs = 20'000'000;
// An arrival due this close is issued at once rather than slept for: a sleep costs more.
constexpr std::uint64_t kNoSleepBelowNs = 2'000;
// The pacer waits this long for a slot before it looks at the schedule and the stop again.
constexpr auto kSlotWait = std::chrono::milliseconds(1);
// At the stop, arrivals due and never issued are counted one by one up to this many (an
// hour-long backlog at a huge rate would otherwise take as long to count).
constexpr std::uint64_t kMaxUnissuedCounted = 100'000'000;

}  // namespace

OpenLoop::OpenLoop(double rate_ops_per_s, core::ArrivalProcess arrivals, std::uint64_t seed,
                   unsigned slots, metrics::RoleRegistry* roles)
    : rate_ops_per_s_(rate_ops_per_s),
      schedule_(rate_ops_per_s, arrivals, seed),
      roles_(roles),
      times_(std::max(1u, slots)) {
  free_.reserve(times_.size());
  for (unsigned s = static_cast<unsigned>(times_.size()); s-- > 0;) free_.push_back(s);
}

OpenLoop::~OpenLoop() { stop(); }

void OpenLoop::start(Issue issue, ThreadPlacer* placer) {
  schedule_base_ns_ = metrics::now_ns();
  next_ns_ = schedule_base_ns_ + schedule_.next_ns();
  const unsigned slot = placer != nullptr ? placer->reserve("open-loop pacer") : 0;
  thread_ = std::thread([this, issue = std::move(issue), placer, slot] {
    if (placer != nullptr) placer->pin_current(slot);
    pacer(issue);
  });
}

void OpenLoop::stop() {
  stop_.store(true, std::memory_order_seq_cst);
  pacer_waiting_.store(0, std::memory_order_seq_cst);
  platform::futex_wake_one(pacer_waiting_);
  if (!thread_.joinable()) return;
  thread_.join();
  pacer_joined_.store(true, std::memory_order_release);
  const std::uint64_t end = window_end_ns_.load();
  // Arrivals counted while the end was not yet marked, but intended at or after it: not the
  // window's (the newest counted come last; the ring holds the last kRecentCounted).
  for (std::uint64_t back = 0; end != 0 && back < std::min<std::uint64_t>(counted_total_, kRecentCounted); ++back) {
    const Counted& c = recent_[(counted_total_ - 1 - back) % kRecentCounted];
    if (c.intended_ns < end) break;
    --counts_.arrivals;
    --counts_.issued;
    if (c.held) --counts_.held;
  }
  // What fell due in the window and was never issued: the backlog the stop found.
  for (std::uint64_t n = 0; n < kMaxUnissuedCounted && end != 0 && next_ns_ < end; ++n) {
    if (in_window(next_ns_)) {
      ++counts_.arrivals;
      ++counts_.unissued;
    }
    next_ns_ = schedule_base_ns_ + schedule_.next_ns();
  }
}

void OpenLoop::release(unsigned slot) {
  {
    const std::lock_guard<std::mutex> hold(free_mutex_);
    free_.push_back(slot);
  }
  if (pacer_waiting_.load(std::memory_order_seq_cst) == 1 && pacer_waiting_.exchange(0) == 1) {
    platform::futex_wake_one(pacer_waiting_);
  }
}

std::optional<unsigned> OpenLoop::take_slot() {
  const std::lock_guard<std::mutex> hold(free_mutex_);
  if (free_.empty()) return std::nullopt;
  const unsigned slot = free_.back();
  free_.pop_back();
  return slot;
}

bool OpenLoop::in_window(std::uint64_t intended_ns) const {
  const std::uint64_t start = window_start_ns_.load(std::memory_order_relaxed);
  const std::uint64_t end = window_end_ns_.load(std::memory_order_relaxed);
  return start != 0 && intended_ns >= start && (end == 0 || intended_ns < end);
}

void OpenLoop::wait_for_slot() {
  // Dekker with release(): announce, look again, then sleep.
  pacer_waiting_.store(1, std::memory_order_seq_cst);
  {
    const std::lock_guard<std::mutex> hold(free_mutex_);
    if (!free_.empty() || stop_.load()) {
      pacer_waiting_.store(0, std::memory_order_relaxed);
      return;
    }
  }
  const auto deadline = platform::Clock::now() + kSlotWait;
  platform::futex_wait(pacer_waiting_, 1, &deadline);
  pacer_waiting_.store(0, std::memory_order_relaxed);
}

void OpenLoop::sleep_until_ns(std::uint64_t t_ns) {
  const std::uint64_t now = metrics::now_ns();
  if (t_ns <= now + kNoSleepBelowNs) return;
  platform::precise_sleep(std::chrono::nanoseconds(std::min(t_ns - now, kMaxSleepNs)));
}

void OpenLoop::pacer(Issue issue) {
  if (roles_ != nullptr) roles_->enrol(metrics::Role::load_generator);
  platform::set_fine_timer_slack();
  std::uint64_t last_no_slot_ns = 0;  // when the pacer last found every slot in use
  while (!stop_.load(std::memory_order_acquire)) {
    std::uint64_t now = metrics::now_ns();
    if (next_ns_ > now + kNoSleepBelowNs) {
      sleep_until_ns(next_ns_);
      continue;
    }
    const std::optional<unsigned> slot = take_slot();
    if (!slot) {
      last_no_slot_ns = now;
      // The backlog: every arrival due by now (the schedule is monotonic, so count from the
      // head at the mean gap, an estimate that needs no second walk of the schedule).
      const std::uint64_t overdue_ns = now > next_ns_ ? now - next_ns_ : 0;  // due up to 2 us early
      const auto backlog =
          static_cast<std::uint64_t>(1 + static_cast<double>(overdue_ns) * rate_ops_per_s_ / 1e9);
      counts_.max_backlog = std::max(counts_.max_backlog, backlog);
      wait_for_slot();
      // Everything that fell due while the pacer waited was held by the bound, not the pacer.
      last_no_slot_ns = metrics::now_ns();
      continue;
    }
    const std::uint64_t intended = next_ns_;
    const std::uint64_t issued_at = metrics::now_ns();
    times_[*slot].intended_ns.store(std::min(intended, issued_at), std::memory_order_relaxed);
    times_[*slot].issue_ns.store(issued_at, std::memory_order_release);
    const bool held = last_no_slot_ns >= intended;
    const bool counted = in_window(intended);
    if (counted) {
      recent_[counted_total_++ % kRecentCounted] = Counted{intended, held};
      ++counts_.arrivals;
      ++counts_.issued;
      if (held) {
        ++counts_.held;
      } else {
        // Issued up to kNoSleepBelowNs early counts as on time.
        counts_.lag.record(issued_at > intended ? issued_at - intended : 0);
      }
    }
    if (!issue(*slot)) {
      ++counts_.issue_failures;
      release(*slot);
    }
    next_ns_ = schedule_base_ns_ + schedule_.next_ns();
  }
}

}  // namespace iocpbench::engine
