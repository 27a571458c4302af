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
// The pacer sleeps until this long before an intended time and spins the rest: a sleep's
// wake-up is late by tens of microseconds on a guest, a spin by well under one.
constexpr std::uint64_t kSpinNs = 50'000;
// An issue this close to its intended time is on time: its gap from the previous on-time issue
// is a sample of the arrival process the generator achieved (engine/self_checks.hpp).
constexpr std::uint64_t kOnTimeNs = kSpinNs;
// The pacer waits this long for a slot before it looks at the schedule and the stop again.
constexpr auto kSlotWait = std::chrono::milliseconds(1);
// At the close, arrivals due and never issued are counted one by one up to this many (an
// hour-long backlog at a huge rate would otherwise take as long to count).
constexpr std::uint64_t kMaxUnissuedCounted = 100'000'000;

}  // namespace

OpenLoop::OpenLoop(double rate_ops_per_s, core::ArrivalProcess arrivals, std::uint64_t seed,
                   unsigned slots, metrics::RoleRegistry* roles, bool realtime)
    : rate_ops_per_s_(rate_ops_per_s),
      schedule_(rate_ops_per_s, arrivals, seed),
      roles_(roles),
      times_(std::max(1u, slots)),
      ledger_(std::max(1u, slots)),
      realtime_(realtime) {
  free_.reserve(times_.size());
  for (unsigned s = static_cast<unsigned>(times_.size()); s-- > 0;) free_.push_back(s);
}

OpenLoop::~OpenLoop() {
  stop();
  meter_.stop();
}

void OpenLoop::start(Issue issue, OpenLoopWindow window, ThreadPlacer* placer) {
  schedule_base_ns_ = metrics::now_ns();
  const std::uint64_t start = schedule_base_ns_ + window.warmup_ns;
  window_start_ns_.store(start);
  window_end_ns_.store(start + std::max<std::uint64_t>(1, window.duration_ns));
  ledger_.set_window(start, window_end_ns_.load());
  next_ns_.store(schedule_base_ns_ + schedule_.next_ns());
  meter_.start([this] { return backlog(); }, realtime_);
  const unsigned slot = placer != nullptr ? placer->reserve("open-loop pacer") : 0;
  thread_ = std::thread([this, issue = std::move(issue), placer, slot] {
    if (placer != nullptr) placer->pin_current(slot);
    pacer(issue);
  });
}

void OpenLoop::cut_window_short(std::uint64_t t_ns) {
  if (t_ns >= window_end_ns_.load()) return;
  window_end_ns_.store(std::max(t_ns, window_start_ns_.load()));
  const std::lock_guard<std::mutex> hold(free_mutex_);
  ledger_.shorten_window(t_ns);
}

void OpenLoop::stop_after_window(std::uint64_t deadline_ns) {
  closing_deadline_ns_.store(std::max<std::uint64_t>(deadline_ns, 1), std::memory_order_release);
  join_pacer();
}

void OpenLoop::stop() {
  stop_.store(true, std::memory_order_seq_cst);
  pacer_waiting_.store(0, std::memory_order_seq_cst);
  platform::futex_wake_one(pacer_waiting_);
  join_pacer();
}

void OpenLoop::join_pacer() {
  if (!thread_.joinable()) return;
  thread_.join();
  pacer_joined_.store(true, std::memory_order_release);
  const std::uint64_t end = window_end_ns_.load();
  // Arrivals counted before a run was cut short, but intended at or after its new end: not the
  // window's (the newest counted come last; the ring holds the last kRecentCounted).
  for (std::uint64_t back = 0; back < std::min<std::uint64_t>(counted_total_, kRecentCounted); ++back) {
    const Counted& c = recent_[(counted_total_ - 1 - back) % kRecentCounted];
    if (c.intended_ns < end) break;
    --counts_.arrivals;
    --counts_.issued;
    if (c.held) --counts_.held;
  }
}

void OpenLoop::finish(std::uint64_t cut_ns) {
  stop();
  meter_.stop();
  const std::lock_guard<std::mutex> hold(free_mutex_);
  if (ledger_.closed()) return;
  ledger_.close(cut_ns);
  // What fell due in the window and was never issued: the backlog the stop found.
  const std::uint64_t end = window_end_ns_.load();
  std::uint64_t next = next_ns_.load();
  for (std::uint64_t n = 0; n < kMaxUnissuedCounted && next < end; ++n) {
    if (in_window(next)) {
      ++counts_.arrivals;
      ++counts_.unissued;
      ledger_.unissued(next);
    }
    next = schedule_base_ns_ + schedule_.next_ns();
  }
}

void OpenLoop::release(unsigned slot, std::uint64_t done_ns) {
  {
    const std::lock_guard<std::mutex> hold(free_mutex_);
    ledger_.done(slot, done_ns);
    free_.push_back(slot);
  }
  released_total_.fetch_add(1, std::memory_order_relaxed);
  if (pacer_waiting_.load(std::memory_order_seq_cst) == 1 && pacer_waiting_.exchange(0) == 1) {
    platform::futex_wake_one(pacer_waiting_);
  }
}

void OpenLoop::release_failed(unsigned slot) {
  {
    const std::lock_guard<std::mutex> hold(free_mutex_);
    ledger_.failed(slot);
    free_.push_back(slot);
  }
  released_total_.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t OpenLoop::backlog() const {
  const std::uint64_t issued = issued_total_.load(std::memory_order_relaxed);
  const std::uint64_t released = released_total_.load(std::memory_order_relaxed);
  const std::uint64_t in_flight = issued > released ? issued - released : 0;
  // Due and not issued: from the next arrival at the mean gap (an estimate that needs no walk
  // of the schedule; exact enough to tell a growing backlog from a steady one).
  if (!slot_bound_.load(std::memory_order_relaxed)) return in_flight;
  const std::uint64_t now = metrics::now_ns();
  const std::uint64_t next = next_ns_.load(std::memory_order_relaxed);
  const std::uint64_t waiting =
      now > next ? 1 + static_cast<std::uint64_t>(static_cast<double>(now - next) * rate_ops_per_s_ / 1e9) : 0;
  return in_flight + waiting;
}

std::optional<unsigned> OpenLoop::take_slot(std::uint64_t intended_ns, std::uint64_t* issued_at) {
  const std::lock_guard<std::mutex> hold(free_mutex_);
  if (free_.empty()) return std::nullopt;
  const unsigned slot = free_.back();
  free_.pop_back();
  *issued_at = metrics::now_ns();
  ledger_.issued(slot, intended_ns, *issued_at);
  return slot;
}

bool OpenLoop::in_window(std::uint64_t intended_ns) const {
  const std::uint64_t start = window_start_ns_.load(std::memory_order_relaxed);
  const std::uint64_t end = window_end_ns_.load(std::memory_order_relaxed);
  return start != 0 && intended_ns >= start && intended_ns < end;
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
  if (t_ns > now + kSpinNs) {
    platform::precise_sleep(std::chrono::nanoseconds(std::min(t_ns - kSpinNs - now, kMaxSleepNs)));
    return;  // the caller looks at the stop and the schedule again
  }
  while (metrics::now_ns() < t_ns && !stop_.load(std::memory_order_relaxed)) {
  }
}

void OpenLoop::pacer(Issue issue) {
  if (roles_ != nullptr) roles_->enrol(metrics::Role::load_generator);
  if (realtime_) {
    const std::string granted = platform::raise_current_thread_to_realtime(1, &pacer_refused_);
    if (!granted.empty()) pacer_priority_ = granted;
  }
  platform::set_fine_timer_slack();
  std::uint64_t last_no_slot_ns = 0;  // when the pacer last found every slot in use
  std::uint64_t last_on_time_ns = 0;  // the last on-time issue in the window (0: none, or held since)
  counts_.arrival_gaps_ns.reserve(kMaxArrivalGaps);
  while (!stop_.load(std::memory_order_acquire)) {
    const std::uint64_t now = metrics::now_ns();
    const std::uint64_t next = next_ns_.load(std::memory_order_relaxed);
    // After the window: the window's arrivals still due are issued (late, each timed from its
    // intended time), until the deadline; nothing intended after the window's end.
    const std::uint64_t closing = closing_deadline_ns_.load(std::memory_order_acquire);
    if (closing != 0 && (next >= window_end_ns_.load() || now >= closing)) break;
    if (next > now) {
      slot_bound_.store(false, std::memory_order_relaxed);  // caught up: nothing is waiting
      sleep_until_ns(next);
      continue;
    }
    std::uint64_t issued_at = 0;
    const std::optional<unsigned> slot = take_slot(next, &issued_at);
    if (!slot) {
      slot_bound_.store(true, std::memory_order_relaxed);
      last_no_slot_ns = now;
      // The backlog: every arrival due by now (the schedule is monotonic, so count from the
      // head at the mean gap, an estimate that needs no second walk of the schedule).
      const auto backlog =
          static_cast<std::uint64_t>(1 + static_cast<double>(now - next) * rate_ops_per_s_ / 1e9);
      counts_.max_backlog = std::max(counts_.max_backlog, backlog);
      wait_for_slot();
      // Everything that fell due while the pacer waited was held by the bound, not the pacer.
      last_no_slot_ns = metrics::now_ns();
      continue;
    }
    times_[*slot].issue_ns.store(issued_at, std::memory_order_release);
    issued_total_.fetch_add(1, std::memory_order_relaxed);
    const bool held = last_no_slot_ns >= next;
    if (in_window(next)) {
      recent_[counted_total_++ % kRecentCounted] = Counted{next, held};
      ++counts_.arrivals;
      ++counts_.issued;
      if (!held) counts_.lag.record(issued_at - next);
      if (held) ++counts_.held;
      const bool on_time = !held && issued_at - next <= kOnTimeNs;
      if (on_time && last_on_time_ns != 0 && counts_.arrival_gaps_ns.size() < kMaxArrivalGaps) {
        counts_.arrival_gaps_ns.push_back(issued_at - last_on_time_ns);
      }
      last_on_time_ns = on_time ? issued_at : 0;
    }
    const bool counted = in_window(next);
    if (!issue(*slot)) {
      ++counts_.issue_failures;
      release_failed(*slot);
    } else {
      // The call's own time (a post's wake-up, a submit, a send) is the generator's: the
      // request's service time starts when it returns.
      const std::uint64_t returned_at = metrics::now_ns();
      if (counted) counts_.issue_call.record(returned_at - issued_at);
      const std::lock_guard<std::mutex> hold(free_mutex_);
      ledger_.issue_returned(*slot, returned_at);
    }
    next_ns_.store(schedule_base_ns_ + schedule_.next_ns(), std::memory_order_relaxed);
  }
}

}  // namespace iocpbench::engine
