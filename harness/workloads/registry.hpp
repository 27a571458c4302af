#pragma once
// The built-in workloads, registered with the engine (engine/workload_registry.hpp). The
// program calls this once at start-up (cli/main.cpp), and so does every test that runs points.

namespace iocpbench::workloads {

void register_builtin_workloads();

}  // namespace iocpbench::workloads
