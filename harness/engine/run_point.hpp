#pragma once
// One run of one point: the library API behind `iocpbench run`, reused by `sweep` and `tune`.
//
//   PointSpec spec = ...;                  // workload + typed params, port, C, S, b, kind, work, time
//   validate_point(spec);                  // throws BadInput{flag, reason}; cheap
//   RunResult r = run_point(spec, &stop);  // builds port + pool + workload, runs, tears down
//
// A run's result is typed (engine/run_result.hpp); the results file's form of it (points[].runs[], the point around
// them) is results/'s: results::run_record(r), results::point_result(spec, runs).

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/blocking_profile.hpp"
#include "core/count_spec.hpp"
#include "core/kinds.hpp"
#include "core/pool_spec.hpp"
#include "engine/affinity.hpp"
#include "engine/open_loop.hpp"
#include "engine/run_result.hpp"
#include "engine/workload_params.hpp"
#include "port/completion_port.hpp"

namespace iocpbench::workloads {
class Workload;
}

namespace iocpbench::engine {

// A point's run length when none is given: `run`'s and the sweep grid's (sweep/grid.hpp; the
// tuner's shorter runs are its own, tune/recommend.hpp). 0.7 s holds thousands of completions
// at the default grid's slowest point on 2 CPUs; the warm-up covers the pool's start and the
// first page faults.
inline constexpr double kPointDurationS = 0.7;
inline constexpr double kPointWarmupS = 0.15;

struct PointSpec {
  WorkloadKind workload = WorkloadKind::post;
  // Parsed and checked at the edge (workloads::parse_workload_params), for `workload`.
  workloads::WorkloadParams workload_params;
  port::Backend port = port::default_backend();
  core::CountSpec concurrency{"0", 0, 0};  // "0" = the port default (logical CPUs)
  unsigned concurrency_value = 0;           // concurrency.resolve(N); 0 = port default
  // A fixed pool, or "auto": Richter's self-sizing pool (core/pool_spec.hpp).
  core::PoolSpec pool{core::CountSpec{"2N", 2, 0}};
  unsigned pool_value = 0;  // pool.resolve(N), at least 1 (an auto pool: its maximum)
  double blocking_ratio = 0;            // b in [0, 1)
  // --blocking-profile: the ratio changes over the run (blocking_ratio is then unused; the
  // handlers follow the ratio in force, and the run is judged against the window's mean).
  std::optional<core::BlockingProfile> blocking_profile;
  // runs[].timeline's window (10..10000 ms), for a controlled pool or a blocking profile.
  unsigned timeline_ms = 250;
  BlockingKind blocking_kind = BlockingKind::sleep;
  double work_us = 0;
  std::uint32_t working_set_kib = 0;  // per worker, touched on every packet (engine/working_set.hpp)
  double duration_s = kPointDurationS;
  double warmup_s = kPointWarmupS;
  // shared: one port for the pool. per-thread: DiskSpd's model, each worker its own port with
  // concurrency 1 (the concurrency axis does not apply; its spec is recorded as "1").
  Dispatch dispatch = Dispatch::shared;
  // Packets per remove (engine/dequeue_batch.hpp): 1 is one GetQueuedCompletionStatus per
  // packet; above it GetQueuedCompletionStatusEx, up to b packets on one concurrency slot.
  core::CountSpec dequeue_batch{"1", 0, 1};
  unsigned dequeue_batch_value = 1;  // dequeue_batch.resolve(N)
  // File and socket: whether their handles ask for FILE_SKIP_COMPLETION_PORT_ON_SUCCESS
  // (Windows; Linux refuses on). by_default: socket on where granted, file off.
  SkipOnSuccess skip_on_success = SkipOnSuccess::by_default;
  // Where the workers (--affinity) and the load generator's threads (--load-affinity) run
  // (engine/affinity.hpp); none: no affinity call, the OS decides.
  platform::PlacementSpec affinity;
  platform::PlacementSpec load_affinity;
  // false: no per-completion clock reads or histograms (P6: what the metrics cost).
  bool metrics = true;
  // Open-loop arrivals at a rate, or at a share of the point's capacity measured first in a
  // short closed-loop run (engine/open_loop.hpp); unset: the closed loop.
  OpenLoopSpec open_loop;
  // The watchdog's stall limit in seconds (harness/engine/watchdog.hpp); 0: max(5 s, 10 x the
  // expected service time of one completion).
  double watchdog_s = 0;
  // Test seam (tests/engine/): wraps the workload run_point builds, e.g. to inject a
  // stall. Empty in the program.
  std::function<std::unique_ptr<workloads::Workload>(std::unique_ptr<workloads::Workload>)>
      wrap_workload;
};

// Checks every field; throws BadInput naming the flag (--workload, --pool, --blocking, ...).
void validate_point(const PointSpec& spec);

// One run. `stop_requested` (may be null) ends the warm-up or the window early; the result is
// then marked interrupted. A run that stops making progress is ended by the watchdog, which
// throws std::runtime_error("watchdog: no completion for ...") naming the stuck part. Throws
// BadInput for values the machine refuses (e.g. O_DIRECT on a file system without it),
// std::runtime_error when the run cannot be set up.
RunResult run_point(const PointSpec& spec, const std::atomic<bool>* stop_requested,
                    unsigned repetition = 0);

}  // namespace iocpbench::engine
