#include "engine/block_control.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "metrics/clock.hpp"
#include "metrics/thread_sched.hpp"
#include "platform/platform.hpp"

namespace iocpbench::engine {
namespace {
constexpr double kWeight = 1.0 / 16;  // each sample's weight in the running estimates
double ewma(double estimate, double sample) {
  return estimate + kWeight * (sample - estimate);
}
}  // namespace

double HandlerTimes::mean_us(std::uint64_t total_ns) const {
  return handlers == 0 ? 0.0 : static_cast<double>(total_ns) / static_cast<double>(handlers) / 1e3;
}

HandlerTimes& HandlerTimes::operator+=(const HandlerTimes& other) {
  handlers += other.handlers;
  handler_ns += other.handler_ns;
  cpu_ns += other.cpu_ns;
  blocked_ns += other.blocked_ns;
  runnable_wait_ns += other.runnable_wait_ns;
  target_block_ns += other.target_block_ns;
  late_wakeups += other.late_wakeups;
  late_excess_ns += other.late_excess_ns;
  return *this;
}

namespace {
std::uint64_t minus(std::uint64_t a, std::uint64_t b) {
  return a > b ? a - b : 0;  // samples taken a few ns apart may cross by a clock read
}
}  // namespace

HandlerSplit split_handler(bool sampled, std::uint64_t t_start_ns, std::uint64_t t_block_ns,
                           std::uint64_t t_done_ns, const metrics::SchedSample& at_start,
                           const metrics::SchedSample& at_block, const metrics::SchedSample& at_done) {
  HandlerSplit s;
  if (!sampled) {
    s.cpu_ns = minus(t_block_ns, t_start_ns);
    s.blocked_ns = minus(t_done_ns, t_block_ns);
    s.block_blocked_ns = s.blocked_ns;
    return s;
  }
  const std::uint64_t wall_ns = minus(t_done_ns, t_start_ns);
  s.cpu_ns = minus(at_done.cpu_ns, at_start.cpu_ns);
  s.runnable_wait_ns = minus(at_done.runnable_wait_ns, at_start.runnable_wait_ns);
  s.blocked_ns = minus(wall_ns, s.cpu_ns + s.runnable_wait_ns);
  const std::uint64_t block_wall_ns = minus(t_done_ns, t_block_ns);
  s.block_blocked_ns = minus(block_wall_ns, minus(at_done.cpu_ns, at_block.cpu_ns) +
                                                minus(at_done.runnable_wait_ns, at_block.runnable_wait_ns));
  return s;
}

bool late_wakeup(bool split, std::uint64_t request_ns, std::uint64_t block_blocked_ns) noexcept {
  return split && request_ns > 0 && block_blocked_ns > request_ns + kLateWakeupNs;
}

void LateDebt::add(double ns) noexcept {
  if (ns >= 1) ns_.fetch_add(static_cast<std::int64_t>(ns), std::memory_order_relaxed);
}

double LateDebt::take(double max_ns) noexcept {
  std::int64_t have = ns_.load(std::memory_order_relaxed);
  for (;;) {
    const std::int64_t want = std::min(have, static_cast<std::int64_t>(std::max(0.0, max_ns)));
    if (want <= 0) return 0;
    if (ns_.compare_exchange_weak(have, have - want, std::memory_order_relaxed)) {
      return static_cast<double>(want);
    }
  }
}

BlockSizer::BlockSizer(double ratio, double work_us, double sleep_overshoot_ns, LateDebt& debt) noexcept
    : work_us_(work_us),
      factor_(ratio / (1 - ratio)),
      cpu_ns_(std::max(0.0, work_us) * 1e3),
      overshoot_ns_(std::max(0.0, sleep_overshoot_ns)),
      max_target_ns_(10 * factor_ * std::max(1.0, work_us) * 1e3),
      debt_(&debt) {}

void BlockSizer::set_ratio(double ratio) noexcept {
  factor_ = ratio / (1 - ratio);
  max_target_ns_ = 10 * factor_ * std::max(1.0, work_us_) * 1e3;
}

std::uint64_t BlockSizer::target_ns() const noexcept {
  return static_cast<std::uint64_t>(std::min(factor_ * cpu_ns_, max_target_ns_));
}

std::uint64_t BlockSizer::sleep_request_ns(std::uint64_t target_ns) noexcept {
  // At least 1 ns: a block is always a real sleep (so it always blocks, and always shows how
  // much sleeps overshoot: an estimate learnt only from requests above 0 could grow past the
  // target once and never learn again).
  // A negative estimate (blocks whose blocked part ends short of the request) asks for more
  // than the target, at most twice it.
  const double target = static_cast<double>(target_ns);
  const double request = std::min(target - overshoot_ns_, 2.0 * target);
  const double repay = debt_->take(std::min(kLateRepayShare * target, request - 1));
  return request - repay >= 1 ? static_cast<std::uint64_t>(request - repay) : 1;
}

void BlockSizer::observe_late_wakeup(std::uint64_t requested_sleep_ns,
                                     std::uint64_t block_blocked_ns) noexcept {
  const double usual_end = static_cast<double>(requested_sleep_ns) + overshoot_ns_;
  debt_->add(static_cast<double>(block_blocked_ns) - usual_end);
}

bool BlockSizer::read_again(std::uint64_t blocked_ns, std::uint64_t target_ns) const noexcept {
  return static_cast<double>(blocked_ns) + read_ns_ / 2 + io_bias_ns_ < static_cast<double>(target_ns);
}

void BlockSizer::observe_read(std::uint64_t read_blocked_ns) noexcept {
  const auto blocked = static_cast<double>(read_blocked_ns);
  read_ns_ = read_ns_ == 0 ? blocked : ewma(read_ns_, blocked);
}

void BlockSizer::observe_io_block(std::uint64_t blocked_ns, std::uint64_t target_ns) noexcept {
  io_bias_ns_ = ewma(io_bias_ns_, static_cast<double>(blocked_ns) - static_cast<double>(target_ns));
}


void BlockSizer::observe(std::uint64_t handler_cpu_ns, std::uint64_t requested_sleep_ns,
                         std::uint64_t block_blocked_ns) noexcept {
  cpu_ns_ = ewma(cpu_ns_, static_cast<double>(handler_cpu_ns));
  // Only a sleep says how much sleeps overshoot (io blocks pass 0).
  if (requested_sleep_ns > 0) {
    const double overshoot =
        static_cast<double>(block_blocked_ns) - static_cast<double>(requested_sleep_ns);
    // Not clamped at 0: a sleep's blocked part can end SHORT of its request. Linux runs an
    // asynchronous I/O completion's task work in the thread that submitted the I/O, and wakes
    // that thread from an interruptible sleep to run it: the sleep is restarted to its deadline,
    // but the time it spent waiting for a CPU and running the task work is runnable wait and
    // CPU, not blocked (socket workload at pools over N: blocks ~100 us short of a 380 us
    // target). The negative estimate lengthens the next request by what such wake-ups take.
    overshoot_ns_ = std::max(-max_target_ns_, ewma(overshoot_ns_, overshoot));
  }
}

double sleep_overshoot_estimate_ns() {
  static const double estimate = [] {
    platform::set_fine_timer_slack();
    const metrics::ThreadSchedClock sched;
    constexpr std::uint64_t kRequestNs = 1000;
    std::vector<double> overshoots;
    for (int i = 0; i < 64; ++i) {
      const metrics::SchedSample s0 = sched.sample();
      const std::uint64_t t0 = metrics::now_ns();
      platform::precise_sleep(std::chrono::nanoseconds(kRequestNs));
      const std::uint64_t t1 = metrics::now_ns();
      const metrics::SchedSample s1 = sched.sample();
      const double waited = static_cast<double>(s1.runnable_wait_ns - s0.runnable_wait_ns) +
                            static_cast<double>(s1.cpu_ns - s0.cpu_ns);
      overshoots.push_back(static_cast<double>(t1 - t0) - waited - static_cast<double>(kRequestNs));
    }
    std::nth_element(overshoots.begin(), overshoots.begin() + 32, overshoots.end());
    return std::max(0.0, overshoots[32]);
  }();
  return estimate;
}

double blocked_only_ratio(const HandlerTimes& t) {
  const double total = static_cast<double>(t.cpu_ns + t.blocked_ns);
  return total == 0 ? 0.0 : static_cast<double>(t.blocked_ns) / total;
}

double achieved_ratio(const HandlerTimes& t) {
  const double total = static_cast<double>(t.cpu_ns + t.blocked_ns + t.runnable_wait_ns);
  return total == 0 ? 0.0 : static_cast<double>(t.blocked_ns + t.runnable_wait_ns) / total;
}

}  // namespace iocpbench::engine
