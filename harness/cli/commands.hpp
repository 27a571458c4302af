#pragma once
// Each subcommand registers itself on the app and returns the exit status through `result`.

#include <functional>

#include <CLI/CLI.hpp>

namespace iocpbench::cli {

// Thrown by a command for bad input found after parsing: one line, exit status 2.
struct BadInput {
  std::string flag;
  std::string reason;
};

using CommandBody = std::function<int()>;

CommandBody add_probe_command(CLI::App& app);
CommandBody add_info_command(CLI::App& app);
CommandBody add_run_command(CLI::App& app);
CommandBody add_sweep_command(CLI::App& app);
CommandBody add_tune_command(CLI::App& app);

}  // namespace iocpbench::cli
