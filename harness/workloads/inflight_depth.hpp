#pragma once
// The in-flight depth of a workload's asynchronous I/O over the measured window: I/Os handed to
// the transport and not yet taken from the port by a worker, integrated over time at each change
// (DiskSpd's -o / fio's iodepth is what is asked; this is what was held).
//
// Lock-free: one 64-bit word holds the depth, the time of the last change and whether that
// change saw the window open; a change swaps it by compare-and-swap and so owns the interval
// from the previous change to its own time at the previous depth, which it adds (relaxed
// atomics) to the time spent at that depth. The intervals tile the timeline in the order of the
// swaps, so the sums are exact for the times the callers give; a time earlier than the last
// change's (two threads' clock reads racing their swaps) counts as the last change's.
// An interval counts when both of its ends saw the window open, so the integrated span runs
// from the first change inside the window to the last (at most one change's gap short of the
// window at each edge; `span_s` says how long it was).

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace iocpbench::workloads {

// One bucket of the depth's time share: depths depth_min..depth_max (equal where the bucket is
// one depth).
struct DepthBucket {
  unsigned depth_min = 0, depth_max = 0;
  double time_share = 0;  // of the integrated span
};

struct DepthSummary {
  unsigned requested = 0;  // the in-flight bound the parameters ask for
  double span_s = 0;       // the time integrated (inside the measured window)
  double mean = 0;         // time-weighted over span_s
  unsigned max = 0;        // the largest depth held for any time inside the span
  std::vector<DepthBucket> time_share_by_depth;
  std::uint64_t changes = 0;  // submissions and completions counted inside the span
};

class InflightDepth {
 public:
  // Depths up to kExactUpTo get a bucket each; a larger bound gets power-of-two buckets
  // (0, 1, 2-3, 4-7, ...), the last one ending at the bound.
  static constexpr unsigned kExactUpTo = 64;

  // start_ns: a clock reading (metrics::now_ns()) at or before the first change. The state
  // keeps times modulo 2^43 ns and takes a change that reads more than half that range after
  // the last one as earlier than it, so the first change must be measured from a real reading,
  // not from 0: a clock past 2^42 ns (73 minutes after boot, then every other 73 minutes)
  // would otherwise never start the count.
  InflightDepth(unsigned requested, std::uint64_t start_ns);

  // The depth changes by `delta` (+1: handed to the transport, -1: taken from the port) at
  // t_ns (metrics::now_ns()), from any thread; `measuring`: the caller saw the measured window
  // open. The depth may dip below 0 for a moment where a completion is counted before the
  // submission that caused it (a race of two threads); such time counts as depth 0.
  void change(int delta, std::uint64_t t_ns, bool measuring) noexcept;

  // After the run (no change in progress). nullopt when no interval fell inside the window.
  std::optional<DepthSummary> summary() const;

  unsigned bucket_of(int depth) const noexcept;
  std::vector<DepthBucket> buckets() const;  // the edges, time shares 0

 private:
  void add_interval(int depth, std::uint64_t dt_ns) noexcept;

  unsigned requested_;
  std::vector<DepthBucket> edges_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> bucket_ns_;
  std::atomic<std::uint64_t> state_;
  std::atomic<std::uint64_t> span_ns_{0}, area_ns_{0}, changes_{0};
  std::atomic<unsigned> max_{0};
};

// What a workload's stats say of its depth: the bound, the flag it comes from and what one unit
// of depth is (an I/O, a connection's receive or pending echo).
struct DepthLabels {
  std::string requested_by;
  std::string counts;
};

// workload_stats.inflight_depth into `stats`: the summary with what was counted, or null with
// workload_stats.inflight_depth_unavailable_because (`depth` null: metrics were off).
void put_inflight_depth(nlohmann::json& stats, const InflightDepth* depth,
                        const DepthLabels& labels);

}  // namespace iocpbench::workloads
