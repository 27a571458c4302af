#include "engine/workload_registry.hpp"

#include <map>
#include <stdexcept>
#include <string>

namespace iocpbench::workloads {
namespace {

// By kind; a map, so that a new WorkloadKind needs no count kept in step here.
std::map<WorkloadKind, WorkloadFactory>& factories() {
  static std::map<WorkloadKind, WorkloadFactory> table;
  return table;
}

}  // namespace

void register_workload(WorkloadKind kind, WorkloadFactory factory) { factories()[kind] = factory; }

std::unique_ptr<Workload> make_workload(const WorkloadParams& params) {
  const auto it = factories().find(params.workload);
  if (it == factories().end() || it->second == nullptr) {
    throw std::logic_error(std::string("no workload registered for '") + to_string(params.workload) +
                           "' (call workloads::register_builtin_workloads() at start-up)");
  }
  return it->second(params);
}

}  // namespace iocpbench::workloads
