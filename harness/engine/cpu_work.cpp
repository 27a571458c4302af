#include "engine/cpu_work.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>

#include "metrics/thread_sched.hpp"

namespace iocpbench::engine {

thread_local std::uint64_t CpuWork::sink_ = 0;

std::uint64_t spin_iterations(std::uint64_t iterations) noexcept {
  // The count is read through a volatile, which makes every call a side effect: otherwise the
  // function is pure, and a compiler may take two calls with the same count as one (GCC -O1
  // did, timing the calibration's trials empty and so sizing the work far too large).
  volatile std::uint64_t count_once = iterations;
  const std::uint64_t count = count_once;
  std::uint64_t x = 0x9E3779B97F4A7C15ull ^ count;
  for (std::uint64_t i = 0; i < count; ++i) {
    // Each step depends on the last (no vectorising) and no compiler has a closed form for a
    // multiplicative recurrence, so the loop runs `iterations` times (the calibration checks).
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    x ^= x >> 29;
  }
  return x;
}

namespace {

using Clock = std::chrono::steady_clock;

WorkCalibration calibrate() {
  const auto begin = Clock::now();
  WorkCalibration c;
  std::uint64_t iterations = 1 << 16;
  // Grow the trial until it lasts about 2 ms, then take the fastest of 7 such trials.
  for (;;) {
    const auto t0 = Clock::now();
    volatile std::uint64_t sink = spin_iterations(iterations);
    (void)sink;
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (us >= 2000 || iterations > (std::uint64_t{1} << 40)) break;
    iterations *= 2;
  }
  // Each trial is timed by the thread's CPU clock where there is one: a trial preempted by
  // another thread (a loaded machine) then still counts only its own CPU time, so the work
  // is microseconds of CPU, not of wall time.
  const metrics::ThreadSchedClock sched;
  double best = 0;
  for (int trial = 0; trial < 7; ++trial) {
    const metrics::SchedSample s0 = sched.sample();
    const auto t0 = Clock::now();
    volatile std::uint64_t sink = spin_iterations(iterations);
    (void)sink;
    const double wall_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    const double us =
        sched.available() ? static_cast<double>(sched.sample().cpu_ns - s0.cpu_ns) / 1e3 : wall_us;
    if (us > 0) best = std::max(best, static_cast<double>(iterations) / us);
    ++c.trials;
  }
  c.iterations_per_us = best > 0 ? best : 1;
  c.calibration_ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
  return c;
}

}  // namespace

const WorkCalibration& work_calibration() {
  static std::once_flag once;
  static WorkCalibration cached;
  std::call_once(once, [] { cached = calibrate(); });
  return cached;
}

CpuWork::CpuWork(double work_us) {
  if (work_us <= 0) return;
  iterations_ = static_cast<std::uint64_t>(
      std::llround(std::max(1.0, work_us * work_calibration().iterations_per_us)));
}

double CpuWork::measure_us(unsigned repetitions) const {
  if (iterations_ == 0 || repetitions == 0) return 0;
  const metrics::ThreadSchedClock sched;  // CPU time where the OS has it, as the calibration
  const metrics::SchedSample s0 = sched.sample();
  const auto t0 = Clock::now();
  for (unsigned i = 0; i < repetitions; ++i) (*this)();
  const double wall_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  const double us =
      sched.available() ? static_cast<double>(sched.sample().cpu_ns - s0.cpu_ns) / 1e3 : wall_us;
  return us / repetitions;
}

}  // namespace iocpbench::engine
