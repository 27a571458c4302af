#include "engine/stall_meter.hpp"

#include <algorithm>
#include <chrono>

#include "metrics/clock.hpp"
#include "platform/platform.hpp"

namespace iocpbench::engine {

void StallLog::observe(std::uint64_t asked_ns, std::uint64_t woke_ns) {
  if (woke_ns >= asked_ns + kStallNs) stalls_.push_back(Stall{asked_ns, woke_ns - asked_ns});
}

StallSummary StallLog::in_window(std::uint64_t t0_ns, std::uint64_t t1_ns) const {
  StallSummary s;
  for (const Stall& stall : stalls_) {
    const std::uint64_t begin = std::max(stall.start_ns, t0_ns);
    const std::uint64_t end = std::min(stall.start_ns + stall.length_ns, t1_ns);
    if (end <= begin) continue;
    ++s.count;
    s.total_ns += end - begin;
    s.longest_ns = std::max(s.longest_ns, end - begin);
    if (s.first.size() < StallSummary::kKept) s.first.push_back(Stall{begin - t0_ns, end - begin});
  }
  return s;
}

BacklogVerdict backlog_grows(const std::vector<BacklogSample>& samples, std::uint64_t t0_ns,
                             std::uint64_t t1_ns, std::uint64_t due) {
  BacklogVerdict v;
  if (t1_ns <= t0_ns) return v;
  bool seen[4] = {};
  const std::uint64_t span = t1_ns - t0_ns;
  for (const BacklogSample& s : samples) {
    if (s.t_ns < t0_ns || s.t_ns >= t1_ns) continue;
    const auto q = static_cast<std::size_t>(std::min<std::uint64_t>(3, (s.t_ns - t0_ns) * 4 / span));
    v.least_by_quarter[q] = seen[q] ? std::min(v.least_by_quarter[q], s.backlog) : s.backlog;
    seen[q] = true;
  }
  if (!(seen[0] && seen[1] && seen[2] && seen[3])) return v;
  v.judged = true;
  const std::uint64_t* m = v.least_by_quarter;
  const std::uint64_t min_growth = std::max<std::uint64_t>(kMinBacklogGrowth, due / 100);
  v.grows = m[1] > m[0] && m[2] > m[1] && m[3] > m[2] && m[3] - m[0] >= min_growth;
  return v;
}

void StallMeter::start(Backlog backlog, bool realtime) {
  thread_ = std::thread([this, backlog = std::move(backlog), realtime] { loop(backlog, realtime); });
}

void StallMeter::stop() {
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

void StallMeter::loop(Backlog backlog, bool realtime) {
  // Above the pacer (level 1): the meter must see a stall even while the pacer spins.
  if (realtime) {
    const std::string granted = platform::raise_current_thread_to_realtime(2, &refused_);
    if (!granted.empty()) priority_ = granted;
  }
  platform::set_fine_timer_slack();
  std::uint64_t next_sample_ns = 0;
  while (!stop_.load(std::memory_order_acquire)) {
    const std::uint64_t asked = metrics::now_ns() + kTickNs;
    platform::precise_sleep(std::chrono::nanoseconds(kTickNs));
    const std::uint64_t woke = metrics::now_ns();
    log_.observe(asked, woke);
    if (backlog && woke >= next_sample_ns) {
      backlog_samples_.push_back(BacklogSample{woke, backlog()});
      next_sample_ns = woke + kBacklogEveryNs;
    }
  }
}

}  // namespace iocpbench::engine
