#include "tune/search.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "results/blocking_fidelity.hpp"
#include "results/json_null.hpp"
#include "results/keys.hpp"
#include "stats/statistics.hpp"
#include "sweep/sweep_runner.hpp"

namespace iocpbench::tune {
namespace {

core::CountSpec spec_of(const std::string& text) { return *core::parse_count_spec(text, true, nullptr); }

unsigned concurrency_of(const engine::PointSpec& spec, unsigned n) {
  return spec.concurrency_value == 0 ? n : spec.concurrency_value;
}

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

// While the answer is only "not shown worse" (its CI straddles 1 - threshold), the final could
// not tell, and which way it falls would change from rerun to rerun: a setting truly 7% slower
// is "not shown worse" in about a third of 20-round finals at a 5% CV. So the stage measures
// half as many rounds again, all finalists together, until the answer is shown within (or the
// best, every smaller finalist shown worse) or max_final_rounds is reached. Only a setting truly
// at the threshold stays undecided to the cap; the decision is still made on all the rounds.
template <typename Candidates>
void extend_until_decided(Session& session, const std::vector<std::size_t>& finalist_trials, unsigned rounds,
                          unsigned& next_repetition, FinalStages& out, Candidates final_candidates) {
  const Settings& s = session.settings();
  auto undecided = [&] { return out.choice.found && out.choice.shown == Shown::kNotShownWorse; };
  while (!session.interrupted() && undecided() && rounds < s.max_final_rounds) {
    const unsigned more = std::min(s.max_final_rounds - rounds, std::max(1u, rounds / 2));
    session.measure(finalist_trials, more, next_repetition, Phase::kFinal);
    next_repetition += more;
    rounds += more;
    out.rounds_to_decide += more;
    out.finalists = final_candidates();
    out.choice = recommend(out.finalists, s.threshold_pct);
  }
  out.rounds_capped = out.rounds_capped || (undecided() && rounds >= s.max_final_rounds);
}

// One stage's rounds: final_rounds, then as many more as their paired spread asks for (the
// decision is made once, at the end, on all of them). Sets the stage's numbers in `out`.
void measure_stage(Session& session, const std::vector<std::size_t>& finalist_trials, unsigned& next_repetition,
                   FinalStages& out) {
  const Settings& s = session.settings();
  auto final_candidates = [&] {
    std::vector<Candidate> candidates;
    for (std::size_t i : finalist_trials) candidates.push_back(session.candidate(i, Phase::kFinal));
    return candidates;
  };
  for (std::size_t i : finalist_trials) session.clear_final(i);
  out.rounds_to_decide = 0;
  if (!session.interrupted()) session.measure(finalist_trials, s.final_rounds, next_repetition, Phase::kFinal);
  next_repetition += s.final_rounds;
  const std::vector<Candidate> first = final_candidates();
  const Choice first_look = recommend(first, s.threshold_pct);
  out.paired_sd = first_look.found ? paired_log_sd(first, first_look.best) : 0;
  const unsigned planned = final_rounds_for(out.paired_sd, s.threshold_pct, s.final_rounds, s.max_final_rounds);
  out.rounds_capped = planned == s.max_final_rounds &&
                      final_rounds_for(out.paired_sd, s.threshold_pct, s.final_rounds, 1000000) > s.max_final_rounds;
  if (!session.interrupted() && planned > s.final_rounds) {
    session.measure(finalist_trials, planned - s.final_rounds, next_repetition, Phase::kFinal);
  }
  next_repetition += planned - s.final_rounds;
  out.finalists = final_candidates();
  out.choice = recommend(out.finalists, s.threshold_pct);
  extend_until_decided(session, finalist_trials, planned, next_repetition, out, final_candidates);
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

// The parts of a point's JSON that blocking_fidelity reads, as results::point_result and
// results/run_record.cpp write them (ExclusionReason.JudgesAsTheResultsFileDoes checks that they agree):
// the whole point's JSON on every look would cost the simulations minutes.
nlohmann::json fidelity_point(const engine::PointSpec& spec) {
  return {{"blocking", {{"ratio", spec.blocking_ratio}}}, {"runs", nlohmann::json::array()}};
}

nlohmann::json fidelity_run(const engine::RunResult& r) {
  return {{"achieved_blocking_ratio", r.achieved_blocking_ratio},
          {"blocked_only_ratio", results::or_null(r.blocked_only_ratio)},
          {results::key::kHandlerTime, {{"hint", results::or_null(r.blocking.hint)}}}};
}

// exclusion_reason, given `runs` and their fidelity_point.
std::optional<std::string> judged_exclusion(const nlohmann::json& point, const std::vector<engine::RunResult>& runs) {
  if (runs.empty()) return std::nullopt;
  for (const auto& r : runs) {
    if (!r.drained) return std::string("a run did not drain");
  }
  const nlohmann::json fidelity = results::blocking_fidelity(point);
  if (!fidelity.value("within_tolerance", true)) {
    return "blocking ratio not honoured: " + fidelity.value("reason", std::string("no reason given"));
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> exclusion_reason(const engine::PointSpec& spec, const std::vector<engine::RunResult>& runs) {
  nlohmann::json point = fidelity_point(spec);
  for (const auto& r : runs) point["runs"].push_back(fidelity_run(r));
  return judged_exclusion(point, runs);
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
  const bool first_look = v.fidelity_point.is_null();
  if (first_look) v.fidelity_point = fidelity_point(t.spec);
  if (!first_look && v.runs == t.runs.size()) return v;
  for (; v.runs < t.runs.size(); ++v.runs) {
    v.fidelity_point["runs"].push_back(fidelity_run(t.runs[v.runs]));
    v.switches.push_back(t.runs[v.runs].context_switches_per_kop);
  }
  v.context_switches_per_kop = stats::summarize(v.switches).median;
  v.excluded = judged_exclusion(v.fidelity_point, t.runs);
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
