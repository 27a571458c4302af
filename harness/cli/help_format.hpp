#pragma once
// --help as people read it: wrapped to the terminal, the options in groups in a fixed order
// (common first, the workloads' own, advanced last), examples kept as written. The group names
// live here, so that every command files its options under the same headings.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace iocpbench::cli {

inline constexpr const char* kGroupCommon = "Common";
inline constexpr const char* kGroupPost = "Post workload";
inline constexpr const char* kGroupFile = "File workload";
inline constexpr const char* kGroupSocket = "Socket workload";
inline constexpr const char* kGroupAdvanced = "Advanced";

// The help's width: $COLUMNS, else the terminal's, else 80; at least 40.
std::size_t help_width();

// `text` filled to `width` columns, paragraph by paragraph ('\n' ends one); a line that starts
// with a space (an example command) is kept as it is.
std::string wrap_text(const std::string& text, std::size_t width);

// The formatter for the app; subcommands added after it is set inherit it.
std::shared_ptr<CLI::Formatter> make_help_formatter(std::size_t width);

// Files the named options of `command` (those it has) under `group`.
void group_options(CLI::App& command, const char* group, const std::vector<std::string>& names);

}  // namespace iocpbench::cli
