#pragma once
// The line a mistyped command gets: "unknown subcommand 'rnu' (probe, info, run, sweep, tune)",
// "unknown option '--wokload' (did you mean --workload?)". CLI11's own messages name neither
// the word nor what was meant.

#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace iocpbench::cli {

// The edit distance (insertions, deletions, substitutions, adjacent swaps) between two words.
std::size_t edit_distance(std::string_view a, std::string_view b);

// Why `word` (the first argument) names no subcommand of `app`, or nothing when it is one or an
// option (--help, --version).
std::optional<std::string> unknown_subcommand(const CLI::App& app, const std::string& word);

// The first option on the command line that its subcommand does not know, with the nearest
// known one; nothing when every option is known (the extra is then a stray value).
std::optional<std::string> unknown_option(const CLI::App& app, int argc, const char* const* argv);

}  // namespace iocpbench::cli
