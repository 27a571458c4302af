#include "workloads/registry.hpp"

#include <variant>

#include "engine/workload_registry.hpp"
#include "workloads/workloads.hpp"

namespace iocpbench::workloads {
namespace {

// Each factory takes its own alternative of the parsed parameters (engine/workload_params).
template <class Params, std::unique_ptr<Workload> (*make)(const Params&)>
std::unique_ptr<Workload> from_params(const WorkloadParams& params) {
  return make(std::get<Params>(params.params));
}

}  // namespace

void register_builtin_workloads() {
  register_workload(WorkloadKind::post, from_params<PostParams, make_post_workload>);
  register_workload(WorkloadKind::file, from_params<FileParams, make_file_workload>);
  register_workload(WorkloadKind::socket, from_params<SocketParams, make_socket_workload>);
}

}  // namespace iocpbench::workloads
