#pragma once
// Flags that keep the user's text (so that a bad value is reported in the project's words and
// --resume can tell a given flag from a default) but show in --help what they take and the
// default actually used: `--duration FLOAT [0.7]`, `--pool POOL [2N]`.

#include <string>

#include <CLI/CLI.hpp>

namespace iocpbench::cli {

// `type`: INT, FLOAT, or what a text flag takes (COUNT, POOL, a list of them); `default_text`:
// what the command uses when the flag is absent (empty: none shown).
CLI::Option* add_text_option(CLI::App& command, const std::string& name, std::string& text,
                             const std::string& help, const std::string& type,
                             const std::string& default_text);

// A number as --help shows it: 100, 0.7, 0.15.
std::string number_text(double value);

}  // namespace iocpbench::cli
