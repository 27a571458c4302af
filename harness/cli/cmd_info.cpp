// `iocpbench info`: the machine and build metadata every results file carries.

#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "results/json_file.hpp"
#include "platform/machine_info.hpp"

namespace iocpbench::cli {

CommandBody add_info_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "info", "Print the machine and build metadata that results files carry (JSON on stdout).");
  auto json_path = std::make_shared<std::string>();
  command->add_option("-o,--json", *json_path, "also write it to this JSON file")->type_name("FILE");
  command->footer(
      "Examples:\n"
      "  iocpbench info                        the metadata as JSON on stdout\n"
      "  iocpbench info -o machine.json");
  return [json_path]() {
    if (!json_path->empty()) {
      if (auto problem = results::output_path_problem(*json_path)) throw BadInput{"--json", *problem};
    }
    const nlohmann::json document = {{"tool", platform::to_json(platform::tool_info())},
                                     {"machine", platform::to_json(platform::gather_machine_info())}};
    std::cout << document.dump(2) << '\n';
    if (!json_path->empty()) results::write_json_atomically(*json_path, document);
    return kExitOk;
  };
}

}  // namespace iocpbench::cli
