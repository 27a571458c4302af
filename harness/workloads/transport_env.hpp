#pragma once
// What the file and socket workloads hand their I/O transport (io/async_io.hpp): the run's
// ports and roles, and whether the port reads the completions itself (--completion-path port).

#include "io/async_io.hpp"
#include "engine/workload_params.hpp"
#include "engine/workload.hpp"

namespace iocpbench::workloads {

inline io::TransportEnv transport_env(const RunEnv& env, CompletionPath path) {
  io::TransportEnv transport;
  transport.port = env.port;
  transport.worker_ports = env.worker_ports;
  transport.roles = env.roles;
  transport.port_reads = path == CompletionPath::port;
  return transport;
}

}  // namespace iocpbench::workloads
