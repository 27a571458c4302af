#pragma once
// The probe's findings as JSON: the `probe --json` file and the results' machine.probe block.

#include <vector>

#include <nlohmann/json.hpp>

#include "port/completion_port.hpp"
#include "port/semantics_probe.hpp"
#include "platform/machine_info.hpp"

namespace iocpbench::results {

nlohmann::json probe_to_json(port::Backend backend, const platform::MachineInfo& machine,
                             const std::vector<port::ProbeFinding>& findings);

}  // namespace iocpbench::results
