#include "metrics/usage.hpp"

#include <algorithm>

namespace iocpbench::metrics {

Usage operator-(const Usage& a, const Usage& b) {
  auto sub = [](std::uint64_t x, std::uint64_t y) { return x >= y ? x - y : 0; };
  Usage d;
  d.voluntary = sub(a.voluntary, b.voluntary);
  d.involuntary = sub(a.involuntary, b.involuntary);
  // Clamped: some clocks (Wine's thread times) are coarse enough to step backwards.
  d.user_s = std::max(0.0, a.user_s - b.user_s);
  d.sys_s = std::max(0.0, a.sys_s - b.sys_s);
  d.cpu_s = std::max(0.0, a.cpu_s - b.cpu_s);
  return d;
}

Usage& operator+=(Usage& a, const Usage& b) {
  a.voluntary += b.voluntary;
  a.involuntary += b.involuntary;
  a.user_s += b.user_s;
  a.sys_s += b.sys_s;
  a.cpu_s += b.cpu_s;
  return a;
}

const char* to_string(Role role) {
  switch (role) {
    case Role::workers:
      return "workers";
    case Role::completion_source:
      return "completion_source";
    case Role::load_generator:
      return "load_generator";
  }
  return "unknown";
}

void RoleRegistry::enrol(Role role) {
  const ThreadHandle handle = current_thread_handle();
  std::lock_guard lock(mutex_);
  threads_.emplace_back(role, handle);
}

void RoleRegistry::retire() {
  const ThreadHandle self = current_thread_handle();
  Usage usage;
  // The same counters sample() reads, so a retired thread's sums continue its samples.
  const bool sampled = sample_thread(self, usage);
  if (sampled) count_exiting_thread(usage);
  std::lock_guard lock(mutex_);
  for (auto it = threads_.begin(); it != threads_.end(); ++it) {
    if (it->second.tid != self.tid || it->second.native != self.native) continue;
    if (sampled) retired_[static_cast<int>(it->first)] += usage;
    threads_.erase(it);
    return;
  }
}

RoleRegistry::Snapshot RoleRegistry::sample() const {
  std::lock_guard lock(mutex_);
  Snapshot snapshot;
  for (int role = 0; role < kRoles; ++role) snapshot.by_role[role] += retired_[role];
  std::vector<ThreadHandle> handles;
  handles.reserve(threads_.size());
  for (const auto& entry : threads_) handles.push_back(entry.second);
  const std::vector<std::optional<Usage>> usages = sample_threads(handles);
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    const int role = static_cast<int>(threads_[i].first);
    if (usages[i]) {
      snapshot.by_role[role] += *usages[i];
      ++snapshot.threads[role];
    } else {
      ++snapshot.unsampled;
    }
  }
  return snapshot;
}

std::size_t RoleRegistry::size() const {
  std::lock_guard lock(mutex_);
  return threads_.size();
}

}  // namespace iocpbench::metrics
