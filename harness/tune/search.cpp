#include "tune/search.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "stats/statistics.hpp"
#include "sweep/sweep_runner.hpp"

namespace iocpbench::tune {

sweep::Grid tune_grid() {
  sweep::Grid grid = sweep::default_grid();
  grid.duration_s = kDefaultDurationS;
  grid.warmup_s = kDefaultWarmupS;
  grid.repetitions = kDefaultFinalRounds;
  return grid;
}

core::CountSpec spec_of(const std::string& text) { return *core::parse_count_spec(text, true, nullptr); }

unsigned concurrency_of(const engine::PointSpec& spec, unsigned n) {
  return spec.concurrency_value == 0 ? n : spec.concurrency_value;
}

namespace {

std::vector<std::size_t> indices(std::size_t from, std::size_t to) {
  std::vector<std::size_t> out(to - from);
  std::iota(out.begin(), out.end(), from);
  return out;
}

// Phase 2's settings: the neighbours of `base` (pool +-1, +-2; concurrency +-1, not for
// per-thread dispatch, whose concurrency is always 1 per port). `base` by value: adding trials
// moves the session's.
void add_neighbours(Session& session, engine::PointSpec base) {
  const unsigned base_concurrency = concurrency_of(base, session.logical_cpus());
  for (const int dp : {-2, -1, 1, 2}) {
    const long p = static_cast<long>(base.pool_value) + dp;
    if (p < 1) continue;
    engine::PointSpec spec = base;
    spec.pool = spec_of(std::to_string(p));
    spec.pool_value = static_cast<unsigned>(p);
    session.add_trial(spec);
  }
  for (const int dc : {-1, 1}) {
    const long c = static_cast<long>(base_concurrency) + dc;
    if (c < 1 || base.dispatch == Dispatch::per_thread) continue;
    engine::PointSpec spec = base;
    spec.concurrency = spec_of(std::to_string(c));
    spec.concurrency_value = static_cast<unsigned>(c);
    session.add_trial(spec);
  }
}

// A stage's first rounds that choose its best (the rest are judged): half of --repetitions, with
// at least kMinFinalRounds judged at the first look; none when --repetitions leaves no more (the
// best is then chosen on the judged rounds, and the output's ratios read a little low).
unsigned selection_rounds_for(unsigned final_rounds) {
  const unsigned judged = std::max(kMinFinalRounds, (final_rounds + 1) / 2);
  return final_rounds > judged ? final_rounds - judged : 0;
}

// The judgement at each look of a stage: the bounds of every look at kErrorRate / looks, so that
// the chance of a wrong decision at any of them is at most kErrorRate (Bonferroni).
Judgement stage_judgement(const Settings& s, unsigned selection, std::size_t looks) {
  Judgement j;
  j.threshold_pct = s.threshold_pct;
  j.zone_pct = s.zone_pct;
  j.selection_rounds = selection;
  j.look_alpha = kErrorRate / static_cast<double>(std::max<std::size_t>(1, looks));
  return j;
}

// The selection rounds' best and paired spread: they size the first look, before any judged round.
double selection_spread(const std::vector<Candidate>& selected, double threshold_pct) {
  const Choice first = recommend(selected, threshold_pct);
  return first.found ? paired_log_sd(selected, first.best) : 0;
}

// One stage: its selection rounds choose the best and size the first look (enough judged rounds
// that a setting twice the threshold worse is shown worse, final_rounds_for; the first half of
// --repetitions measures the spread, and more selection rounds follow when it is large); then the judged
// rounds, looked at after that many, twice as many, ... up to max_final_rounds, until the first
// finalist in the fixed order not shown worse is decided. At the last look an undecided one is
// decided by its estimate (the zone's middle). Sets the stage's numbers in `out`.
void measure_stage(Session& session, const std::vector<std::size_t>& finalist_trials, unsigned& next_repetition,
                   FinalStages& out) {
  const Settings& s = session.settings();
  auto final_candidates = [&] {
    std::vector<Candidate> candidates;
    for (std::size_t i : finalist_trials) candidates.push_back(session.candidate(i, Phase::kFinal));
    return candidates;
  };
  auto measure = [&](unsigned rounds) {
    if (!session.interrupted() && rounds > 0) session.measure(finalist_trials, rounds, next_repetition, Phase::kFinal);
    next_repetition += rounds;
  };
  for (std::size_t i : finalist_trials) session.clear_final(i);
  out.rounds_to_decide = 0;
  const unsigned pilot = selection_rounds_for(s.final_rounds);
  measure(pilot);
  out.paired_sd = pilot >= 2 ? selection_spread(final_candidates(), s.threshold_pct) : 0;
  const unsigned judged_min = s.final_rounds - pilot;
  const unsigned wanted = final_rounds_for(out.paired_sd, s.threshold_pct, judged_min, 1000000);
  // On a noisy machine the pilot's best may be a setting truly 10% below another: a quarter of
  // the judged rounds' number of selection rounds keeps that rare (a median of n runs spreads
  // about 1.25 sd / sqrt(n)), and costs nothing on a quiet machine.
  const unsigned selection = std::min(std::max(pilot, (wanted + 3) / 4), s.max_final_rounds - judged_min);
  measure(selection - pilot);
  out.selection_rounds = selection;
  const unsigned most = s.max_final_rounds - selection;
  const unsigned first = std::min(wanted, most);
  out.rounds_capped = wanted > most;
  const std::vector<unsigned> looks = look_schedule(first, most);
  Judgement j = stage_judgement(s, selection, looks.size());
  out.looks_planned = static_cast<unsigned>(looks.size());
  out.look_alpha = j.look_alpha;
  unsigned judged = 0;
  for (std::size_t k = 0; k < looks.size(); ++k) {
    const unsigned look = looks[k];
    measure(look - judged);
    judged = look;
    out.finalists = final_candidates();
    out.choice = recommend(out.finalists, j);
    out.looks = static_cast<unsigned>(k + 1);
    if (out.choice.decided && !session.interrupted()) break;
    if (look != looks.back() && !session.interrupted()) continue;
    // The last look (or an interruption): still undecided, so decided by the estimate.
    out.rounds_capped = out.rounds_capped || (!out.choice.decided && !session.interrupted());
    j.last_look = true;
    out.choice = recommend(out.finalists, j);
    break;
  }
  out.rounds_to_decide = judged > looks.front() ? judged - looks.front() : 0;
}

// Geometric mean of positive values; 0 when any is not positive or there are none.
double geometric_mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) {
    if (!(v > 0)) return 0;
    sum += std::log(v);
  }
  return std::exp(sum / static_cast<double>(values.size()));
}

RuleOfThumb rule_of_thumb(const TuneOutcome& t, const std::string& rule, std::size_t i, double screen_best_level) {
  const engine::PointSpec& spec = t.trials[i].spec;
  RuleOfThumb out{rule, t.trials[i].id, spec.pool_value, {}, std::nullopt, 0};
  const std::vector<std::size_t>& finalist_trials = t.final_stages.finalist_trials;
  const auto f = std::find(finalist_trials.begin(), finalist_trials.end(), i);
  if (f != finalist_trials.end()) {
    const auto k = static_cast<std::size_t>(f - finalist_trials.begin());
    out.candidate = t.finalists()[k];
    out.final = t.choice().ratio_to_best[k];
  } else {
    out.candidate = t.screened[i];
    out.screening_ratio =
        screen_best_level > 0 ? geometric_mean(out.candidate.throughput_by_round) / screen_best_level : 0;
  }
  return out;
}

// A run's readings for the blocking judge (engine/blocking_judge): a profiled run's own levels,
// else one at the point's ratio, as the results file's judge reads them back.
std::vector<engine::LevelReading> run_levels(const engine::PointSpec& spec, const engine::RunResult& r) {
  if (!r.blocking.profile_levels.empty()) return r.blocking.profile_levels;
  if (r.blocking.blocks && r.blocking.times.handlers == 0) return {};  // no handler blocked
  engine::LevelReading level;
  level.requested_ratio = spec.blocking_ratio;
  level.achieved_ratio = r.achieved_blocking_ratio;
  level.blocked_only_ratio = r.blocked_only_ratio;
  level.handlers = r.blocking.times.handlers;
  return {level};
}

// exclusion_reason, given `runs` and the readings of those whose handlers blocked (none empty).
std::optional<std::string> judged_exclusion(double requested_ratio,
                                            const std::vector<std::vector<engine::LevelReading>>& readings,
                                            const RunList& runs) {
  if (runs.empty()) return std::nullopt;
  for (const auto& r : runs) {
    if (!r.drained) return std::string("a run did not drain");
  }
  if (readings.empty() && requested_ratio > 0) return std::string("blocking ratio not honoured: no blocking handler ran");
  const engine::RatioJudgement judged = engine::judge_ratio(readings);
  if (judged.within()) return std::nullopt;
  std::string reason = "blocking ratio not honoured: " + judged.off_because;
  for (const auto& r : runs) {
    if (r.blocking.hint.empty()) continue;
    reason += "; " + r.blocking.hint;  // the first run's advice on the cause, where one gave it
    break;
  }
  return reason;
}

}  // namespace

std::optional<std::string> exclusion_reason(const engine::PointSpec& spec, const RunList& runs) {
  std::vector<std::vector<engine::LevelReading>> readings;
  for (const auto& r : runs) {
    if (auto levels = run_levels(spec, r); !levels.empty()) readings.push_back(std::move(levels));
  }
  return judged_exclusion(spec.blocking_ratio, readings, runs);
}

Session::Session(const Settings& settings, Runner& runner)
    : settings_(settings), runner_(runner), order_(settings.grid.seed) {}

void Session::add_trial(engine::PointSpec spec) {
  const unsigned c = concurrency_of(spec, logical_cpus());
  const bool tried = std::any_of(trials_.begin(), trials_.end(), [&](const Trial& t) {
    return concurrency_of(t.spec, logical_cpus()) == c && t.spec.pool_value == spec.pool_value;
  });
  if (!tried) {
    std::string id = sweep::point_id(spec);
    trials_.push_back({std::move(spec), std::move(id), {}, {}, {}});
  }
}

void Session::measure(const std::vector<std::size_t>& which, unsigned rounds, unsigned first_repetition,
                      Phase phase) {
  const bool final_phase = phase == Phase::kFinal;
  runner_.batch_begins(which.size() * rounds);
  const std::vector<sweep::RunSlot> slots = interrupted_ ? std::vector<sweep::RunSlot>{}
                                                         : order_.rounds(which, rounds, first_repetition);
  for (const sweep::RunSlot& slot : slots) {
    Trial& trial = trials_[slot.point];
    const std::string label = trial.id + (final_phase ? " final " : " screen ") +
                              std::to_string(slot.repetition - first_repetition);
    std::optional<engine::RunResult> result = runner_.run_once(trial.spec, slot.repetition, label);
    if (!result) {
      interrupted_ = true;
      break;
    }
    (final_phase ? trial.final_ops_per_s : trial.screening_ops_per_s).push_back(result->throughput_ops_per_s);
    trial.runs.push_back(std::move(*result));
  }
  runner_.batch_ends();
}

Candidate Session::candidate(std::size_t trial, Phase phase) const {
  const Trial& t = trials_[trial];
  Candidate c;
  c.concurrency = t.spec.concurrency;
  c.concurrency_value = concurrency_of(t.spec, logical_cpus());
  c.pool = t.spec.pool.fixed;  // the tuner tries fixed pools only
  c.pool_value = t.spec.pool_value;
  c.throughput_by_round = phase == Phase::kFinal ? t.final_ops_per_s : t.screening_ops_per_s;
  const RunsVerdict& v = verdict(trial);
  c.context_switches_per_kop = v.context_switches_per_kop;
  c.excluded = v.excluded;
  return c;
}

const Session::RunsVerdict& Session::verdict(std::size_t trial) const {
  const Trial& t = trials_[trial];
  if (verdicts_.size() < trials_.size()) verdicts_.resize(trials_.size());
  RunsVerdict& v = verdicts_[trial];
  if (v.looked && v.runs == t.runs.size()) return v;
  v.looked = true;
  for (; v.runs < t.runs.size(); ++v.runs) {
    if (auto levels = run_levels(t.spec, t.runs[v.runs]); !levels.empty()) v.readings.push_back(std::move(levels));
    v.switches.push_back(t.runs[v.runs].context_switches_per_kop);
  }
  v.context_switches_per_kop = stats::summarize(v.switches).median;
  v.excluded = judged_exclusion(t.spec.blocking_ratio, v.readings, t.runs);
  return v;
}

std::vector<Candidate> Session::screened() const {
  std::vector<Candidate> candidates;
  for (std::size_t i = 0; i < trials_.size(); ++i) candidates.push_back(candidate(i, Phase::kScreening));
  return candidates;
}

void screen(Session& session) {
  const Settings& s = session.settings();
  sweep::Grid grid = s.grid;
  grid.concurrency = {spec_of("1"), spec_of("N"), spec_of("2N")};
  grid.pool = {spec_of("N"), spec_of("2N"), spec_of("2N+2"), spec_of("4N")};
  sweep::validate_grid(grid);
  for (auto& spec : sweep::expand(grid, session.logical_cpus())) session.add_trial(std::move(spec));
  session.measure(indices(0, session.trials().size()), s.screen_rounds, 0, Phase::kScreening);
  if (!s.refine) return;
  const auto coarse_best = select_finalists(session.screened(), s.threshold_pct, 1);
  if (session.interrupted() || coarse_best.empty()) return;
  const std::size_t before = session.trials().size();
  add_neighbours(session, session.trials()[coarse_best.front()].spec);
  if (session.trials().size() > before) {
    session.measure(indices(before, session.trials().size()), s.screen_rounds, 0, Phase::kScreening);
  }
}

// A stage measures its finalists (measure_stage). When it recommends its best (every smaller
// finalist shown worse) and the screening left smaller settings untried, the next stage measures
// them against that best, in new rounds; at most kMaxFinalStages stages. After an interruption
// nothing more is measured and the last stage decides on what it has.
FinalStages run_final_stages(Session& session, std::vector<std::size_t> finalist_trials, unsigned first_repetition) {
  const Settings& s = session.settings();
  FinalStages out;
  unsigned next_repetition = first_repetition;
  std::vector<std::size_t> earlier_finalists;  // trials that were finalists of an earlier stage
  while (true) {
    ++out.stages;
    measure_stage(session, finalist_trials, next_repetition, out);
    if (session.interrupted() || !out.choice.found || out.choice.shown != Shown::kBest ||
        out.stages >= kMaxFinalStages) {
      break;
    }
    const std::size_t reference = finalist_trials[out.choice.best];
    earlier_finalists.insert(earlier_finalists.end(), finalist_trials.begin(), finalist_trials.end());
    auto next = next_finalists(session.screened(), s.threshold_pct, s.max_finalists, reference, earlier_finalists);
    if (next.empty()) break;
    // This stage recommended its best: every smaller finalist not excluded was shown worse.
    for (std::size_t f : out.choice.shown_worse_before_best) {
      out.shown_worse_in_earlier_stages.push_back(session.trials()[finalist_trials[f]].id);
    }
    session.note("  final stage " + std::to_string(out.stages) +
                 ": every finalist smaller than its best was shown worse; stage " + std::to_string(out.stages + 1) +
                 " measures " + std::to_string(next.size() - 1) + " smaller untried setting(s) against that best");
    finalist_trials = std::move(next);
  }
  out.finalist_trials = std::move(finalist_trials);
  return out;
}

TuneOutcome search(const Settings& settings, Runner& runner) {
  Session session(settings, runner);
  screen(session);
  // The final: only its rounds decide, and only the last stage's.
  FinalStages final_stages = run_final_stages(
      session, select_finalists(session.screened(), settings.threshold_pct, settings.max_finalists),
      settings.screen_rounds);
  return {settings, session.trials(), session.screened(), std::move(final_stages), session.interrupted()};
}

bool TuneOutcome::decided() const {
  const bool no_final = !finalists().empty() && choice().found && choice().ratio_to_best[choice().best].pairs == 0;
  return choice().found && measured() > 0 && !no_final;
}

std::size_t TuneOutcome::measured() const {
  return static_cast<std::size_t>(
      std::count_if(trials.begin(), trials.end(), [](const Trial& t) { return !t.runs.empty(); }));
}

std::string TuneOutcome::finalist_id(std::size_t f) const {
  return trials[final_stages.finalist_trials[f]].id;
}

std::vector<Excluded> excluded(const TuneOutcome& outcome) {
  std::vector<Excluded> out;
  for (const auto& t : outcome.trials) {
    if (auto why = exclusion_reason(t.spec, t.runs)) out.push_back({t.id, *why});
  }
  return out;
}

std::vector<RuleOfThumb> rules_of_thumb(const TuneOutcome& outcome) {
  double screen_best_level = 0;
  for (const auto& c : outcome.screened) {
    if (!c.excluded) screen_best_level = std::max(screen_best_level, geometric_mean(c.throughput_by_round));
  }
  const unsigned n = outcome.settings.logical_cpus;
  std::vector<RuleOfThumb> rules;
  for (const char* rule : {"N", "2N", "2N+2"}) {
    const unsigned pool_value = spec_of(rule).resolve(n);
    for (std::size_t i = 0; i < outcome.trials.size(); ++i) {
      const auto& trial = outcome.trials[i];
      if (concurrency_of(trial.spec, n) != n || trial.spec.pool_value != pool_value || trial.runs.empty()) continue;
      rules.push_back(rule_of_thumb(outcome, rule, i, screen_best_level));
      break;
    }
  }
  return rules;
}

bool too_noisy(const TuneOutcome& outcome) {
  const auto& width = outcome.choice().ci_half_width;
  return width && *width * 100 > kNoisyCiFraction * outcome.settings.threshold_pct;
}

}  // namespace iocpbench::tune
