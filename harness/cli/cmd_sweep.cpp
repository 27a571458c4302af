// `iocpbench sweep`: concurrency value x pool size x blocking ratio x workload, repeated and
// interleaved, into one resumable results file.

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/help_format.hpp"
#include "cli/interrupt.hpp"
#include "cli/machine_load_warning.hpp"
#include "cli/sweep_flags.hpp"
#include "platform/file_lock.hpp"
#include "platform/machine_info.hpp"
#include "results/read.hpp"
#include "sweep/results_file.hpp"
#include "results/write.hpp"
#include "sweep/sweep_runner.hpp"
#include "engine/workload_params.hpp"

namespace iocpbench::cli {
namespace {

void print_summary(const results::ResultsDocument& doc, const std::string& path) {
  std::size_t runs = 0;
  for (const auto& point : doc.points) runs += point.runs.size();
  std::cout << "wrote " << path << ": " << doc.points.size() << " points, " << runs << " runs, "
            << (doc.sweep.complete.value_or(false) ? "complete" : "INCOMPLETE (--resume to finish)")
            << '\n';
}

struct SweepOptions {
  SweepFlags flags;
  std::string resume;
  bool quick = false, quiet = false, no_probe = false, force = false;
};

// What --resume finishes: the file, its grid, and where the results go, with the files locked.
struct Resumed {
  results::ResultsDocument existing;
  sweep::Grid grid;
  std::string note;  // printed once the resume is accepted
};

// The grid the flags start from.
sweep::Grid base_grid(bool quick) { return quick ? sweep::quick_grid() : sweep::default_grid(); }

// Refuses (BadInput) a grid on the command line other than the file's `grid`. Given grid flags
// (or --quick) are compared with the path left as given (not today's default); --completion-path
// alone compares the path alone.
void check_same_grid(const SweepFlags& flags, bool quick, const sweep::Grid& grid) {
  const std::string& path_flag = flags.workload_flags.text_of("--completion-path");
  const bool grid_given = flags.any_grid_flag_given() || quick;
  if (!grid_given && path_flag.empty()) return;
  constexpr const char* kPath = "completion_path";
  // The grid asked for: the flags' (the path left as given: not today's default), or the
  // file's own when --completion-path is all that is given (then the path alone compares).
  sweep::Grid asked = grid_given ? grid_from_flags(flags, base_grid(quick), /*record_path=*/false) : grid;
  if (!path_flag.empty()) {
    workloads::parse_workload_params(WorkloadKind::socket, {{kPath, path_flag}});  // thread | port, else exit 2
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
      throw BadInput{"--completion-path", "the file's runs used " + path_of(grid) + ", not " + path_of(asked) +
                                              " (a resumed point keeps its path)"};
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

// Reads and checks the file to resume (same machine, same grid). `resume_lock` is taken when
// the results go elsewhere: a file that is only read is refused only while another process
// writes it.
Resumed read_resumed(const SweepOptions& o, const std::string& json_path, platform::FileLock& resume_lock) {
  const bool in_place = std::filesystem::path(json_path) == std::filesystem::path(o.resume);
  if (!in_place) {
    std::string busy_text;
    bool busy = false;
    resume_lock = platform::lock_results_file(o.resume, busy_text, &busy);
    if (busy) throw BadInput{"--resume", busy_text};
  }
  Resumed r;
  sweep::ResumedFile file = sweep::read_for_resume(o.resume);  // upgraded to today's ids
  r.existing = std::move(file.document);
  if (!file.note.empty()) r.note = "iocpbench: note: " + o.resume + ' ' + file.note;
  platform::MachineInfo machine = platform::gather_machine_info();
  sweep::check_same_machine(results::to_json(r.existing.machine), platform::to_json(machine));
  r.grid = sweep::grid_from_json(results::to_json(r.existing.sweep), "--resume");
  check_same_grid(o.flags, o.quick, r.grid);
  return r;
}

int sweep_command(const SweepOptions& o) {
  const bool resuming = !o.resume.empty();
  const std::string json_path = o.flags.json.empty() && resuming ? o.resume : o.flags.json;
  std::optional<results::ResultsDocument> existing;
  sweep::Grid grid;
  std::string resume_note;
  // Held until the command returns: no other process writes the results file meanwhile (nor
  // the file being resumed, when the results go elsewhere).
  platform::FileLock json_lock, resume_lock;
  // Under the results file's lock (a file another process writes is refused as such): one that
  // holds points is replaced only with --force, or finished with --resume.
  const bool in_place = resuming && std::filesystem::path(json_path) == std::filesystem::path(o.resume);
  const auto refuse_replacing = [&] {
    if (o.force || in_place) return;
    refuse_replacing_results(json_path, "--json",
                             resuming ? "--force replaces it, or choose another file"
                                      : "--resume " + json_path + " finishes it, --force replaces it, "
                                        "or choose another file");
  };
  if (resuming) {
    json_lock = lock_output_file(json_path, o.flags.json.empty() ? "--resume" : "--json");
    refuse_replacing();
    Resumed resumed = read_resumed(o, json_path, resume_lock);
    existing = std::move(resumed.existing);
    grid = std::move(resumed.grid);
    resume_note = std::move(resumed.note);
  } else {
    if (json_path.empty()) throw BadInput{"--json", "required (where the results go)"};
    grid = grid_from_flags(o.flags, base_grid(o.quick));
    json_lock = lock_output_file(json_path, "--json");
    refuse_replacing();
  }
  sweep::validate_grid(grid);
  warn_inapplicable_flags(o.flags.workload_flags, grid.workloads);
  if (!resume_note.empty()) std::cerr << resume_note << '\n';

  const auto& stop = install_interrupt_handlers();
  sweep::SweepJob job{grid, json_path, existing, o.quiet, !o.no_probe};
  const sweep::SweepOutcome outcome = sweep::run_sweep(job, stop);
  print_summary(outcome.document, json_path);
  if (const auto busy = busy_machine_warning(outcome.document.points)) {
    std::cerr << "iocpbench: warning: " << *busy << '\n';
  }
  if (outcome.interrupted) return kExitInterrupted;
  return outcome.failed_runs > 0 ? kExitRunFailed : kExitOk;
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
  auto options = std::make_shared<SweepOptions>();
  add_sweep_flags(*command, options->flags, PointCommand::sweep, sweep::default_grid());
  command->add_flag("--quick", options->quick, "a small grid of short runs: under a minute on 2 CPUs")
      ->group(kGroupCommon);
  command->add_option("--resume", options->resume,
                      "finish an interrupted sweep: runs only what FILE lacks; refuses a file "
                      "from another machine or grid")
      ->type_name("FILE")
      ->group(kGroupCommon);
  command->add_flag("--force", options->force, "let --json replace a results file that holds points")
      ->group(kGroupCommon);
  command->add_flag("-q,--quiet", options->quiet, "no progress display (warnings still print)")
      ->group(kGroupAdvanced);
  command->add_flag("--no-probe", options->no_probe,
                    "skip the semantic probe recorded in the machine block")
      ->group(kGroupAdvanced);
  command->footer(
      "A flag whose value ends in ,... takes a comma-separated list: the grid has a point for "
      "each value. Durations take units (us, ms, s, m, h; a plain number is the flag's own "
      "unit), sizes take k, MiB, GiB (powers of 1024).\n"
      "\n"
      "Examples:\n"
      "  iocpbench sweep --quick -o quick.json         a small grid, about a minute\n"
      "  iocpbench sweep -w post -b 0,0.5 -p N,2N -o post.json\n"
      "  iocpbench sweep -w file --block-size 64k -d 1s -r 3 -o file.json\n"
      "  iocpbench sweep --resume post.json            finish an interrupted sweep\n"
      "  iocpbench sweep --target-ci 2 -o ci.json      repeat until each CI is under 2%");
  return [options]() { return sweep_command(*options); };
}

}  // namespace iocpbench::cli
