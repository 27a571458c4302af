#pragma once
// The built-in workloads' factories (one file each, for every OS).
// Only workloads/registry.cpp and tests name them: everything else asks the engine's registry.

#include <memory>

#include "engine/workload.hpp"
#include "engine/workload_params.hpp"

namespace iocpbench::workloads {

std::unique_ptr<Workload> make_post_workload(const PostParams& params);
std::unique_ptr<Workload> make_file_workload(const FileParams& params);
std::unique_ptr<Workload> make_socket_workload(const SocketParams& params);

}  // namespace iocpbench::workloads
