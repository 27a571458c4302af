#include "workloads/inflight_depth.hpp"

#include <algorithm>
#include <bit>

namespace iocpbench::workloads {
namespace {

// The state word: bit 63 whether the last change saw the window open, bits 43..62 the depth
// biased by 2^19 (so it may dip below 0 for a moment), bits 0..42 the last change's time in ns
// modulo 2^43 (about 2.4 hours: only differences between consecutive changes are taken).
constexpr int kTimeBits = 43;
constexpr std::uint64_t kTimeMask = (std::uint64_t{1} << kTimeBits) - 1;
constexpr int kDepthBits = 20;
constexpr std::uint64_t kDepthMask = (std::uint64_t{1} << kDepthBits) - 1;
constexpr std::int64_t kDepthBias = std::int64_t{1} << (kDepthBits - 1);
constexpr std::uint64_t kWindowBit = std::uint64_t{1} << 63;

struct State {
  bool window = false;
  std::int64_t depth = 0;
  std::uint64_t t = 0;  // modulo 2^43
};

State decode(std::uint64_t word) {
  return State{(word & kWindowBit) != 0,
               static_cast<std::int64_t>((word >> kTimeBits) & kDepthMask) - kDepthBias,
               word & kTimeMask};
}

std::uint64_t encode(const State& s) {
  const std::int64_t biased = std::clamp<std::int64_t>(s.depth + kDepthBias, 0, kDepthMask);
  return (s.window ? kWindowBit : 0) | (static_cast<std::uint64_t>(biased) << kTimeBits) |
         (s.t & kTimeMask);
}

// Depths 0..bound one each, or 0, 1, 2-3, 4-7, ... up to the bound.
std::vector<DepthBucket> bucket_edges(unsigned bound) {
  std::vector<DepthBucket> edges;
  if (bound <= InflightDepth::kExactUpTo) {
    for (unsigned d = 0; d <= bound; ++d) edges.push_back({d, d, 0});
    return edges;
  }
  edges.push_back({0, 0, 0});
  for (unsigned low = 1; low <= bound; low *= 2) {
    edges.push_back({low, std::min(bound, 2 * low - 1), 0});
    if (low > bound / 2) break;  // 2 * low would pass the bound (and could overflow)
  }
  return edges;
}

}  // namespace

InflightDepth::InflightDepth(unsigned requested, std::uint64_t start_ns)
    : requested_(requested),
      edges_(bucket_edges(requested)),
      bucket_ns_(std::make_unique<std::atomic<std::uint64_t>[]>(edges_.size())),
      state_(encode(State{false, 0, start_ns})) {
  for (std::size_t i = 0; i < edges_.size(); ++i) bucket_ns_[i].store(0, std::memory_order_relaxed);
}

unsigned InflightDepth::bucket_of(int depth) const noexcept {
  if (depth <= 0) return 0;
  const auto d = static_cast<unsigned>(depth);
  const auto last = static_cast<unsigned>(edges_.size() - 1);
  if (requested_ <= kExactUpTo) return std::min(d, last);
  return std::min(static_cast<unsigned>(std::bit_width(d)), last);  // 1 -> 1, 2..3 -> 2, ...
}

std::vector<DepthBucket> InflightDepth::buckets() const {
  return edges_;
}

void InflightDepth::change(int delta, std::uint64_t t_ns, bool measuring) noexcept {
  std::uint64_t word = state_.load(std::memory_order_relaxed);
  State before, after;
  std::uint64_t dt = 0;
  do {
    before = decode(word);
    dt = (t_ns - before.t) & kTimeMask;
    after.t = t_ns & kTimeMask;
    if (dt >= (kTimeMask >> 1)) {  // earlier than the last change: counts as its time
      dt = 0;
      after.t = before.t;
    }
    after.window = measuring;
    after.depth = before.depth + delta;
  } while (!state_.compare_exchange_weak(word, encode(after), std::memory_order_relaxed));
  // This change owns [before.t, after.t) at the depth before it.
  if (before.window && measuring) {
    add_interval(static_cast<int>(before.depth), dt);
    changes_.fetch_add(1, std::memory_order_relaxed);
  }
}

void InflightDepth::add_interval(int depth, std::uint64_t dt_ns) noexcept {
  if (dt_ns == 0) return;
  const unsigned held = depth > 0 ? static_cast<unsigned>(depth) : 0;
  bucket_ns_[bucket_of(depth)].fetch_add(dt_ns, std::memory_order_relaxed);
  area_ns_.fetch_add(held * dt_ns, std::memory_order_relaxed);
  span_ns_.fetch_add(dt_ns, std::memory_order_relaxed);
  unsigned seen = max_.load(std::memory_order_relaxed);
  while (held > seen && !max_.compare_exchange_weak(seen, held, std::memory_order_relaxed)) {
  }
}

std::optional<DepthSummary> InflightDepth::summary() const {
  const std::uint64_t span = span_ns_.load();
  if (span == 0) return std::nullopt;
  DepthSummary s;
  s.requested = requested_;
  s.span_s = static_cast<double>(span) / 1e9;
  s.mean = static_cast<double>(area_ns_.load()) / static_cast<double>(span);
  s.max = max_.load();
  s.changes = changes_.load();
  s.time_share_by_depth = edges_;
  for (std::size_t i = 0; i < edges_.size(); ++i) {
    s.time_share_by_depth[i].time_share =
        static_cast<double>(bucket_ns_[i].load()) / static_cast<double>(span);
  }
  // The last bucket holds anything past the bound too: its edge says how far it went.
  s.time_share_by_depth.back().depth_max = std::max(s.time_share_by_depth.back().depth_max, s.max);
  return s;
}

void put_inflight_depth(nlohmann::json& stats, const InflightDepth* depth,
                        const DepthLabels& labels) {
  const std::optional<DepthSummary> s = depth != nullptr ? depth->summary() : std::nullopt;
  if (!s) {
    stats["inflight_depth"] = nullptr;
    stats["inflight_depth_unavailable_because"] =
        depth == nullptr
            ? "not measured with metrics off (--no-metrics): no clock read at each completion"
            : "no submission or completion inside the measured window";
    return;
  }
  nlohmann::json shares = nlohmann::json::array();
  for (const auto& b : s->time_share_by_depth) {
    shares.push_back(
        {{"depth_min", b.depth_min}, {"depth_max", b.depth_max}, {"time_share", b.time_share}});
  }
  stats["inflight_depth"] = {
      {"requested", s->requested},
      {"requested_by", labels.requested_by},
      {"counts", labels.counts},
      {"mean", s->mean},
      {"max", s->max},
      {"time_share_by_depth", shares},
      {"span_s", s->span_s},
      {"changes", s->changes},
      {"method",
       "integrated at each submission and completion (steady clock, lock-free), from the first "
       "change inside the measured window to the last"}};
}

}  // namespace iocpbench::workloads
