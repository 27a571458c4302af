#pragma once
// Process CPU use as a percentage of the whole machine (every logical CPU), over the most recent
// window of at least `window`: the GetCPUUsage() of Richter's self-sizing pool, read by pool
// threads as they take and finish packets. Between updates a read is two atomic loads; the first
// reader after a window ends takes a try-lock and samples the process's CPU time
// (metrics::process_cpu_seconds), so readers never wait on each other.

#include <atomic>
#include <cstdint>
#include <mutex>

namespace iocpbench::metrics {

class CpuMeter {
 public:
  explicit CpuMeter(unsigned logical_cpus, std::uint64_t window_ns = 20'000'000);

  // `now_ns`: metrics::now_ns() as the caller already read it. 0 until the first window ends.
  double percent(std::uint64_t now_ns);

 private:
  const double capacity_;  // logical CPUs
  const std::uint64_t window_ns_;
  std::atomic<std::uint64_t> next_update_ns_{0};
  std::atomic<double> percent_{0};
  std::mutex update_;
  std::uint64_t last_ns_ = 0;  // guarded by update_
  double last_cpu_s_ = 0;      // guarded by update_
};

}  // namespace iocpbench::metrics
