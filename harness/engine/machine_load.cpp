#include "engine/machine_load.hpp"

#include <algorithm>
#include <cmath>

#include "engine/run_result.hpp"

namespace iocpbench::engine {
namespace {

std::string percent(double share) {
  return std::to_string(static_cast<long>(std::lround(share * 100))) + "%";
}

}  // namespace

MachineLoadRecord assess_machine_load(const MachineLoadInputs& in) {
  MachineLoadRecord m;
  const double capacity_s = in.window_s * std::max(1u, in.logical_cpus);
  if (in.system_busy_s && capacity_s > 0) {
    // The process's own time is in the system's busy time; what remains is everyone else's
    // (the kernel's work for the run too, which keeps a quiet machine's share above zero).
    m.others_cpu_share = std::clamp((*in.system_busy_s - in.own_cpu_s) / capacity_s, 0.0, 1.0);
  }
  if (in.system_steal_s && in.system_total_s && *in.system_total_s > 0) {
    m.steal_share = std::clamp(*in.system_steal_s / *in.system_total_s, 0.0, 1.0);
  }
  if (in.workers_switches && in.workers_preempted_otherwise &&
      *in.workers_switches >= kMinWorkerSwitchesForShare) {
    m.preempted_by_others_share = static_cast<double>(*in.workers_preempted_otherwise) /
                                  static_cast<double>(*in.workers_switches);
  }
  if (m.others_cpu_share && *m.others_cpu_share > kBusyOthersCpuShare) {
    m.reasons.push_back("other processes used " + percent(*m.others_cpu_share) + " of the CPUs");
  }
  if (m.steal_share && *m.steal_share > kBusyStealShare) {
    m.reasons.push_back("the hypervisor stole " + percent(*m.steal_share) + " of the CPU time");
  }
  m.busy = !m.reasons.empty();
  return m;
}

SwitchCounts switch_counts_of(const RunResult& r, unsigned long long other_switches) {
  const auto role = [&r](metrics::Role which) { return r.by_role[static_cast<int>(which)]; };
  SwitchCounts counts;
  counts.workers_voluntary = role(metrics::Role::workers).voluntary;
  counts.workers_involuntary = role(metrics::Role::workers).involuntary;
  counts.source_voluntary = role(metrics::Role::completion_source).voluntary;
  counts.source_involuntary = role(metrics::Role::completion_source).involuntary;
  const metrics::Usage generator = role(metrics::Role::load_generator);
  counts.load_generator = generator.voluntary + generator.involuntary;
  counts.other = other_switches;
  counts.handoffs = r.port_counters.handoffs;
  counts.own_io_waits = r.own_io_waits;
  counts.handler_blocks = r.handler_blocks;
  counts.over_limit_s = r.port_counters.over_limit_s;
  counts.window_s = r.seconds;
  return counts;
}

}  // namespace iocpbench::engine
