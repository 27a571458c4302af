#pragma once
// The sweep driver: grid -> points on this machine -> interleaved schedule -> one run at a time
// -> the results file, rewritten atomically after every run, resumable, interruptible.

#include <atomic>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "results/document.hpp"
#include "sweep/grid.hpp"

namespace iocpbench::sweep {

struct SweepJob {
  Grid grid;
  std::filesystem::path json_path;
  std::optional<results::ResultsDocument> resume;  // the results file being resumed
  bool quiet = false;
  bool probe = true;  // record the port's semantic probe in the machine block
};

struct SweepOutcome {
  results::ResultsDocument document;
  bool complete = false;
  bool interrupted = false;
  std::size_t failed_runs = 0;
};

// Checks the grid and every point before anything runs; throws BadInput.
void validate_grid(const Grid& grid);

// Throws BadInput when `existing` was made on another machine (hostname, OS, CPU model,
// logical CPUs) than `machine`, naming --resume.
void check_same_machine(const nlohmann::json& existing, const nlohmann::json& machine);

SweepOutcome run_sweep(const SweepJob& job, const std::atomic<bool>& stop_requested);

}  // namespace iocpbench::sweep
