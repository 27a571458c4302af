#pragma once
// The open loop's ledger: which requests are the measured window's, and how each one ended.
//
// A request is the window's when its *intended* time falls in the window, wherever it
// completes: one intended during the warm-up is not the window's, one intended in the window
// and done during the drain after it is. Each of the window's requests ends one of three ways:
//   timed       done before the ledger closed: response = done - intended, service = done - issue;
//   failed      the workload could not issue it (an error of the run);
//   unfinished  still in flight, or never issued, when the ledger closed (the drain's end): its
//               response time is at least the close minus its intended time, a lower bound.
// So timed + failed + unfinished = due in every run, and the slowest requests (those a stall or
// an overload kept waiting past the window) are in the percentiles, at their lower bounds.
//
// No clock and no lock: every time is an argument and the caller serialises the calls
// (engine/open_loop.cpp holds its slot mutex), so tests drive it with scripted times.

#include <cstdint>
#include <vector>

#include "metrics/histogram.hpp"

namespace iocpbench::engine {

struct LedgerTotals {
  std::uint64_t due = 0;         // intended in the window
  std::uint64_t timed = 0;       // of those, done before the close
  std::uint64_t unfinished = 0;  // of those, in flight or never issued at the close
  std::uint64_t failed = 0;      // of those, the workload could not issue
};

class RequestLedger {
 public:
  explicit RequestLedger(unsigned slots);

  // The window in intended time, [start_ns, end_ns); before it is set no request is the window's.
  void set_window(std::uint64_t start_ns, std::uint64_t end_ns);
  // An interrupted run's window ends early (never later than set).
  void shorten_window(std::uint64_t end_ns);
  bool in_window(std::uint64_t intended_ns) const {
    return end_ns_ != 0 && intended_ns >= start_ns_ && intended_ns < end_ns_;
  }
  std::uint64_t window_start_ns() const { return start_ns_; }
  std::uint64_t window_end_ns() const { return end_ns_; }

  // The request in `slot` was issued; the slot holds it until done() or failed().
  void issued(unsigned slot, std::uint64_t intended_ns, std::uint64_t issue_ns);
  // The issue call of the request in `slot` returned at returned_ns: its service time starts
  // then (the call's own time is the generator's). A request done before its call returned
  // keeps the issue time as its start.
  void issue_returned(unsigned slot, std::uint64_t returned_ns);
  // The request in `slot` is done at done_ns (timed when it is the window's and still open).
  void done(unsigned slot, std::uint64_t done_ns);
  // The request in `slot` could not be issued.
  void failed(unsigned slot);
  // Closes at cut_ns: the window's requests still in a slot become unfinished; later done()
  // calls count nothing. Idempotent (the first cut stands).
  void close(std::uint64_t cut_ns);
  // An arrival due in the window that was never issued: unfinished from its intended time to
  // the cut. Call after close().
  void unissued(std::uint64_t intended_ns);

  bool closed() const { return cut_ns_ != 0; }
  std::uint64_t cut_ns() const { return cut_ns_; }
  LedgerTotals totals() const;
  const metrics::Histogram& response() const { return response_; }      // timed: done - intended
  const metrics::Histogram& service() const { return service_; }        // timed: done - issue returned
  const metrics::Histogram& unfinished() const { return unfinished_; }  // cut - intended
  // The responses of the window's first and second half (by intended time), the unfinished
  // ones at their lower bounds.
  const metrics::Histogram& response_half(int half) const { return halves_[half]; }

 private:
  struct Slot {
    std::uint64_t intended_ns = 0;
    std::uint64_t issue_ns = 0;
    bool busy = false;
  };
  void record_unfinished(std::uint64_t intended_ns);
  int half_of(std::uint64_t intended_ns) const;  // 0: the window's first half

  std::vector<Slot> slots_;
  std::uint64_t start_ns_ = 0, end_ns_ = 0, cut_ns_ = 0;
  std::uint64_t failed_ = 0;
  metrics::Histogram response_, service_, unfinished_;
  metrics::Histogram halves_[2];
};

// Which of a due-request percentile set are lower bounds (a percentile whose rank may fall on
// an unfinished request).
struct LowerBounds {
  bool p50 = false, p90 = false, p99 = false, p999 = false, max = false, mean = false;
  bool any() const { return p50 || p90 || p99 || p999 || max || mean; }
};

// The response time over every due request: the timed ones and the unfinished ones at their
// lower bounds, in microseconds. A percentile is exact when every unfinished request's bound
// lies in a higher bucket than it (each of them is then above it whatever its true time), and
// a lower bound otherwise; the maximum and the mean are lower bounds whenever any request is
// unfinished.
struct DuePercentiles {
  metrics::Percentiles us;
  LowerBounds lower_bound;
};
DuePercentiles due_percentiles(const metrics::Histogram& timed,
                               const metrics::Histogram& unfinished);

}  // namespace iocpbench::engine
