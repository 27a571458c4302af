#include "engine/request_ledger.hpp"

#include <algorithm>

namespace iocpbench::engine {

RequestLedger::RequestLedger(unsigned slots) : slots_(std::max(1u, slots)) {}

void RequestLedger::set_window(std::uint64_t start_ns, std::uint64_t end_ns) {
  start_ns_ = start_ns;
  end_ns_ = std::max(start_ns, end_ns);
}

void RequestLedger::shorten_window(std::uint64_t end_ns) {
  if (end_ns_ != 0) end_ns_ = std::max(start_ns_, std::min(end_ns_, end_ns));
}

void RequestLedger::issued(unsigned slot, std::uint64_t intended_ns, std::uint64_t issue_ns) {
  slots_[slot] = Slot{intended_ns, issue_ns, true};
}

void RequestLedger::issue_returned(unsigned slot, std::uint64_t returned_ns) {
  Slot& s = slots_[slot];
  if (s.busy) s.issue_ns = std::max(s.issue_ns, returned_ns);
}

void RequestLedger::done(unsigned slot, std::uint64_t done_ns) {
  Slot& s = slots_[slot];
  if (!s.busy) return;
  s.busy = false;
  if (closed() || !in_window(s.intended_ns)) return;
  const std::uint64_t response = done_ns > s.intended_ns ? done_ns - s.intended_ns : 0;
  response_.record(response);
  halves_[half_of(s.intended_ns)].record(response);
  service_.record(done_ns > s.issue_ns ? done_ns - s.issue_ns : 0);
}

void RequestLedger::failed(unsigned slot) {
  Slot& s = slots_[slot];
  if (!s.busy) return;
  s.busy = false;
  if (!closed() && in_window(s.intended_ns)) ++failed_;
}

void RequestLedger::close(std::uint64_t cut_ns) {
  if (closed()) return;
  cut_ns_ = std::max<std::uint64_t>(cut_ns, 1);
  for (Slot& s : slots_) {
    if (s.busy && in_window(s.intended_ns)) record_unfinished(s.intended_ns);
  }
}

void RequestLedger::unissued(std::uint64_t intended_ns) {
  if (closed() && in_window(intended_ns)) record_unfinished(intended_ns);
}

void RequestLedger::record_unfinished(std::uint64_t intended_ns) {
  const std::uint64_t bound = cut_ns_ > intended_ns ? cut_ns_ - intended_ns : 0;
  unfinished_.record(bound);
  halves_[half_of(intended_ns)].record(bound);
}

int RequestLedger::half_of(std::uint64_t intended_ns) const {
  return intended_ns - start_ns_ < (end_ns_ - start_ns_) / 2 ? 0 : 1;
}

LedgerTotals RequestLedger::totals() const {
  LedgerTotals t;
  t.timed = response_.count();
  t.unfinished = unfinished_.count();
  t.failed = failed_;
  t.due = t.timed + t.unfinished + t.failed;
  return t;
}

DuePercentiles due_percentiles(const metrics::Histogram& timed,
                               const metrics::Histogram& unfinished) {
  metrics::Histogram all = timed;
  all.merge(unfinished);
  DuePercentiles d;
  d.us = metrics::percentiles_us(all);
  if (unfinished.count() == 0) return d;
  const std::size_t lowest_unfinished = metrics::Histogram::bucket_of(unfinished.min());
  const auto bound = [&](double us) {
    return lowest_unfinished <= metrics::Histogram::bucket_of(static_cast<std::uint64_t>(us * 1e3));
  };
  d.lower_bound.p50 = bound(d.us.p50);
  d.lower_bound.p90 = bound(d.us.p90);
  d.lower_bound.p99 = bound(d.us.p99);
  d.lower_bound.p999 = bound(d.us.p999);
  d.lower_bound.max = true;
  d.lower_bound.mean = true;
  return d;
}

}  // namespace iocpbench::engine
