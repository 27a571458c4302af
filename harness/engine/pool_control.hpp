#pragma once
// Pool controllers: the decision part of a pool sized by a control thread (the `hill`, `formula`
// and `stall` pool specs, core/pool_spec.hpp). The pool (engine/pool.cpp) samples itself every
// next_interval_ns(), hands the sample to target(), grows at once to the target and lets threads
// over it leave after their next batch or on a bounded wait timeout. A controller reads only the
// samples it is given (no clock, no threads), so the tests drive it with scripted measurements.
//
//   hill     the .NET thread pool's hill climber (engine/hill_climb.cpp)
//   formula  N_cpus / (1 - b measured)           (engine/formula_control.cpp)
//   stall    N + workers stalled in one handler  (engine/stall_control.cpp)

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/pool_spec.hpp"

namespace iocpbench::engine {

// What the pool measured at one tick. Totals are since the pool started; a controller takes
// differences between its own consecutive samples.
struct ControlSample {
  std::uint64_t t_ns = 0;
  std::uint64_t completions_total = 0;  // counted completions handled
  unsigned threads = 0;                 // in the pool now
  unsigned busy = 0;                    // of them, not waiting in the port
  std::uint64_t handler_cpu_ns_total = 0;      // the blocking handlers' CPU time
  std::uint64_t handler_blocked_ns_total = 0;  // and their blocked time
  unsigned stalled_workers = 0;  // inside one handler for longer than the stall limit
  std::optional<std::uint64_t> queued;  // packets in the port, where the port can tell
};

class PoolController {
 public:
  virtual ~PoolController() = default;
  virtual const char* name() const = 0;
  // The threads the pool should have from now on, in [min, max].
  virtual unsigned target(const ControlSample& sample) = 0;
  // How long until the next sample.
  virtual std::uint64_t next_interval_ns() = 0;
  // The settings as resolved on this machine, for runs[].pool_sizing.settings (units in names).
  virtual std::vector<std::pair<std::string, double>> settings() const = 0;
  // The setting the controller steers, before any wave it adds (hill); the last target for the
  // others. For the tests and the run's summary.
  virtual double control_setting() const = 0;
  // The stall limit the pool measures stalled_workers against (0: none needed).
  virtual std::uint64_t stall_limit_ns() const { return 0; }
};

// The bounds every controller keeps to (resolved on this machine).
struct ControlBounds {
  unsigned min_threads = 1;
  unsigned max_threads = 1;
  unsigned logical_cpus = 1;
};

// `seed`: the sample intervals' random lengths; `start_threads`: the setting it starts from
// (0: the minimum, where the pool starts).
std::unique_ptr<PoolController> make_hill_climb(const ControlBounds& bounds,
                                                const core::HillSettings& hill,
                                                std::uint64_t seed, unsigned start_threads = 0);
std::unique_ptr<PoolController> make_formula_control(const ControlBounds& bounds,
                                                     unsigned period_ms);
std::unique_ptr<PoolController> make_stall_control(const ControlBounds& bounds,
                                                   unsigned stall_limit_ms);
// The controller a pool spec names (nullptr for a fixed or auto pool).
std::unique_ptr<PoolController> make_pool_controller(const core::PoolSpec& spec,
                                                     unsigned logical_cpus, std::uint64_t seed);

}  // namespace iocpbench::engine
