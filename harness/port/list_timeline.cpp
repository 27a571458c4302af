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

ListTimeline::ListTimeline(unsigned concurrency, std::uint64_t t0_ns)
    : concurrency_(concurrency), last_ns_(t0_ns) {}

void ListTimeline::integrate(ListTotals& t, std::uint64_t until_ns) const {
  const std::uint64_t dt = until_ns > last_ns_ ? until_ns - last_ns_ : 0;
  t.waiting_ns += std::uint64_t{last_.waiting} * dt;
  t.active_ns += std::uint64_t{last_.active} * dt;
  t.paused_ns += std::uint64_t{last_.paused} * dt;
  t.depth_ns += std::uint64_t{last_.depth} * dt;
  t.waiting_at[bucket(last_.waiting)] += dt;
  t.active_at[bucket(last_.active)] += dt;
  t.paused_at[bucket(last_.paused)] += dt;
  t.depth_at[bucket(last_.depth)] += dt;
  if (last_.depth > 0 && last_.waiting > 0 && last_.active < concurrency_) t.queued_with_room_ns += dt;
}

void ListTimeline::change(std::uint64_t t_ns, const ListLevels& levels) {
  t_ns = std::max(t_ns, last_ns_);  // clock reads of two threads may pass each other
  integrate(totals_, t_ns);
  last_ns_ = t_ns;
  last_ = levels;
  if (events_.size() < max_events_) {
    events_.push_back({t_ns, levels});
  } else if (max_events_ > 0) {
    events_cut_ = true;
  }
}

void ListTimeline::woke(std::uint64_t handoff_ns, std::uint64_t run_ns) {
  const std::uint64_t d = run_ns > handoff_ns ? run_ns - handoff_ns : 0;
  wakes_.fetch_add(1, std::memory_order_relaxed);
  wake_ns_.fetch_add(d, std::memory_order_relaxed);
  wake_buckets_[delay_bucket(d)].fetch_add(1, std::memory_order_relaxed);
}

ListTotals ListTimeline::totals(std::uint64_t t_ns) const {
  ListTotals t = totals_;
  integrate(t, std::max(t_ns, last_ns_));
  t.t_ns = std::max(t_ns, last_ns_);
  t.wakes = wakes_.load(std::memory_order_relaxed);
  t.wake_ns = wake_ns_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < kDelayBuckets; ++i) t.wake_buckets[i] = wake_buckets_[i].load(std::memory_order_relaxed);
  return t;
}

void ListTimeline::record_events(std::size_t max, std::uint64_t t_ns) {
  events_.clear();
  events_.reserve(max);
  max_events_ = max;
  events_cut_ = false;
  if (max > 0) events_.push_back({std::max(t_ns, last_ns_), last_});
}

}  // namespace iocpbench::port
