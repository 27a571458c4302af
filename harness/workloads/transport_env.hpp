#pragma once
// What the file and socket workloads hand their I/O transport (io/async_io.hpp): the run's
// ports and roles, whether the port reads the completions itself (--completion-path port), and
// whether the handles ask for skip on success (--skip-on-success, resolved for the workload).

#include "io/async_io.hpp"
#include "engine/workload_params.hpp"
#include "engine/workload.hpp"

namespace iocpbench::workloads {

inline io::TransportEnv transport_env(const RunEnv& env, CompletionPath path,
                                      WorkloadKind workload) {
  io::TransportEnv transport;
  transport.skip_requested = env.skip_on_success;
  transport.skip_on_success = skip_on_success_asked(env.skip_on_success, workload);
  transport.port = env.port;
  transport.worker_ports = env.worker_ports;
  transport.roles = env.roles;
  transport.port_reads = path == CompletionPath::port;
  return transport;
}

}  // namespace iocpbench::workloads
