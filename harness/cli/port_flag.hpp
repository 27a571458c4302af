#pragma once
// The --port flag, shared by every subcommand that builds a port.

#include <string>

#include <CLI/CLI.hpp>

#include "port/completion_port.hpp"

namespace iocpbench::cli {

// Adds --port to `command`, storing the name in `name` (default: this OS's native backend).
void add_port_flag(CLI::App& command, std::string& name);
// Parses and checks availability; throws BadInput naming --port otherwise.
port::Backend resolve_port_flag(const std::string& name);

}  // namespace iocpbench::cli
