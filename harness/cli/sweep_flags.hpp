#pragma once
// The grid flags shared by `sweep` and `tune`, kept as the user's text so that every bad value is
// reported with its flag, and so --resume can tell which flags were given.

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "sweep/grid.hpp"
#include "cli/controller_flags.hpp"
#include "cli/profile_flags.hpp"
#include "cli/workload_flags.hpp"
#include "platform/file_lock.hpp"

namespace iocpbench::cli {

struct SweepFlags {
  std::string workload, port, concurrency, pool, blocking, blocking_kind, work_us, duration,
      warmup, repetitions, seed, json, grid_file, target_ci, max_repetitions, dispatch,
      working_set_kib, load, rate, arrivals, max_in_flight, dequeue_batch, skip_on_success,
      affinity, load_affinity;
  WorkloadFlags workload_flags;
  HillFlags hill;  // sweep only
  ProfileFlags profile;  // sweep only
  std::vector<CLI::Option*> grid_options;  // to tell whether any was given

  bool any_grid_flag_given() const;
};

void add_sweep_flags(CLI::App& command, SweepFlags& flags, bool for_tune);

// The grid: --quick or the defaults, then --grid FILE, then each flag given. Throws BadInput.
// record_path: the completion path spelled out (the default when neither --completion-path nor
// the --grid file names one), as a results file records it; false leaves it as given (--resume
// then takes the file's).
sweep::Grid grid_from_flags(const SweepFlags& flags, bool quick, bool record_path = true);

// Numbers from flags, with the flag named on failure.
double parse_number_flag(const std::string& text, const std::string& flag);
unsigned parse_count_flag(const std::string& text, const std::string& flag, unsigned minimum);
// A duration (`0.3s`, `500ms`, `2m`, or a plain number of the flag's own unit) in units of
// `base_s` seconds; a size (`4k`, `64MiB`, or a plain number of the flag's unit) in units of
// `base_bytes` (core/units.hpp). BadInput naming the flag otherwise.
double parse_duration_flag(const std::string& text, const std::string& flag, double base_s);
std::uint64_t parse_size_flag(const std::string& text, const std::string& flag, std::uint64_t base_bytes);

// --arrivals and --max-in-flight (run, sweep): the open loop's process and in-flight bound.
inline constexpr const char* kArrivalsHelp =
    "open-loop arrival process: poisson (exponential gaps, seeded by --seed) or constant";
inline constexpr const char* kMaxInFlightHelp =
    "open loop: requests in flight at most (0: the workload's own: post --in-flight, file "
    "--outstanding, socket --connections x --messages-in-flight); arrivals beyond it wait, keep "
    "their intended time and mark the run over capacity";
core::ArrivalProcess parse_arrivals_flag(const std::string& text);

// --working-set-kib (run, sweep, tune): KiB per worker thread, 0 to 1 GiB.
inline constexpr const char* kWorkingSetHelp =
    "KiB (or a size: 64k, 2MiB) of each worker thread's own buffer, one write per 64-byte line "
    "on every packet (so a port's wake-up order shows in the caches; 0: none)";
std::uint32_t parse_working_set_flag(const std::string& text);

// --skip-on-success (run, sweep, tune): one value per invocation.
inline constexpr const char* kSkipOnSuccessHelp =
    "file, socket, Windows: on | off: whether the I/O handles ask for "
    "FILE_SKIP_COMPLETION_PORT_ON_SUCCESS, so an I/O that succeeds at once queues no packet and "
    "its issuing worker handles it (default: socket on where granted, file off; Linux: every "
    "completion is a packet, on is refused)";

// --dequeue-batch (run, sweep): packets per remove.
inline constexpr const char* kDequeueBatchHelp =
    "packets each worker takes per remove, 1 to 1024 or N-relative (N, 2N): above 1 one "
    "GetQueuedCompletionStatusEx takes up to that many on one concurrency slot (C then limits "
    "threads, not packets) and the thread handles them in order, so each waits behind the ones "
    "before it (counted in its queue delay and latency); 1: one packet per remove";

// --affinity and --load-affinity (run, sweep, tune): where the pool's workers and the load
// generator's threads run.
inline constexpr const char* kAffinityHelp =
    "pin each worker thread to one CPU: none (the OS places them; no affinity call), compact "
    "(worker i on the i-th CPU filling a core's SMT siblings, then the socket, then the next "
    "socket), spread (one thread of every core, sockets alternating, before any second "
    "sibling), or a CPU list such as 0,2-3 (round-robin over it); the CPUs read back are "
    "recorded in points[].affinity";
inline constexpr const char* kLoadAffinityHelp =
    "pin the load generator's threads (posters, the socket workload's client thread, the open "
    "loop's pacer) the same way: none, compact, spread or a CPU list";

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
