#include "results/probe_json.hpp"

#include <string>

namespace iocpbench::results {

nlohmann::json probe_to_json(port::Backend backend, const platform::MachineInfo& machine,
                             const std::vector<port::ProbeFinding>& findings) {
  nlohmann::json semantics = nlohmann::json::object();
  for (const auto& finding : findings) {
    semantics[finding.name] = {{"value", finding.value}, {"evidence", finding.evidence}};
  }
  return {{"backend", std::string(port::to_string(backend))},
          {"wine", machine.wine_version.has_value()},
          {"os", machine.os},
          {"logical_cpus", machine.logical_cpus},
          {"semantics", semantics}};
}

}  // namespace iocpbench::results
