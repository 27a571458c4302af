#pragma once
// The workload flags of `run`, `sweep` and `tune` (--posters, --file, --connections, ...): the
// CLI side of engine/workload_params.hpp, so that workloads/ needs no CLI11. The flags keep the user's
// text (empty when not given): --resume tells given flags from defaults, and every bad value is
// reported naming its flag in the project's own words.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/kinds.hpp"

namespace iocpbench::cli {

struct WorkloadFlags {
  std::string posters, in_flight, latency_sample_every, file, file_size_mib, block_size, pattern, op,
      outstanding, connections, message_size, messages_in_flight, skip_port_share, completion_path;
  bool buffered = false;
  bool overwrite = false;
};

// Registers the flags on `command`; --help shows each number's type (INT, FLOAT) and the default
// the workload takes when the flag is absent (engine/workload_params.hpp).
void add_workload_flags(CLI::App& command, WorkloadFlags& flags);

// The given flags as workload_params JSON (numbers parsed; BadInput naming the flag otherwise).
// Feed the result to workloads::parse_workload_params (or PointSpec::workload_params) to check
// ranges.
nlohmann::json workload_params_from_flags(const WorkloadFlags& flags);

// One warning line on stderr naming the given flags that none of `workloads` takes (--op with
// post): they are ignored, and a user who typed them expected them to matter.
void warn_inapplicable_flags(const WorkloadFlags& flags, const std::vector<WorkloadKind>& workloads);

}  // namespace iocpbench::cli
