#include "tune/slo_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/open_loop.hpp"
#include "stats/statistics.hpp"
#include "sweep/schedule.hpp"
#include "sweep/sweep_runner.hpp"

namespace iocpbench::tune {
namespace {

// The coarse grid's distinct (concurrency, pool) values on this machine, closed loop.
std::vector<SloSetting> coarse_settings(const SloSettings& s) {
  sweep::Grid grid = s.grid;
  grid.concurrency = {spec_of("1"), spec_of("N"), spec_of("2N")};
  grid.pool = {spec_of("N"), spec_of("2N"), spec_of("2N+2"), spec_of("4N")};
  grid.loads.clear();
  grid.rates.clear();
  sweep::validate_grid(grid);
  std::vector<SloSetting> out;
  for (auto& spec : sweep::expand(grid, s.logical_cpus)) {
    const unsigned c = concurrency_of(spec, s.logical_cpus);
    const bool seen = std::any_of(out.begin(), out.end(), [&](const SloSetting& t) {
      return concurrency_of(t.base, s.logical_cpus) == c && t.base.pool_value == spec.pool_value;
    });
    if (seen) continue;
    SloSetting setting;
    setting.id = sweep::point_id(spec);
    setting.base = std::move(spec);
    out.push_back(std::move(setting));
  }
  return out;
}

SloTrial trial_at(const SloSetting& setting, const engine::OpenLoopSpec& open_loop, SloPercentile p) {
  SloTrial t;
  t.spec = setting.base;
  t.spec.open_loop = open_loop;
  t.id = sweep::point_id(t.spec);
  t.percentile = p;
  return t;
}

// `rounds` interleaved rounds over `trials` (every one once per round, a fresh order each).
// false: interrupted (the run in progress is dropped, nothing more is measured).
bool measure(std::vector<SloTrial*> trials, unsigned rounds, unsigned& next_repetition, sweep::RoundOrder& order,
             Runner& runner, const std::string& phase) {
  std::vector<std::size_t> which(trials.size());
  for (std::size_t i = 0; i < which.size(); ++i) which[i] = i;
  runner.batch_begins(trials.size() * rounds);
  bool complete = true;
  for (const sweep::RunSlot& slot : order.rounds(which, rounds, next_repetition)) {
    SloTrial& t = *trials[slot.point];
    auto result = runner.run_once(t.spec, slot.repetition, t.id + " " + phase + " " +
                                                               std::to_string(slot.repetition - next_repetition));
    if (!result) {
      complete = false;
      break;
    }
    t.runs.push_back(std::move(*result));
  }
  runner.batch_ends();
  next_repetition += rounds;
  return complete;
}

void run_at_rate(SloOutcome& out, Runner& runner, sweep::RoundOrder& order) {
  const SloSettings& s = out.settings;
  std::vector<SloTrial*> trials;
  for (SloSetting& setting : out.tried) {
    setting.steps.push_back(trial_at(setting, s.open_loop, s.slo.percentile));
    trials.push_back(&setting.steps.back());
  }
  unsigned repetition = 0;
  out.interrupted = !measure(trials, s.rounds, repetition, order, runner, "slo");
  std::vector<SloCandidate> candidates;
  for (const SloSetting& setting : out.tried) candidates.push_back(setting.steps.front().candidate());
  out.choice = choose_slo(candidates, s.slo);
  out.recommended = out.choice.recommended;
}

void run_max_rate(SloOutcome& out, Runner& runner, sweep::RoundOrder& order) {
  const SloSettings& s = out.settings;
  unsigned repetition = 0;
  std::vector<SloTrial*> capacity;
  for (SloSetting& setting : out.tried) {
    setting.capacity = trial_at(setting, engine::OpenLoopSpec{}, s.slo.percentile);
    capacity.push_back(&*setting.capacity);
  }
  if (!measure(capacity, kCapacityRounds, repetition, order, runner, "capacity")) {
    out.interrupted = true;
    return;
  }
  for (SloSetting& setting : out.tried) {
    std::vector<double> rates;
    for (const auto& r : setting.capacity->runs) rates.push_back(requests_per_s(r));
    setting.capacity_ops_per_s = stats::summarize(rates).median;
    setting.bracket = {0, setting.capacity_ops_per_s};
  }
  for (unsigned step = 0; step < kMaxRateSteps && !out.interrupted; ++step) {
    std::vector<SloTrial*> trials;
    for (SloSetting& setting : out.tried) {
      const double rate = setting.bracket.next();
      if (rate < engine::kMinRatePerS || setting.capacity->candidate().excluded) continue;
      engine::OpenLoopSpec open_loop = s.open_loop;
      open_loop.load = 0;
      open_loop.rate_ops_per_s = std::round(rate);
      setting.steps.push_back(trial_at(setting, open_loop, s.slo.percentile));
      trials.push_back(&setting.steps.back());
    }
    if (trials.empty()) break;
    out.interrupted = !measure(trials, s.rounds, repetition, order, runner, "step " + std::to_string(step + 1));
    for (SloSetting& setting : out.tried) {
      if (setting.steps.size() != step + 1) continue;  // left out of this step
      const SloTrial& t = setting.steps.back();
      const SloCandidate c = t.candidate();
      const bool shown = !c.excluded && shown_under(median_upper_bound(c.percentile_us), s.slo);
      if (!out.interrupted) setting.bracket.record(t.spec.open_loop.rate_ops_per_s, shown);
    }
  }
  // The most carried; ties: the smaller pool, then concurrency (coarse_settings' order is by
  // concurrency, then pool, so compare explicitly).
  for (std::size_t i = 0; i < out.tried.size(); ++i) {
    const SloSetting& t = out.tried[i];
    if (!(t.carried_ops_per_s() > 0)) continue;
    if (!out.recommended) {
      out.recommended = i;
      continue;
    }
    const SloSetting& best = out.tried[*out.recommended];
    const bool more = t.carried_ops_per_s() > best.carried_ops_per_s();
    const bool smaller = t.base.pool_value != best.base.pool_value
                             ? t.base.pool_value < best.base.pool_value
                             : concurrency_of(t.base, s.logical_cpus) < concurrency_of(best.base, s.logical_cpus);
    if (more || (t.carried_ops_per_s() == best.carried_ops_per_s() && smaller)) out.recommended = i;
  }
}

}  // namespace

double requests_per_s(const engine::RunResult& run) {
  if (run.workload_stats.is_object()) return run.workload_stats.value("round_trips_per_s", run.throughput_ops_per_s);
  return run.throughput_ops_per_s;
}

SloCandidate SloTrial::candidate() const {
  SloCandidate c;
  c.concurrency_value = spec.concurrency_value;
  c.pool_value = spec.pool_value;
  constexpr double kNothingShown = std::numeric_limits<double>::infinity();
  for (const auto& r : runs) {
    const bool over = r.open_loop && r.open_loop->over_capacity();
    const bool lagged = r.open_loop && r.open_loop->generator_bound();
    const bool busy = r.machine_load.busy;
    if (over) ++c.over_capacity_runs;
    if (lagged) ++c.generator_bound_runs;
    if (busy) ++c.busy_runs;
    if (r.errors > 0 && !c.excluded) c.excluded = "a run had errors";
    // A run that did not carry the rate (its backlog grew through its window), or whose
    // percentile is only a lower bound (an unfinished request may hold its rank), shows nothing
    // under the limit: it counts as over any limit.
    const double value = percentile_us(r.latency, percentile);
    const bool bound_only = r.open_loop && lower_bound_at(r.open_loop->response_lower_bound, percentile);
    c.percentile_us.push_back(over || bound_only ? kNothingShown : value);
    // The best it could have shown undisturbed: a generator-bound run its service time's
    // percentile (no request's service time exceeds its response time less its lag), a busy
    // run its handler's own CPU time (no response is shorter).
    double best = c.percentile_us.back();
    if (lagged) best = std::min(best, percentile_us(r.open_loop->service_time, percentile));
    if (busy) best = std::min(value, spec.work_us);
    c.best_case_us.push_back(best);
  }
  if (!c.excluded) c.excluded = exclusion_reason(spec, runs);
  return c;
}

SloOutcome slo_search(const SloSettings& settings, Runner& runner) {
  SloOutcome out;
  out.settings = settings;
  out.tried = coarse_settings(settings);
  sweep::RoundOrder order(settings.grid.seed);
  if (settings.max_rate) {
    run_max_rate(out, runner, order);
  } else {
    run_at_rate(out, runner, order);
  }
  return out;
}

}  // namespace iocpbench::tune
