#pragma once
// The hill climber's flags (run, sweep): --hill-wave-period, --hill-wave-magnitude,
// --hill-history, --hill-sample-ms, --hill-max-changes-per-s, --hill-starvation-ms. One value
// each, the published defaults when absent (core/pool_spec.hpp HillSettings); they apply to the
// `hill` pool specs of the invocation.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/pool_spec.hpp"

namespace iocpbench::cli {

struct HillFlags {
  std::string wave_period, wave_magnitude, history, sample_ms, max_changes_per_s, starvation_ms;
  bool any_given() const;
};

void add_hill_flags(CLI::App& command, HillFlags& flags);

// The settings the flags give (BadInput naming the flag on a value out of range).
core::HillSettings hill_settings_from_flags(const HillFlags& flags);

// Sets the hill settings of every hill spec among `pools`; BadInput naming the first given flag
// when none of them is a hill pool (the flags would change nothing).
void apply_hill_flags(const HillFlags& flags, std::vector<core::PoolSpec>& pools);

}  // namespace iocpbench::cli
