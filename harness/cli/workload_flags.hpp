#pragma once
// The workload flags of `run`, `sweep` and `tune` (--posters, --file, --connections, ...), drawn
// from the workloads' parameter rows (engine/workload_params.hpp): each row gives its flag, its
// type and range and help for --help, and the default shown, so that a parameter is declared in
// one place. The flags keep the user's text (empty when not given): --resume tells given flags
// from defaults, and every bad value is reported naming its flag in the project's own words.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/kinds.hpp"

namespace iocpbench::cli {

struct WorkloadFlags {
  // By flag name: the user's text of each value flag ("" when not given) and whether each flag
  // without a value (--buffered) was given. std::map: CLI11 keeps references to the values.
  std::map<std::string, std::string, std::less<>> text;
  std::map<std::string, bool, std::less<>> on;

  bool given(std::string_view flag) const;
  // The text given for `flag`, or "" (not given, or not a value flag).
  const std::string& text_of(std::string_view flag) const;
};

// Registers every row's flag on `command`, filed under its workload's --help heading (a flag of
// several workloads under the advanced ones), with its type, default and range.
void add_workload_flags(CLI::App& command, WorkloadFlags& flags);

// The given flags as workload_params JSON under the rows' keys (numbers and sizes parsed;
// BadInput naming the flag otherwise). workloads::parse_workload_params checks the ranges.
nlohmann::json workload_params_from_flags(const WorkloadFlags& flags);

// One warning line on stderr naming the given flags that none of `workloads` takes (--op with
// post): they are ignored, and a user who typed them expected them to matter.
void warn_inapplicable_flags(const WorkloadFlags& flags, const std::vector<WorkloadKind>& workloads);

}  // namespace iocpbench::cli
