#include "engine/switch_attribution.hpp"

#include <algorithm>
#include <cmath>

namespace iocpbench::engine {

SwitchAttribution attribute_switches(const SwitchCounts& c) {
  // A handoff wakes one waiter, which made one voluntary switch if it had gone to sleep (it
  // may not have yet: its word was set before its futex wait), so handoffs bound the port's
  // sleeps from above and the workers' voluntary switches bound them too.
  const std::uint64_t port_waits = std::min(c.handoffs + c.own_io_waits, c.workers_voluntary);
  const std::uint64_t blocks = std::min(c.handler_blocks, c.workers_voluntary - port_waits);
  // Preemption an IOCP would also cause: the share of the workers' involuntary switches that
  // fell while C > M (estimated by the fraction of the window spent over the limit).
  const double over_fraction =
      c.window_s > 0 ? std::clamp(c.over_limit_s / c.window_s, 0.0, 1.0) : 0.0;
  const auto over_limit = static_cast<std::uint64_t>(
      std::llround(static_cast<double>(c.workers_involuntary) * over_fraction));
  const std::uint64_t iocp = port_waits + blocks + over_limit;

  const std::uint64_t woken_otherwise = c.workers_voluntary - port_waits - blocks;
  const std::uint64_t source = c.source_voluntary + c.source_involuntary;
  // A worker preempted while C <= M was preempted by something else that woke up: the
  // emulation's own wake-ups (its completion thread's, a worker's woken for nothing) each
  // preempt at most one running thread; the rest were other processes or the load generator.
  const std::uint64_t preempted = c.workers_involuntary - over_limit;
  const std::uint64_t preempted_by_emulation =
      std::min(preempted, c.source_voluntary + woken_otherwise);
  const std::uint64_t preempted_otherwise = preempted - preempted_by_emulation;
  const std::uint64_t emulation = source + woken_otherwise + preempted_by_emulation;
  const std::uint64_t outside = c.load_generator + c.other + preempted_otherwise;
  const std::uint64_t counted = iocp + emulation + outside;

  SwitchAttribution a;
  a.iocp_model = {port_waits, blocks, over_limit, iocp};
  a.emulation = {source, woken_otherwise, preempted_by_emulation, emulation};
  a.outside_port = {c.load_generator, c.other, preempted_otherwise, outside};
  if (counted > 0) a.emulation_share = static_cast<double>(emulation) / static_cast<double>(counted);
  return a;
}

const char* switch_attribution_method() {
  return "per-role counts of the window; iocp_model.port_waits = min(port handoffs + (per-thread "
         "ports) the workers' waits on their own rings (counted over the whole run), workers' "
         "voluntary switches) (a handoff wakes one sleeping waiter); handler_blocks = "
         "min(blocking calls of the handlers, the workers' voluntary switches left); "
         "preempted_over_limit = the workers' involuntary switches x (time with C > M / window), "
         "an estimate; the emulation's: every completion-thread switch, the workers' other "
         "voluntary switches (woken for nothing: task work, the port lock's sleep), and of the "
         "workers' remaining involuntary switches at most one per wake-up of the emulation's "
         "(completion-thread voluntary + workers' other voluntary), an upper bound; "
         "outside_port: the load generator, threads in no role, and the workers' preemptions "
         "left over (other processes on the machine); emulation_share = emulation.total / all "
         "counted";
}

}  // namespace iocpbench::engine
