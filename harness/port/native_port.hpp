#pragma once
// The operating system's own completion port, where there is one: the kernel's IOCP on Windows
// (win32_port.cpp). Elsewhere native_port_none.cpp says there is none.

#include <memory>

#include "port/completion_port.hpp"

namespace iocpbench::port {

bool native_port_available();
std::unique_ptr<CompletionPort> make_native_port(const PortOptions& options);
// The OS object behind a port made by make_native_port (the IOCP's HANDLE on Windows), so the
// workloads can associate their files and sockets with it and the kernel queues their
// completions itself; nullptr for every other port.
void* native_handle(CompletionPort& port);

}  // namespace iocpbench::port
