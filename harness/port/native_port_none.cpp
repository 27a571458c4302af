#include "port/native_port.hpp"

namespace iocpbench::port {

bool native_port_available() { return false; }
std::unique_ptr<CompletionPort> make_native_port(const PortOptions&) { return nullptr; }
void* native_handle(CompletionPort&) { return nullptr; }

}  // namespace iocpbench::port
