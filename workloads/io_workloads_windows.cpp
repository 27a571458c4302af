// The file and socket workloads on Windows need an overlapped-I/O completion source (the
// kernel's IOCP takes the completions itself); until it exists they are refused clearly.

#include "cli/commands.hpp"
#include "workloads/workload.hpp"

namespace iocpbench::workloads {

std::unique_ptr<Workload> make_file_workload(const FileParams&) {
  throw cli::BadInput{"--workload", "file is not available on Windows yet (post is)"};
}

std::unique_ptr<Workload> make_socket_workload(const SocketParams&) {
  throw cli::BadInput{"--workload", "socket is not available on Windows yet (post is)"};
}

}  // namespace iocpbench::workloads
