#pragma once
// Calibrated CPU work: a dependent chain of multiply-adds the compiler cannot shorten, run for
// a number of iterations calibrated to microseconds once per process (the fastest of several
// trials, so a trial slowed by another thread does not inflate the rate).

#include <cstdint>

namespace iocpbench::engine {

struct WorkCalibration {
  double iterations_per_us = 0;
  unsigned trials = 0;
  double calibration_ms = 0;  // wall time the calibration took
};

// How the calibration is made, in words (recorded beside it).
inline constexpr const char* kWorkCalibrationMethod =
    "dependent 64-bit multiply-add chain; fastest of 7 trials of ~2 ms, each timed by the "
    "thread's CPU clock where the OS has one";

// Calibrates on first use (thread-safe), then returns the cached result.
const WorkCalibration& work_calibration();

// Runs `iterations` of the chain; returns its value so nothing is optimised away.
std::uint64_t spin_iterations(std::uint64_t iterations) noexcept;

class CpuWork {
 public:
  CpuWork() = default;
  explicit CpuWork(double work_us);
  void operator()() const noexcept {
    if (iterations_ != 0) sink_ = spin_iterations(iterations_);
  }
  std::uint64_t iterations() const { return iterations_; }
  // Runs the work `repetitions` times on this thread and returns the mean microseconds: the
  // check recorded beside the calibration.
  double measure_us(unsigned repetitions) const;

 private:
  std::uint64_t iterations_ = 0;
  static thread_local std::uint64_t sink_;
};

}  // namespace iocpbench::engine
