#include "engine/workload_registry.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace iocpbench::workloads {
namespace {

constexpr std::size_t kKinds = 3;  // WorkloadKind's values: post, file, socket

std::array<WorkloadFactory, kKinds>& factories() {
  static std::array<WorkloadFactory, kKinds> table{};
  return table;
}

std::size_t slot_of(WorkloadKind kind) {
  const auto slot = static_cast<std::size_t>(kind);
  if (slot >= kKinds) throw std::logic_error("workload registry: unknown workload kind");
  return slot;
}

}  // namespace

void register_workload(WorkloadKind kind, WorkloadFactory factory) {
  factories()[slot_of(kind)] = factory;
}

std::unique_ptr<Workload> make_workload(const WorkloadParams& params) {
  const WorkloadFactory factory = factories()[slot_of(params.workload)];
  if (factory == nullptr) {
    throw std::logic_error(std::string("no workload registered for '") + to_string(params.workload) +
                           "' (call workloads::register_builtin_workloads() at start-up)");
  }
  return factory(params);
}

}  // namespace iocpbench::workloads
