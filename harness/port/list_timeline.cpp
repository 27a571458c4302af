#include "port/list_timeline.hpp"

#include <algorithm>
#include <bit>

namespace iocpbench::port {
namespace {

std::size_t bucket(std::uint32_t level) { return std::min<std::size_t>(level, kLevelBuckets - 1); }

}  // namespace

std::size_t delay_bucket(std::uint64_t ns) {
  if (ns < 4) return static_cast<std::size_t>(ns);
  const unsigned k = static_cast<unsigned>(std::bit_width(ns)) - 1;  // 2^k <= ns
  const std::size_t b = 4 * (k - 1) + ((ns >> (k - 2)) & 3);
  return std::min(b, kDelayBuckets - 1);
}

std::uint64_t delay_bucket_low_ns(std::size_t b) {
  if (b < 4) return b;
  const unsigned k = static_cast<unsigned>(b / 4) + 1;
  return (std::uint64_t{4} + (b % 4)) << (k - 2);
}

void ListTimeline::Pending::add(const ListLevels& l, unsigned concurrency) {
  ++states;
  waiting += l.waiting;
  active += l.active;
  paused += l.paused;
  depth += l.depth;
  ++waiting_at[bucket(l.waiting)];
  ++active_at[bucket(l.active)];
  ++paused_at[bucket(l.paused)];
  ++depth_at[bucket(l.depth)];
  if (l.depth > 0 && l.waiting > 0 && l.active < concurrency) ++queued_with_room;
}

ListTimeline::ListTimeline(unsigned concurrency, Clock clock)
    : concurrency_(concurrency), clock_(clock), last_ns_(clock()) {}

// `dt_ns` shared equally among the pending states.
void ListTimeline::share(ListTotals& t, const Pending& p, double dt_ns) const {
  if (p.states == 0) return;
  const double each = dt_ns / p.states;
  t.waiting_ns += static_cast<double>(p.waiting) * each;
  t.active_ns += static_cast<double>(p.active) * each;
  t.paused_ns += static_cast<double>(p.paused) * each;
  t.depth_ns += static_cast<double>(p.depth) * each;
  for (std::size_t i = 0; i < kLevelBuckets; ++i) {
    t.waiting_at[i] += p.waiting_at[i] * each;
    t.active_at[i] += p.active_at[i] * each;
    t.paused_at[i] += p.paused_at[i] * each;
    t.depth_at[i] += p.depth_at[i] * each;
  }
  t.queued_with_room_ns += static_cast<double>(p.queued_with_room) * each;
}

void ListTimeline::read_clock() {
  const std::uint64_t now = std::max(clock_(), last_ns_);  // two threads' reads may pass each other
  const std::uint64_t dt = now - last_ns_;
  share(totals_, pending_, static_cast<double>(dt));
  ++totals_.clock_reads;
  pending_ = Pending{};
  last_ns_ = now;
  // The K changes since the last read took dt: read less often while that is under
  // kMinReadGapNs, more often once it is over four times that.
  if (dt < kMinReadGapNs && changes_per_read_ < kMaxChangesPerRead) {
    changes_per_read_ *= 2;
  } else if (dt > 4 * kMinReadGapNs && changes_per_read_ > 1) {
    changes_per_read_ /= 2;
  }
  if (events_.size() < max_events_) {
    events_.push_back({now, last_});
  } else if (max_events_ > 0) {
    events_cut_ = true;
  }
}

void ListTimeline::change(const ListLevels& levels) {
  pending_.add(last_, concurrency_);  // the state that held until this change
  last_ = levels;
  ++totals_.changes;
  if (++changes_since_read_ >= changes_per_read_) {
    changes_since_read_ = 0;
    read_clock();
  }
}

void ListTimeline::woke(std::uint64_t delay_ns, std::uint32_t weight) {
  wakes_ += weight;
  wake_ns_ += delay_ns * weight;
  wake_buckets_[delay_bucket(delay_ns)] += weight;
}

// A snapshot is a clock read: the states since the last one, the current one included, share
// the time up to now, for good. Sharing it only in the copy (and again, differently split, at
// the next read) let a later snapshot hold less time at some level than an earlier one: a
// window's difference went negative.
ListTotals ListTimeline::totals() {
  const std::uint64_t now = std::max(clock_(), last_ns_);
  pending_.add(last_, concurrency_);  // the state now, up to now (it holds on after, too)
  share(totals_, pending_, static_cast<double>(now - last_ns_));
  pending_ = Pending{};
  changes_since_read_ = 0;
  last_ns_ = now;
  ListTotals t = totals_;
  t.t_ns = now;
  t.now = last_;
  t.wakes = wakes_;
  t.wake_ns = wake_ns_;
  t.wake_buckets = wake_buckets_;
  return t;
}

void ListTimeline::record_events(std::size_t max) {
  events_.clear();
  events_.reserve(max);
  max_events_ = max;
  events_cut_ = false;
  if (max > 0) events_.push_back({std::max(clock_(), last_ns_), last_});
}

}  // namespace iocpbench::port
