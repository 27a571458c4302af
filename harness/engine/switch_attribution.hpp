#pragma once
// Who made the context switches a run counted: the ones an IOCP would also make (a worker that
// sleeps in the port until a handoff, a handler that blocks, a thread preempted while the port
// runs over its limit), the emulation's own (a completion thread, a worker woken for nothing,
// a worker preempted by either), and the rest (the load generator, the harness's own threads,
// preemption by other processes). Pure: counts in, JSON out (points[].runs[].
// context_switches.attribution), so the rule is tested without a run.

#include <cstdint>

#include <nlohmann/json.hpp>

namespace iocpbench::engine {

struct SwitchCounts {
  std::uint64_t workers_voluntary = 0, workers_involuntary = 0;
  std::uint64_t source_voluntary = 0, source_involuntary = 0;  // the completion thread(s)
  std::uint64_t load_generator = 0;  // the socket workload's client threads (both kinds)
  std::uint64_t other = 0;           // threads in no role: the harness's main and watchdog
  std::uint64_t handoffs = 0;        // port handoffs in the window (each wakes one waiter)
  // Per-thread ports: the waits a worker made on its own ring for its own port's next packet
  // (the GQCS sleep of that model; no handoff counts them).
  std::uint64_t own_ring_waits = 0;
  std::uint64_t handler_blocks = 0;  // blocking calls the handlers made in the window
  double over_limit_s = 0;           // time with C > M in the window
  double window_s = 0;
};

// {iocp_model: {...,total}, emulation: {...,total}, outside_port: {...,total},
//  emulation_share, method}. emulation_share is null when nothing was counted.
nlohmann::json attribute_switches(const SwitchCounts& counts);

}  // namespace iocpbench::engine
