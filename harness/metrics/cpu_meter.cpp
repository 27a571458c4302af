#include "metrics/cpu_meter.hpp"

#include <algorithm>

#include "metrics/usage.hpp"

namespace iocpbench::metrics {

CpuMeter::CpuMeter(unsigned logical_cpus, std::uint64_t window_ns)
    : capacity_(std::max(1u, logical_cpus)), window_ns_(window_ns) {}

double CpuMeter::percent(std::uint64_t now_ns) {
  if (now_ns < next_update_ns_.load(std::memory_order_relaxed)) {
    return percent_.load(std::memory_order_relaxed);
  }
  std::unique_lock lock(update_, std::try_to_lock);
  if (lock.owns_lock() && now_ns >= next_update_ns_.load(std::memory_order_relaxed)) {
    const double cpu_s = process_cpu_seconds();
    if (last_ns_ != 0 && now_ns > last_ns_) {
      const double wall_s = static_cast<double>(now_ns - last_ns_) / 1e9;
      percent_.store(std::clamp(100.0 * (cpu_s - last_cpu_s_) / (wall_s * capacity_), 0.0, 100.0),
                     std::memory_order_relaxed);
    }
    last_ns_ = now_ns;
    last_cpu_s_ = cpu_s;
    next_update_ns_.store(now_ns + window_ns_, std::memory_order_relaxed);
  }
  return percent_.load(std::memory_order_relaxed);
}

}  // namespace iocpbench::metrics
