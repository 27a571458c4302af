#include "engine/watchdog.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace iocpbench::engine {

using Clock = std::chrono::steady_clock;

double watchdog_limit_s(double work_us, double block_us, double override_s) {
  if (override_s > 0) return override_s;
  const double service_s = (std::max(0.0, work_us) + std::max(0.0, block_us)) / 1e6;
  return std::max(5.0, 10.0 * service_s);
}

std::uint64_t ProgressBoard::packets() const {
  std::uint64_t n = 0;
  for (unsigned i = 0; i < threads_; ++i) n += slots_[i].packets.load(std::memory_order_relaxed);
  return n;
}

ProgressBoard::Census ProgressBoard::census() const {
  Census c;
  for (unsigned i = 0; i < threads_; ++i) {
    switch (slots_[i].where.load(std::memory_order_relaxed)) {
      case kInPort:
        ++c.in_port;
        break;
      case kInHandler:
        ++c.in_handler;
        break;
      case kBlocking:
        ++c.blocking;
        break;
      case kParked:
        ++c.parked;
        break;
      default:
        ++c.exited;
        break;
    }
  }
  return c;
}

Watchdog::Watchdog(double limit_s, Progress progress, Describe describe, double teardown_limit_s)
    : limit_s_(limit_s),
      teardown_limit_s_(teardown_limit_s),
      progress_(std::move(progress)),
      describe_(std::move(describe)) {
  thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  disarm();
}

std::string Watchdog::message() const {
  std::lock_guard lock(mutex_);
  return message_;
}

void Watchdog::teardown() {
  std::lock_guard lock(mutex_);
  if (!tearing_down_) {
    tearing_down_ = true;
    teardown_since_ = Clock::now();
  }
  wake_.notify_all();
}

void Watchdog::disarm() {
  {
    std::lock_guard lock(mutex_);
    disarmed_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void Watchdog::loop() {
  // A tenth of the limit, at most 0.5 s: two wake-ups a second at the default limit, so the
  // watchdog adds next to nothing to the process's context switches.
  const auto tick = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::clamp(limit_s_ / 10, 0.01, 0.5)));
  std::uint64_t last = progress_();
  auto last_change = Clock::now();
  std::unique_lock lock(mutex_);
  while (!disarmed_) {
    wake_.wait_for(lock, tick);
    if (disarmed_) break;
    const auto now = Clock::now();
    if (tearing_down_) {
      const double took = std::chrono::duration<double>(now - teardown_since_).count();
      if (took < teardown_limit_s_) continue;
      // A thread is stuck for good (inside a handler, a blocking read, a join): report and end
      // the process rather than hang.
      const std::string report =
          message_.empty() ? "watchdog: the run's teardown did not finish; " + describe_(took)
                           : message_;
      std::fprintf(stderr, "iocpbench: %s; teardown did not finish in %.0f s: exiting\n",
                   report.c_str(), teardown_limit_s_);
      std::fflush(stderr);
      std::_Exit(1);
    }
    if (fired_.load(std::memory_order_relaxed)) continue;
    lock.unlock();
    const std::uint64_t now_progress = progress_();
    lock.lock();
    if (now_progress != last) {
      last = now_progress;
      last_change = now;
      continue;
    }
    const double stalled = std::chrono::duration<double>(now - last_change).count();
    if (stalled < limit_s_) continue;
    lock.unlock();
    char head[96];
    std::snprintf(head, sizeof head, "watchdog: no completion for %.1f s; ", stalled);
    std::string report = head + describe_(stalled);
    lock.lock();
    message_ = std::move(report);
    fired_.store(true, std::memory_order_release);
  }
}

}  // namespace iocpbench::engine
