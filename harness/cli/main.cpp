// iocpbench: sweep a completion port's concurrency value, pool size and blocking ratio.

#include <algorithm>
#include <exception>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/help_format.hpp"
#include "cli/unknown_args.hpp"
#include "platform/machine_info.hpp"
#include "core/schema_version.hpp"
#include "workloads/registry.hpp"

using namespace iocpbench::cli;

namespace {

constexpr const char* kExamples =
    "Examples:\n"
    "  iocpbench run -w post -d 2s                  one point, closed loop\n"
    "  iocpbench run -w file --block-size 4k -o r.json\n"
    "  iocpbench sweep --quick -o quick.json        a small grid, under a minute\n"
    "  iocpbench tune --workload post --blocking 0.5 --json t.json\n"
    "  iocpbench COMMAND --help                     a command's options";

}  // namespace

int main(int argc, char** argv) {
  iocpbench::workloads::register_builtin_workloads();
  CLI::App app{
      "iocpbench: measures which completion-port concurrency value and worker pool size suit a "
      "workload (post, file or socket I/O with a given blocking ratio), with throughput, "
      "latency and context switches. Exit status: 0 ok, 1 a run failed, 2 bad input, "
      "130 interrupted (results kept).",
      "iocpbench"};
  // Before the subcommands: they take the parent's formatter when they are added.
  app.formatter(make_help_formatter(help_width()));
  app.footer(kExamples);
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
    CLI::App* sub = app.get_subcommands({})[before];
    if (CLI::Option* help = sub->get_help_ptr()) help->group(kGroupCommon);
    bodies[sub] = std::move(body);
  };
  add(add_probe_command);
  add(add_info_command);
  add(add_run_command);
  add(add_sweep_command);
  add(add_tune_command);

  // A bare `iocpbench`: the usage, as a mistake (exit 2) that shows what to type.
  if (argc <= 1) {
    std::cerr << app.help();
    return kExitBadInput;
  }
  if (const auto problem = unknown_subcommand(app, argv[1])) {
    std::cerr << "iocpbench: " << *problem << '\n';
    return kExitBadInput;
  }
  // An option before any subcommand that the app does not take (CLI11 would only say that a
  // subcommand is required).
  if (const auto problem = unknown_option(app, 2, argv)) {
    std::cerr << "iocpbench: " << *problem << '\n';
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    std::cerr << "iocpbench: " << unknown_option(app, argc, argv).value_or(e.what()) << '\n';
    return kExitBadInput;
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
