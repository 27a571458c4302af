// `iocpbench probe`: which IOCP scheduling properties does this backend really have?

#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/port_flag.hpp"
#include "results/json_file.hpp"
#include "platform/machine_info.hpp"
#include "results/probe_json.hpp"

namespace iocpbench::cli {

CommandBody add_probe_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "probe",
      "Probe the port's scheduling semantics (FIFO packets, LIFO wake-up, concurrency cap, "
      "blocking releases a waiter, over-limit window, abandon on close), each with evidence. "
      "Takes a few seconds; every probe is time-bounded.");
  struct Options {
    std::string port;
    std::string json;
  };
  auto options = std::make_shared<Options>();
  add_port_flag(*command, options->port);
  command->add_option("-o,--json", options->json, "write the findings to this JSON file")->type_name("FILE");
  command->footer(
      "Examples:\n"
      "  iocpbench probe                       the default backend's semantics\n"
      "  iocpbench probe --port condvar -o probe.json");

  return [options]() {
    const port::Backend backend = resolve_port_flag(options->port);
    if (!options->json.empty()) {
      if (auto problem = results::output_path_problem(options->json)) throw BadInput{"--json", *problem};
    }
    const platform::MachineInfo machine = platform::gather_machine_info();
    const auto findings = port::probe_semantics(
        [backend](unsigned m) { return port::make_port(backend, {.concurrency = m}); });
    const nlohmann::json document = results::probe_to_json(backend, machine, findings);
    for (const auto& finding : findings) {
      std::cout << (finding.value ? "yes " : "NO  ") << finding.name << ": " << finding.evidence
                << '\n';
    }
    if (!options->json.empty()) results::write_json_atomically(options->json, document);
    return kExitOk;
  };
}

}  // namespace iocpbench::cli
