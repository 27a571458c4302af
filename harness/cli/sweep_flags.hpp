#pragma once
// The flags of `sweep` and `tune` (the point flags, cli/point_flags.hpp, and their own), kept as
// the user's text so that every bad value is reported with its flag, and so --resume can tell
// which flags were given.

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "sweep/grid.hpp"
#include "cli/controller_flags.hpp"
#include "cli/point_flags.hpp"
#include "cli/profile_flags.hpp"
#include "cli/workload_flags.hpp"
#include "platform/file_lock.hpp"

namespace iocpbench::cli {

struct SweepFlags {
  PointFlagTexts point;  // the point flags (cli/point_flags.hpp)
  std::string json, grid_file, target_ci, max_repetitions;  // sweep's own (--json: tune's too)
  WorkloadFlags workload_flags;
  HillFlags hill;  // sweep only
  ProfileFlags profile;  // sweep only
  std::vector<CLI::Option*> grid_options;  // to tell whether any was given

  bool any_grid_flag_given() const;
};

// The flags of sweep, or of tune (`use`); --help shows the defaults of `defaults`.
void add_sweep_flags(CLI::App& command, SweepFlags& flags, PointCommand use, const sweep::Grid& defaults);

// The grid: `base` (the command's defaults: sweep's, --quick's or tune's), then --grid FILE, then
// each flag given. Throws BadInput.
// record_path: the completion path spelled out (the default when neither --completion-path nor
// the --grid file names one), as a results file records it; false leaves it as given (--resume
// then takes the file's).
sweep::Grid grid_from_flags(const SweepFlags& flags, const sweep::Grid& base, bool record_path = true);

// Numbers from flags, with the flag named on failure.
double parse_number_flag(const std::string& text, const std::string& flag);
unsigned parse_count_flag(const std::string& text, const std::string& flag, unsigned minimum);
// A duration (`0.3s`, `500ms`, `2m`, or a plain number of the flag's own unit) in units of
// `base_s` seconds; a size (`4k`, `64MiB`, or a plain number of the flag's unit) in units of
// `base_bytes` (core/units.hpp). BadInput naming the flag otherwise.
double parse_duration_flag(const std::string& text, const std::string& flag, double base_s);
std::uint64_t parse_size_flag(const std::string& text, const std::string& flag, std::uint64_t base_bytes);

// --arrivals (run, sweep): the open loop's arrival process.
core::ArrivalProcess parse_arrivals_flag(const std::string& text);

// --working-set-kib (run, sweep, tune): KiB per worker thread, 0 to 1 GiB.
std::uint32_t parse_working_set_flag(const std::string& text);

// The results file a command writes (--json, or --resume's file), locked until the lock is
// dropped: BadInput naming `flag` when the path cannot be written or another iocpbench process
// writes it.
platform::FileLock lock_output_file(const std::string& path, const char* flag);

// Refuses (BadInput naming `flag`) to replace `path` when it already holds results points, or
// is something other than a results file: a measured sweep is hours of work, and `--json F`
// with a stale F in it is an easy slip. Nothing is created or truncated here. `remedy` ends the
// line: how to replace it anyway (--force) or keep it (--resume).
void refuse_replacing_results(const std::string& path, const char* flag, const std::string& remedy);

}  // namespace iocpbench::cli
