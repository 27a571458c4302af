#pragma once
// Whether the machine was quiet while a run measured: what else used the CPUs during the
// window. A run beside other work measures the other work as much as the port (throughput
// falls, preemptions rise), so each run records it (results: points[].runs[].machine_load) and
// the commands warn. Pure: the window's counts in, the verdict out, so that the rule is tested
// without a busy machine. docs/reliability.md ("A busy machine") says how the thresholds were
// chosen.

#include <optional>
#include <string>
#include <vector>

#include "engine/switch_attribution.hpp"

namespace iocpbench::engine {

struct RunResult;

// The thresholds (shares, 0..1) above which a run is marked busy, and why each is where it is:
// docs/reliability.md, "A busy machine", with the measurements.
// Other processes' CPU time / (window x logical CPUs): the run's own kernel work outside the
// process (interrupts, softirq) measured at most 0.04; a CPU hog beside it adds far more.
inline constexpr double kBusyOthersCpuShare = 0.15;
// Hypervisor steal time / all CPU time in the window: 5% of the CPUs lent to other guests.
inline constexpr double kBusyStealShare = 0.05;
// The workers' switches that were preemptions by other processes / all their switches is
// recorded but marks nothing: it read 0.98 to 1.00 on a quiet machine as on a busy one (with a
// pool larger than the CPUs the workers preempt one another, and the attribution cannot tell
// a sibling from another process).
// Fewer worker switches than this in the window make no preemption share (one of two is 50%).
inline constexpr unsigned long long kMinWorkerSwitchesForShare = 100;

struct MachineLoadRecord {
  bool busy = false;
  std::vector<std::string> reasons;  // one phrase per threshold passed, e.g. "other processes used 41% of the CPUs"
  std::optional<double> steal_share;
  std::optional<double> others_cpu_share;
  std::optional<double> preempted_by_others_share;
};

// What the window counted; nothing where the OS cannot count it.
struct MachineLoadInputs {
  double window_s = 0;
  unsigned logical_cpus = 0;
  double own_cpu_s = 0;                    // the process's user + system time in the window
  std::optional<double> system_busy_s;     // every CPU's busy time in the window
  std::optional<double> system_total_s;    // every CPU's time in the window (busy + idle + steal)
  std::optional<double> system_steal_s;
  std::optional<unsigned long long> workers_switches;      // voluntary + involuntary
  std::optional<unsigned long long> workers_preempted_otherwise;
};

MachineLoadRecord assess_machine_load(const MachineLoadInputs& in);

// The run's switch counts as engine/switch_attribution.hpp splits them (`other`: the
// process's switches outside every role).
SwitchCounts switch_counts_of(const RunResult& r, unsigned long long other_switches);

}  // namespace iocpbench::engine
