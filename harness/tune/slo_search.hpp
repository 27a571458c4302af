#pragma once
// The latency tuner's search (docs/tuning.md, "Tuning for a latency target"): the coarse grid
// (concurrency 1, N, 2N x pool N, 2N, 2N+2, 4N) under open-loop arrivals, in interleaved rounds
// (every setting once per round, in a fresh random order, so drift falls on all alike), judged
// by tune/slo's rule.
//   - at a rate (--rate R, or --load F of each setting's own capacity): `rounds` rounds of every
//     setting; the recommendation is choose_slo's;
//   - --max-rate: each setting's closed-loop capacity (kCapacityRounds rounds), then
//     kMaxRateSteps bisection steps of `rounds` rounds each, every setting at its own next rate;
//     a setting carries the highest rate shown under the limit, and the recommendation is the
//     setting that carries the most (ties: the smaller pool, then concurrency).

#include <optional>
#include <string>
#include <vector>

#include "engine/run_point.hpp"
#include "sweep/grid.hpp"
#include "tune/search.hpp"
#include "tune/slo.hpp"

namespace iocpbench::tune {

struct SloSettings {
  sweep::Grid grid;  // workload, port, dispatch, blocking ratio, run lengths, seed
  unsigned logical_cpus = 1;
  Slo slo;
  engine::OpenLoopSpec open_loop;  // the rate or load (not with max_rate), arrivals, seed, bound
  bool max_rate = false;
  unsigned rounds = kDefaultSloRounds;
};

// One setting's runs at one offered rate (or load), or its closed-loop capacity runs.
struct SloTrial {
  engine::PointSpec spec;
  std::string id;
  RunList runs;
  SloCandidate candidate() const;  // its runs as the rule reads them (Slo from the settings)
  SloPercentile percentile = SloPercentile::kP99;
};

// One (concurrency, pool) setting.
struct SloSetting {
  engine::PointSpec base;  // closed loop
  std::string id;
  std::optional<SloTrial> capacity;  // --max-rate: the closed-loop runs
  double capacity_ops_per_s = 0;     // their median (requests: the socket's round trips)
  RateBracket bracket;               // --max-rate
  std::vector<SloTrial> steps;       // at a rate: one; --max-rate: one per bisection step
  double carried_ops_per_s() const { return bracket.lo_ops_per_s; }
};

struct SloOutcome {
  SloSettings settings;
  std::vector<SloSetting> tried;
  // At a rate: choose_slo over the settings' only trial. --max-rate: empty bounds, and
  // `recommended` the setting that carries the most.
  SloChoice choice;
  std::optional<std::size_t> recommended;
  bool interrupted = false;
};

SloOutcome slo_search(const SloSettings& settings, Runner& runner);

// A request's count per second for a run: the socket workload's throughput counts the server's
// receives, its requests are the generator's round trips.
double requests_per_s(const engine::RunResult& run);

}  // namespace iocpbench::tune
