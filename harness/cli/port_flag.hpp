#pragma once
// The --port flag, shared by every subcommand that builds a port.

#include <string>

#include <CLI/CLI.hpp>

#include "port/completion_port.hpp"

namespace iocpbench::cli {

// What --port takes, as every command's --help says it.
inline constexpr const char* kPortHelp =
    "completion port backend: emulated (IOCP semantics in user space), win32 (the kernel's IOCP, "
    "Windows only), condvar, asio; ablations: the emulated port without one IOCP property: "
    "emulated-fifo-wakeup, emulated-no-cap, emulated-no-block-release";

// Adds --port to `command`, storing the name in `name` (default: this OS's native backend).
void add_port_flag(CLI::App& command, std::string& name);
// Parses and checks availability; throws BadInput naming --port otherwise.
port::Backend resolve_port_flag(const std::string& name);

}  // namespace iocpbench::cli
