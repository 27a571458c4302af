#pragma once
// Each subcommand registers itself on the app and returns the exit status through `result`.

#include <functional>

#include <CLI/CLI.hpp>

#include "core/errors.hpp"

namespace iocpbench::cli {

// BadInput (core/errors.hpp: no CLI11 below cli/) is iocpbench::BadInput, found from here.

using CommandBody = std::function<int()>;

CommandBody add_probe_command(CLI::App& app);
CommandBody add_info_command(CLI::App& app);
CommandBody add_run_command(CLI::App& app);
CommandBody add_sweep_command(CLI::App& app);
CommandBody add_tune_command(CLI::App& app);

}  // namespace iocpbench::cli
