// `iocpbench sweep`: concurrency value x pool size x blocking ratio x workload, repeated and
// interleaved, into one resumable results file.

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/interrupt.hpp"
#include "cli/sweep_flags.hpp"
#include "report/file_lock.hpp"
#include "report/json_file.hpp"
#include "report/machine_info.hpp"
#include "report/schema_version.hpp"
#include "sweep/completion_path_compat.hpp"
#include "sweep/sweep_runner.hpp"
#include "workloads/params.hpp"

namespace iocpbench::cli {
namespace {

nlohmann::json read_results_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BadInput{"--resume", "cannot read '" + path + "'"};
  nlohmann::json doc;
  try {
    in >> doc;
  } catch (const nlohmann::json::exception&) {
    throw BadInput{"--resume", "'" + path + "' is not valid JSON (truncated or corrupt)"};
  }
  if (!doc.is_object() || doc.value("schema_version", 0) != report::kResultsSchemaVersion || !doc.contains("sweep") ||
      !doc.contains("points") || !doc.contains("machine")) {
    throw BadInput{"--resume", "'" + path + "' is not an iocpbench results file of schema version " +
                                   std::to_string(report::kResultsSchemaVersion)};
  }
  return doc;
}

void print_summary(const nlohmann::json& doc, const std::string& path) {
  std::size_t runs = 0;
  for (const auto& point : doc["points"]) runs += point["runs"].size();
  std::cout << "wrote " << path << ": " << doc["points"].size() << " points, " << runs << " runs, "
            << (doc["sweep"]["complete"].get<bool>() ? "complete" : "INCOMPLETE (--resume to finish)")
            << '\n';
}

}  // namespace

CommandBody add_sweep_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "sweep",
      "Sweep concurrency value x pool size x blocking ratio x workload. Counts take N-relative "
      "specs (N = logical CPUs): 4, N, 2N, 2N+2, 3N-1; concurrency 0 = the port default. Runs "
      "are repeated and interleaved at random; the results file is rewritten after every run, "
      "so an interrupted sweep (Ctrl-C: exit 130) keeps its finished runs and --resume finishes "
      "it.");
  struct Options {
    SweepFlags flags;
    std::string resume;
    bool quick = false, quiet = false, no_probe = false;
  };
  auto options = std::make_shared<Options>();
  add_sweep_flags(*command, options->flags, /*for_tune=*/false);
  command->add_flag("--quick", options->quick, "a small grid of short runs: under a minute on 2 CPUs");
  command->add_option("--resume", options->resume,
                      "finish an interrupted sweep: runs only what FILE lacks; refuses a file "
                      "from another machine or grid");
  command->add_flag("--quiet", options->quiet, "no progress display (warnings still print)");
  command->add_flag("--no-probe", options->no_probe,
                    "skip the semantic probe recorded in the machine block");

  return [options]() {
    const SweepFlags* flags = &options->flags;
    const std::string* resume_owner = &options->resume;
    const bool quick = options->quick;
    const bool resuming = !resume_owner->empty();
    std::string json_path = flags->json;
    std::optional<nlohmann::json> existing;
    sweep::Grid grid;
    std::string resume_note;  // printed once the resume is accepted
    // Held until the command returns: no other process writes the results file meanwhile (nor
    // the file being resumed, when the results go elsewhere).
    report::FileLock json_lock, resume_lock;
    auto lock = [](const std::string& path, const char* flag, report::FileLock& held) {
      if (auto problem = report::output_path_problem(path)) throw BadInput{flag, *problem};
      std::string busy;
      held = report::lock_results_file(path, busy);
      if (!held.held()) throw BadInput{flag, busy};
    };
    if (resuming) {
      const bool in_place = json_path.empty() || std::filesystem::path(json_path) ==
                                                     std::filesystem::path(*resume_owner);
      if (json_path.empty()) json_path = *resume_owner;
      lock(json_path, flags->json.empty() ? "--resume" : "--json", json_lock);
      if (!in_place) {  // a file that is only read: refused only while another process writes it
        std::string busy_text;
        bool busy = false;
        resume_lock = report::lock_results_file(*resume_owner, busy_text, &busy);
        if (busy) throw BadInput{"--resume", busy_text};
      }
      existing = read_results_file(*resume_owner);
      // Older files: absent = thread, so a point's missing runs use its other runs' path.
      if (const std::string note = sweep::upgrade_completion_path(*existing); !note.empty()) {
        resume_note = "iocpbench: note: " + *resume_owner + ' ' + note;
      }
      report::MachineInfo machine = report::gather_machine_info();
      sweep::check_same_machine(existing->at("machine"), report::to_json(machine));
      grid = sweep::grid_from_json(existing->at("sweep"), "--resume");
      const std::string& path_flag = flags->workload_flags.completion_path;
      const bool grid_given = flags->any_grid_flag_given() || quick;
      if (grid_given || !path_flag.empty()) {
        constexpr const char* kPath = "completion_path";
        // The grid asked for: the flags' (the path left as given: not today's default), or the
        // file's own when --completion-path is all that is given (then the path alone compares).
        sweep::Grid asked = grid_given ? grid_from_flags(*flags, quick, /*record_path=*/false) : grid;
        if (!path_flag.empty()) {
          workloads::parse_workload_params("socket", {{kPath, path_flag}});  // thread | port, else exit 2
          asked.workload_params[kPath] = path_flag;
        } else if (asked.workload_params.is_object() && !asked.workload_params.contains(kPath) &&
                   grid.workload_params.contains(kPath)) {
          // Named neither by --completion-path nor by --grid: the file's path, whichever it is.
          asked.workload_params[kPath] = grid.workload_params[kPath];
        }
        const auto path_of = [](const sweep::Grid& g) {
          return g.workload_params.value("completion_path", nlohmann::json()).dump();
        };
        // Named first: the likeliest mismatch.
        if (path_of(asked) != path_of(grid)) {
          if (grid.workload_params.contains(kPath)) {
            throw BadInput{"--completion-path", "the file's runs used " + path_of(grid) + ", not " +
                                                    path_of(asked) + " (a resumed point keeps its path)"};
          }
          if (!path_flag.empty()) {
            throw BadInput{"--completion-path",
                           "the file's grid records no completion path (it has no file or socket workload)"};
          }
        }
        if (sweep::grid_to_json(asked) != sweep::grid_to_json(grid)) {
          throw BadInput{"--resume", "the file's grid differs from the one on the command line"};
        }
      }
    } else {
      if (json_path.empty()) throw BadInput{"--json", "required (where the results go)"};
      grid = grid_from_flags(*flags, quick);
      lock(json_path, "--json", json_lock);
    }
    sweep::validate_grid(grid);
    if (!resume_note.empty()) std::cerr << resume_note << '\n';

    const auto& stop = install_interrupt_handlers();
    sweep::SweepJob job{grid, json_path, existing, options->quiet, !options->no_probe};
    const sweep::SweepOutcome outcome = sweep::run_sweep(job, stop);
    print_summary(outcome.document, json_path);
    if (outcome.interrupted) return kExitInterrupted;
    return outcome.failed_runs > 0 ? kExitRunFailed : kExitOk;
  };
}

}  // namespace iocpbench::cli
