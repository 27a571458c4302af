// The `formula` pool controller: every period, target = round(N_cpus / (1 - b)) clamped to
// [min, max], where b = blocked / (cpu + blocked) of the handlers over the period, from the
// run's own measured handler CPU and blocked times (engine/block_control's split, summed by the
// pool). This is Goetz's sizing rule N_threads = N_cpus x U x (1 + W/C) with target utilisation
// U = 1: W/C = b/(1-b), so 1 + W/C = 1/(1-b), the same number. A period with no handler time
// measured (no blocking handlers ran, or none finished) keeps the last target.

#include <algorithm>
#include <cmath>

#include "engine/pool_control.hpp"

namespace iocpbench::engine {
namespace {

class FormulaControl final : public PoolController {
 public:
  FormulaControl(const ControlBounds& b, unsigned period_ms)
      : bounds_(b), period_ms_(period_ms), target_(b.min_threads) {}

  const char* name() const override { return "formula"; }

  unsigned target(const ControlSample& s) override {
    if (have_last_) {
      const double cpu = static_cast<double>(s.handler_cpu_ns_total - last_.handler_cpu_ns_total);
      const double blocked =
          static_cast<double>(s.handler_blocked_ns_total - last_.handler_blocked_ns_total);
      if (cpu + blocked > 0 && cpu > 0) {
        const double b = blocked / (cpu + blocked);
        const double want = std::round(static_cast<double>(bounds_.logical_cpus) / (1 - b));
        target_ = static_cast<unsigned>(std::clamp(want, static_cast<double>(bounds_.min_threads),
                                                   static_cast<double>(bounds_.max_threads)));
      }
    }
    last_ = s;
    have_last_ = true;
    return target_;
  }

  std::uint64_t next_interval_ns() override { return period_ms_ * 1'000'000ull; }
  double control_setting() const override { return target_; }

  std::vector<std::pair<std::string, double>> settings() const override {
    return {{"min_threads", bounds_.min_threads},
            {"max_threads", bounds_.max_threads},
            {"logical_cpus", bounds_.logical_cpus},
            {"period_ms", period_ms_}};
  }

 private:
  ControlBounds bounds_;
  unsigned period_ms_;
  unsigned target_;
  ControlSample last_;
  bool have_last_ = false;
};

}  // namespace

std::unique_ptr<PoolController> make_formula_control(const ControlBounds& bounds,
                                                     unsigned period_ms) {
  return std::make_unique<FormulaControl>(bounds, period_ms);
}

}  // namespace iocpbench::engine
