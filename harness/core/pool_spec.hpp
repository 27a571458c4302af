#pragma once
// A pool spec: a fixed number of threads (a CountSpec: "4", "N", "2N+2") or the self-sizing pool
// of Richter's heuristic (harness/engine/pool.hpp):
//
//   auto[:MIN:MAX[:GROW_BELOW_PCT:SHRINK_ABOVE_PCT[:IDLE_MS]]]     defaults auto:N:4N:75:90:100
//
// The pool starts with MIN threads and never leaves [MIN, MAX]; a thread that finds every pool
// thread busy adds one while process CPU use is under GROW_BELOW_PCT; a thread that waits
// IDLE_MS for a packet, or finishes one while CPU use is over SHRINK_ABOVE_PCT, leaves (GROW above
// SHRINK is accepted: it makes the pool churn, which the tests use on purpose). The text
// is normalised with the defaults dropped from the right ("auto:N:4N" is "auto"), so equal
// settings name the same point on every machine, as a CountSpec does.

#include <optional>
#include <string>
#include <string_view>

#include "core/count_spec.hpp"

namespace iocpbench::core {

struct AutoPoolSpec {
  CountSpec min{"N", 1, 0};
  CountSpec max{"4N", 4, 0};
  double grow_below_cpu_pct = 75;
  double shrink_above_cpu_pct = 90;
  unsigned idle_timeout_ms = 100;
};

// The hill climber's constants (engine/hill_climb.hpp), the published defaults. They come from
// flags (--hill-*), not from the spec's text: one value each per invocation.
struct HillSettings {
  unsigned wave_period_samples = 4;
  double max_wave_magnitude = 20;  // threads
  unsigned history_samples = 8;
  unsigned sample_low_ms = 10, sample_high_ms = 200;
  double max_changes_per_s = 4;
  unsigned starvation_ms = 500;
};

// A pool sized by a controller thread (engine/pool_control.hpp):
//
//   hill[:MIN:MAX]                 defaults hill:N:4N      the .NET thread pool's hill climber
//   formula[:MIN:MAX[:PERIOD_MS]]  defaults formula:N:4N:500   N_cpus / (1 - b measured)
//   stall:LIMIT_MS:MAX             MIN is N                MariaDB's stall rule
//
// normalised as `auto` is (defaults dropped from the right).
enum class ControllerKind { hill, formula, stall };
const char* to_string(ControllerKind kind);

struct ControlledPoolSpec {
  ControllerKind kind = ControllerKind::hill;
  CountSpec min{"N", 1, 0};
  CountSpec max{"4N", 4, 0};
  unsigned period_ms = 500;     // formula: how often it recomputes
  unsigned stall_limit_ms = 0;  // stall: a worker in one handler longer than this is stalled
  HillSettings hill;            // hill only
};

struct PoolSpec {
  std::string text;                      // normalised: "2N+2", "auto", "auto:1:8:50:95"
  CountSpec fixed{"2N", 2, 0};           // the size of a fixed pool
  std::optional<AutoPoolSpec> autosize;  // set for "auto..."
  std::optional<ControlledPoolSpec> controlled;  // set for "hill...", "formula...", "stall..."

  PoolSpec() : text("2N") {}
  // A fixed pool of `count` threads (implicit: every CountSpec is a pool spec).
  PoolSpec(CountSpec count) : text(count.text), fixed(std::move(count)) {}  // NOLINT

  bool is_auto() const { return autosize.has_value(); }
  bool is_controlled() const { return controlled.has_value(); }
  // Its size moves while it runs (auto or a controller).
  bool self_sizing() const { return is_auto() || is_controlled(); }
  // Threads on a machine with `logical_cpus` CPUs: a fixed pool's size, an auto or controlled
  // pool's maximum.
  unsigned resolve(unsigned logical_cpus) const;
  // An auto or controlled pool's minimum (its starting size); a fixed pool's size.
  unsigned resolve_min(unsigned logical_cpus) const;
};

// Parses "auto...", a controller ("hill...", "formula...", "stall...") or a count spec. Returns the reason (naming the part) on failure.
std::optional<PoolSpec> parse_pool_spec(std::string_view text, std::string* reason);

// Only "hill...", "formula..." and "stall..."; nullopt without a reason for any other name.
std::optional<PoolSpec> parse_controlled_pool_spec(std::string_view text, std::string* reason);

}  // namespace iocpbench::core
