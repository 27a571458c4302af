// iocpbench: sweep a completion port's concurrency value, pool size and blocking ratio.

#include <exception>
#include <iostream>
#include <map>
#include <string>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "platform/machine_info.hpp"
#include "core/schema_version.hpp"
#include "workloads/registry.hpp"

using namespace iocpbench::cli;

int main(int argc, char** argv) {
  iocpbench::workloads::register_builtin_workloads();
  CLI::App app{
      "iocpbench: measures which completion-port concurrency value and worker pool size suit a\n"
      "workload (post, file or socket I/O with a given blocking ratio), with throughput,\n"
      "latency and context switches. Exit status: 0 ok, 1 a run failed, 2 bad input,\n"
      "130 interrupted (results kept)."};
  app.set_version_flag("--version", [] {
    const iocpbench::platform::ToolInfo tool = iocpbench::platform::tool_info();
    return "iocpbench " + tool.version + " (git " + tool.git + ", " + tool.build_type + ", " +
           tool.compiler + "), results schema " +
           std::to_string(iocpbench::core::kResultsSchemaVersion);
  }, "print the version, the build and the results schema version, then exit");
  app.require_subcommand(1);
  std::map<CLI::App*, CommandBody> bodies;
  auto add = [&](CommandBody (*adder)(CLI::App&)) {
    const auto before = app.get_subcommands({}).size();
    CommandBody body = adder(app);
    bodies[app.get_subcommands({})[before]] = std::move(body);
  };
  add(add_probe_command);
  add(add_info_command);
  add(add_run_command);
  add(add_sweep_command);
  add(add_tune_command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "iocpbench: " << e.what() << '\n';
    return kExitBadInput;
  }
  try {
    for (auto& [sub, body] : bodies) {
      if (sub->parsed()) return body();
    }
  } catch (const iocpbench::BadInput& bad) {
    std::cerr << "iocpbench: " << bad.flag << ": " << bad.reason << '\n';
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "iocpbench: " << e.what() << '\n';
    return kExitRunFailed;
  }
  return kExitBadInput;
}
