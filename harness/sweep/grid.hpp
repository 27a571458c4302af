#pragma once
// What a sweep runs: the grid as specs (kept N-relative, so machines with different N line up),
// its expansion into points on this machine, and the grid's JSON form (the results' `sweep`
// block and the `--grid FILE` input).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/arrivals.hpp"
#include "core/blocking_profile.hpp"
#include "core/kinds.hpp"
#include "port/completion_port.hpp"
#include "engine/run_point.hpp"
#include "core/count_spec.hpp"
#include "core/pool_spec.hpp"

namespace iocpbench::sweep {

struct Grid {
  std::vector<WorkloadKind> workloads{WorkloadKind::post, WorkloadKind::file, WorkloadKind::socket};
  std::vector<port::Backend> ports{port::default_backend()};
  // Dispatch models: shared (one port) and/or per-thread (each worker its own port, C = 1; the
  // concurrency axis collapses to "1" for it).
  std::vector<Dispatch> dispatch{Dispatch::shared};
  std::vector<core::CountSpec> concurrency;  // default 0, N, 2N
  std::vector<core::PoolSpec> pool;          // default N, 2N, 2N+2; "auto..." a self-sizing pool
  std::vector<double> blocking{0, 0.25, 0.5, 0.75};
  // --blocking-profile: one profile instead of the blocking axis (each point's b is its mean over
  // the window). Absent, the default, leaves the ids and the sweep block as they were.
  std::optional<core::BlockingProfile> blocking_profile;
  unsigned timeline_ms = 250;  // runs[].timeline's window (--timeline-ms)
  // Packets per remove (engine/dequeue_batch.hpp); the default, 1 alone, is the pool's
  // one-packet path and leaves the point ids and the sweep block as they were.
  std::vector<core::CountSpec> dequeue_batch{core::CountSpec{"1", 0, 1}};
  // --skip-on-success, one value for the whole grid: its file and socket points take it, its
  // post points keep the default. The default leaves the ids and the sweep block as they were.
  SkipOnSuccess skip_on_success = SkipOnSuccess::by_default;
  // Where the workers and the load generator's threads run (engine/affinity.hpp): one placement
  // each for the whole grid, not an axis. none, the default, leaves the ids and the sweep
  // block as they were.
  platform::PlacementSpec affinity;
  platform::PlacementSpec load_affinity;
  // Open-loop offered loads (fractions of each point's closed-loop capacity) or rates
  // (completions/s); both empty: the closed loop only (the default).
  std::vector<double> loads;
  std::vector<double> rates;
  core::ArrivalProcess arrivals = core::kDefaultArrivals;
  unsigned max_in_flight = 0;  // 0: each workload's own bound
  bool realtime_pacer = true;  // --pacer-priority realtime (engine/open_loop.hpp)
  BlockingKind blocking_kind = BlockingKind::sleep;
  std::uint32_t working_set_kib = 0;  // per worker thread, touched on every packet
  double work_us = 100;  // the smallest block of the default grid (b = 0.25: 33 us) a sleep can honour on a 2-CPU VM
  nlohmann::json workload_params = nlohmann::json::object();  // shared by the workloads
  unsigned repetitions = 5;
  double duration_s = engine::kPointDurationS;
  double warmup_s = engine::kPointWarmupS;
  std::uint64_t seed = 1;
  double target_ci_pct = 0;        // 0 = off; else add repetitions until CI half-width < pct
  unsigned max_repetitions = 15;   // the cap for --target-ci
};

Grid default_grid();
// A small grid of short runs for a first look: under a minute on 2 CPUs.
Grid quick_grid();

// Comma-separated lists; throw BadInput naming `flag`.
std::vector<core::CountSpec> parse_count_list(const std::string& text, bool allow_zero,
                                        const std::string& flag);
// Pool specs: counts and "auto[:MIN:MAX[:GROW_PCT:SHRINK_PCT[:IDLE_MS]]]".
std::vector<core::PoolSpec> parse_pool_list(const std::string& text, const std::string& flag);
// --skip-on-success: on, off or default (BadInput naming `flag` otherwise).
SkipOnSuccess parse_skip_on_success_flag(const std::string& text, const std::string& flag);
// --dequeue-batch: counts from 1 to engine::kMaxDequeueBatch, or N-relative (checked against
// the maximum on this machine by engine::validate_point).
std::vector<core::CountSpec> parse_dequeue_batch_list(const std::string& text, const std::string& flag);
// A placement's spec as a --grid or --resume file gives it (none, compact, spread or a CPU
// list; checked against this machine by engine::validate_point).
platform::PlacementSpec parse_placement_text(const std::string& text, const std::string& flag);
std::vector<double> parse_ratio_list(const std::string& text, const std::string& flag);
// --load: fractions in (0, 1]; --rate: positive numbers (completions per second).
std::vector<double> parse_load_list(const std::string& text, const std::string& flag);
std::vector<double> parse_rate_list(const std::string& text, const std::string& flag);
// --pacer-priority: realtime (true) | normal (false).
bool parse_pacer_priority(const std::string& text, const std::string& flag);
std::vector<WorkloadKind> parse_workload_list(const std::string& text, const std::string& flag);
std::vector<port::Backend> parse_port_list(const std::string& text, const std::string& flag);
std::vector<Dispatch> parse_dispatch_list(const std::string& text, const std::string& flag);
// One blocking kind: sleep | io.
BlockingKind parse_blocking_kind_flag(const std::string& text, const std::string& flag);

// Every point of the grid on a machine with `logical_cpus` CPUs, in a stable order.
std::vector<engine::PointSpec> expand(const Grid& grid, unsigned logical_cpus);

// The identity of a point across machines: workload, port, specs, ratio, kind, work (and the
// dispatch, working set, dequeue batch, placements, completion path and open loop where not
// the default).
std::string point_id(const engine::PointSpec& point);
// The id's last part, its completion path: "/cp=PATH" for a file or socket point whose
// workload_params name a path other than the default, else empty (the default's ids stay short;
// post ids never name one). point_id ends with it, and --resume rewrites an older file's ids
// with it (completion_path_compat.hpp).
std::string completion_path_id_suffix(WorkloadKind workload,
                                      const nlohmann::json& workload_params);
// The same for a point's typed parameters.
std::string completion_path_id_suffix(const workloads::WorkloadParams& params);

// The grid part of the results' `sweep` block (what --resume compares).
nlohmann::json grid_to_json(const Grid& grid);
// A grid from a `--grid FILE` document or a results file's `sweep` block; throws BadInput{flag}.
Grid grid_from_json(const nlohmann::json& json, const std::string& flag);

}  // namespace iocpbench::sweep
