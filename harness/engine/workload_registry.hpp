#pragma once
// The workloads the engine can run. workloads/ plugs in from above: workloads/registry.cpp
// registers one factory per workload kind (as fio's engines call register_ioengine), so the
// engine never includes a workload. A new workload is its file and one line there, plus its
// kind, parameters and flags (docs/architecture.md, "Where a change goes").

#include <memory>

#include "core/kinds.hpp"
#include "engine/workload.hpp"
#include "engine/workload_params.hpp"

namespace iocpbench::workloads {

using WorkloadFactory = std::unique_ptr<Workload> (*)(const WorkloadParams& params);

// Replaces any factory registered for `kind` before. Call before the first run (the registry
// is not locked: programs register at start-up, on one thread).
void register_workload(WorkloadKind kind, WorkloadFactory factory);

// The registered workload of params.workload. std::logic_error when none is registered: a
// program (or test) that links the workloads but did not call register_builtin_workloads().
std::unique_ptr<Workload> make_workload(const WorkloadParams& params);

}  // namespace iocpbench::workloads
