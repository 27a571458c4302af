// The `stall` pool controller: MariaDB's thread-pool stall rule. A tick every half stall limit
// reads how many workers have been inside one handler for longer than the limit; each such
// stalled worker lets one more thread in (target = min + stalled, up to max, min being N). When
// none is stalled the target is the minimum again and the extra threads leave on their next
// idle wait or after their next batch (the pool's shrink rule). MariaDB checks per thread group
// from a timer thread and wakes or creates one thread per group per tick; here the pool is one
// group and the target follows the count of stalled workers at each tick.

#include <algorithm>

#include "engine/pool_control.hpp"

namespace iocpbench::engine {
namespace {

class StallControl final : public PoolController {
 public:
  StallControl(const ControlBounds& b, unsigned limit_ms)
      : bounds_(b), limit_ms_(limit_ms), target_(b.min_threads) {}

  const char* name() const override { return "stall"; }

  unsigned target(const ControlSample& s) override {
    target_ = std::min(bounds_.max_threads, bounds_.min_threads + s.stalled_workers);
    return target_;
  }

  // Half the limit (at least 1 ms): a stall is seen at most half a limit after it begins.
  std::uint64_t next_interval_ns() override {
    return std::max<std::uint64_t>(1'000'000ull, limit_ms_ * 500'000ull);
  }
  double control_setting() const override { return target_; }
  std::uint64_t stall_limit_ns() const override { return limit_ms_ * 1'000'000ull; }

  std::vector<std::pair<std::string, double>> settings() const override {
    return {{"min_threads", bounds_.min_threads},
            {"max_threads", bounds_.max_threads},
            {"stall_limit_ms", limit_ms_}};
  }

 private:
  ControlBounds bounds_;
  unsigned limit_ms_;
  unsigned target_;
};

}  // namespace

std::unique_ptr<PoolController> make_stall_control(const ControlBounds& bounds,
                                                   unsigned stall_limit_ms) {
  return std::make_unique<StallControl>(bounds, stall_limit_ms);
}

std::unique_ptr<PoolController> make_pool_controller(const core::PoolSpec& spec,
                                                     unsigned logical_cpus, std::uint64_t seed) {
  if (!spec.controlled) return nullptr;
  const core::ControlledPoolSpec& c = *spec.controlled;
  const ControlBounds bounds{c.min.resolve(logical_cpus), c.max.resolve(logical_cpus),
                             logical_cpus};
  switch (c.kind) {
    case core::ControllerKind::hill: return make_hill_climb(bounds, c.hill, seed);
    case core::ControllerKind::formula: return make_formula_control(bounds, c.period_ms);
    case core::ControllerKind::stall: return make_stall_control(bounds, c.stall_limit_ms);
  }
  return nullptr;
}

}  // namespace iocpbench::engine
