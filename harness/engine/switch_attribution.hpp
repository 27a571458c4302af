#pragma once
// Who made the context switches a run counted: the ones an IOCP would also make (a worker that
// sleeps in the port until a handoff, a handler that blocks, a thread preempted while the port
// runs over its limit), the emulation's own (a completion thread, a worker woken for nothing,
// a worker preempted by either), and the rest (the load generator, the harness's own threads,
// preemption by other processes). Pure: counts in, the split out (results/run_record writes it
// as points[].runs[].context_switches.attribution), so the rule is tested without a run.

#include <cstdint>
#include <optional>

namespace iocpbench::engine {

struct SwitchCounts {
  std::uint64_t workers_voluntary = 0, workers_involuntary = 0;
  std::uint64_t source_voluntary = 0, source_involuntary = 0;  // the completion thread(s)
  std::uint64_t load_generator = 0;  // the socket workload's client threads (both kinds)
  std::uint64_t other = 0;           // threads in no role: the harness's main and watchdog
  std::uint64_t handoffs = 0;        // port handoffs in the window (each wakes one waiter)
  // Per-thread ports: the waits a worker made for its own I/O, for its own port's next packet
  // (the GQCS sleep of that model; no handoff counts them).
  std::uint64_t own_io_waits = 0;
  std::uint64_t handler_blocks = 0;  // blocking calls the handlers made in the window
  double over_limit_s = 0;           // time with C > M in the window
  double window_s = 0;
};

struct SwitchAttribution {
  struct IocpModel {  // the switches an IOCP would also make
    std::uint64_t port_waits = 0, handler_blocks = 0, preempted_over_limit = 0, total = 0;
  } iocp_model;
  struct Emulation {  // the emulation's own
    std::uint64_t completion_thread = 0, workers_other_voluntary = 0, workers_preempted_by_it = 0,
                  total = 0;
  } emulation;
  struct OutsidePort {
    std::uint64_t load_generator = 0, other_threads = 0, workers_preempted_otherwise = 0, total = 0;
  } outside_port;
  std::optional<double> emulation_share;  // emulation.total / all counted; none when nothing was
};

SwitchAttribution attribute_switches(const SwitchCounts& counts);
// How attribute_switches splits the counts, in words (recorded beside the split).
const char* switch_attribution_method();

}  // namespace iocpbench::engine
