// `iocpbench tune`: which concurrency value and pool size should I use for this workload and
// blocking ratio? Three phases (docs/tuning.md):
//   1. screening: concurrency {1, N, 2N} x pool {N, 2N, 2N+2, 4N}, a few interleaved rounds;
//   2. screening of the neighbours of the screening's best (pool +-1, +-2; concurrency +-1);
//   3. the final: the screening's best and the smallest settings that could be within the
//      threshold of it, re-measured together in interleaved rounds: --repetitions of them, then
//      as many more as their measured noise needs (tune::final_rounds_for, up to
//      --max-repetitions). Only this phase's numbers decide (tune/recommend), so drift between
//      phases cannot.
// Printed beside the answer: the rules of thumb and the queueing estimate N/(1-b).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/interrupt.hpp"
#include "cli/option_help.hpp"
#include "cli/sweep_flags.hpp"
#include "platform/platform.hpp"
#include "platform/file_lock.hpp"
#include "sweep/progress.hpp"
#include "results/write.hpp"
#include "stats/blocking_fidelity.hpp"
#include "sweep/grid.hpp"
#include "sweep/results_file.hpp"
#include "stats/summary_json.hpp"
#include "sweep/sweep_runner.hpp"
#include "tune/recommend.hpp"

namespace iocpbench::cli {
namespace {

struct Trial {
  run::PointSpec spec;
  std::vector<run::RunResult> runs;      // every phase, for the results file
  std::vector<double> screening_ops_per_s;
  std::vector<double> final_ops_per_s;   // one per final round, in round order
};

sweep::CountSpec spec_of(const char* text) { return *sweep::parse_count_spec(text, true, nullptr); }

// Why a setting may not be recommended, from its runs; nullopt when it may. The tuner names such
// a setting under "excluded" and never chooses it (nor takes it as the best). This is the one
// place that decides: a run that did not drain, or a point whose blocking ratio was not honoured
// (points[].blocking_fidelity.within_tolerance false: it did not measure the b that was asked).
std::optional<std::string> exclusion_reason(const run::PointSpec& spec, const std::vector<run::RunResult>& runs) {
  if (runs.empty()) return std::nullopt;
  for (const auto& r : runs) {
    if (!r.drained) return std::string("a run did not drain");
  }
  const nlohmann::json fidelity = *results::point_result(spec, runs).blocking_fidelity;
  if (!fidelity.value("within_tolerance", true)) {
    return "blocking ratio not honoured: " + fidelity.value("reason", std::string("no reason given"));
  }
  return std::nullopt;
}

tune::Candidate candidate_of(const Trial& trial, unsigned logical_cpus, bool final_phase) {
  tune::Candidate c;
  c.concurrency = trial.spec.concurrency;
  c.concurrency_value = trial.spec.concurrency_value == 0 ? logical_cpus : trial.spec.concurrency_value;
  c.pool = trial.spec.pool.fixed;  // the tuner tries fixed pools only
  c.pool_value = trial.spec.pool_value;
  c.throughput_by_round = final_phase ? trial.final_ops_per_s : trial.screening_ops_per_s;
  std::vector<double> switches;
  for (const auto& r : trial.runs) switches.push_back(r.context_switches_per_kop);
  c.context_switches_per_kop = sweep::summarize(switches).median;
  c.excluded = exclusion_reason(trial.spec, trial.runs);
  return c;
}

std::string setting_text(const tune::Candidate& c) {
  char text[96];
  std::snprintf(text, sizeof(text), "concurrency %s (%u), pool %s (%u)", c.concurrency.text.c_str(),
                c.concurrency_value, c.pool.text.c_str(), c.pool_value);
  return text;
}

std::string describe(const tune::Candidate& c, const tune::RatioCi& ratio) {
  const sweep::Summary s = sweep::summarize(c.throughput_by_round);
  char text[240];
  std::snprintf(text, sizeof(text), "%s: median %.0f ops/s, %.3fx the best [90%% CI %.3f..%.3f], %.2f cs/kop",
                setting_text(c).c_str(), s.median, ratio.estimate, ratio.low, ratio.high,
                c.context_switches_per_kop);
  return text;
}

nlohmann::json ratio_json(const tune::RatioCi& r) {
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"estimate", r.estimate}, {"ci90_low", finite(r.low)}, {"ci90_high", finite(r.high)}, {"pairs", r.pairs}};
}

nlohmann::json candidate_json(const tune::Candidate& c, const std::string& id) {
  return {{"id", id},
          {"concurrency", {{"spec", c.concurrency.text}, {"value", c.concurrency_value}}},
          {"pool", {{"spec", c.pool.text}, {"value", c.pool_value}}},
          {"throughput_ops_per_s", sweep::to_json(sweep::summarize(c.throughput_by_round))},
          {"context_switches_per_kop", c.context_switches_per_kop}};
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

// `rounds` interleaved rounds over the trials `which` (repetition numbers from
// `first_repetition`), into their final or screening throughputs; sets the command's
// `interrupted` when a run was.
using Measure = std::function<void(const std::vector<std::size_t>& which, unsigned rounds, unsigned first_repetition,
                                   bool final_phase)>;

struct FinalPlan {
  double threshold_pct = 0;
  std::size_t max_finalists = 0;
  unsigned min_rounds = 0;        // --repetitions: each stage's first rounds
  unsigned max_rounds = 0;        // --max-repetitions
  unsigned first_repetition = 0;  // the first final run's repetition number (after the screening's)
};

struct FinalStages {
  std::vector<std::size_t> finalist_trials;  // the last stage's, in the fixed order
  std::vector<tune::Candidate> finalists;    // the last stage's, as measured
  tune::Choice choice;                       // decided on the last stage's rounds
  unsigned stages = 0;
  double paired_sd = 0;        // the last stage's paired log-ratio spread
  bool rounds_capped = false;  // the last stage's noise asked for more than max_rounds
  // Point ids: the finalists of earlier stages before their stage's best in the fixed order and
  // shown worse than it (tune::Choice::shown_worse_before_best): why none of them is the answer.
  std::vector<std::string> shown_worse_in_earlier_stages;
};

// The final: only its rounds decide, and only the last stage's. A stage measures its finalists
// (from `finalist_trials`) in min_rounds interleaved rounds, then as many more as their measured
// noise needs to show a setting twice the threshold worse (the decision is made once, at the end
// of the stage, on all its rounds). When a stage recommends its best (every smaller finalist
// shown worse) and the screening left smaller settings untried, the next stage measures them
// against that best, in new rounds; at most tune::kMaxFinalStages stages. After an interruption
// nothing more is measured and the last stage decides on what it has.
FinalStages run_final_stages(std::vector<Trial>& trials, unsigned logical_cpus,
                             std::vector<std::size_t> finalist_trials, const FinalPlan& plan,
                             const bool& interrupted, const Measure& measure) {
  auto final_candidates = [&] {
    std::vector<tune::Candidate> out;
    for (std::size_t i : finalist_trials) out.push_back(candidate_of(trials[i], logical_cpus, true));
    return out;
  };
  auto screened = [&] {
    std::vector<tune::Candidate> out;
    for (const auto& t : trials) out.push_back(candidate_of(t, logical_cpus, false));
    return out;
  };
  FinalStages out;
  unsigned next_repetition = plan.first_repetition;
  std::vector<std::size_t> earlier_finalists;  // trials that were finalists of an earlier stage
  while (true) {
    ++out.stages;
    for (std::size_t i : finalist_trials) trials[i].final_ops_per_s.clear();
    if (!interrupted) measure(finalist_trials, plan.min_rounds, next_repetition, true);
    next_repetition += plan.min_rounds;
    const std::vector<tune::Candidate> first = final_candidates();
    const tune::Choice first_look = tune::recommend(first, plan.threshold_pct);
    out.paired_sd = first_look.found ? tune::paired_log_sd(first, first_look.best) : 0;
    const unsigned planned =
        tune::final_rounds_for(out.paired_sd, plan.threshold_pct, plan.min_rounds, plan.max_rounds);
    out.rounds_capped = planned == plan.max_rounds &&
                        tune::final_rounds_for(out.paired_sd, plan.threshold_pct, plan.min_rounds, 1000000) >
                            plan.max_rounds;
    if (!interrupted && planned > plan.min_rounds) {
      measure(finalist_trials, planned - plan.min_rounds, next_repetition, true);
    }
    next_repetition += planned - plan.min_rounds;
    out.finalists = final_candidates();
    out.choice = tune::recommend(out.finalists, plan.threshold_pct);
    if (interrupted || !out.choice.found || out.choice.shown != tune::Shown::kBest ||
        out.stages >= tune::kMaxFinalStages) {
      break;
    }
    const std::size_t reference = finalist_trials[out.choice.best];
    earlier_finalists.insert(earlier_finalists.end(), finalist_trials.begin(), finalist_trials.end());
    auto next = tune::next_finalists(screened(), plan.threshold_pct, plan.max_finalists, reference, earlier_finalists);
    if (next.empty()) break;
    // This stage recommended its best: every smaller finalist not excluded was shown worse.
    for (std::size_t f : out.choice.shown_worse_before_best) {
      out.shown_worse_in_earlier_stages.push_back(sweep::point_id(trials[finalist_trials[f]].spec));
    }
    std::cout << "  final stage " << out.stages << ": every finalist smaller than its best was shown worse; stage "
              << out.stages + 1 << " measures " << next.size() - 1
              << " smaller untried setting(s) against that best\n";
    finalist_trials = std::move(next);
  }
  out.finalist_trials = std::move(finalist_trials);
  return out;
}

struct TuneOptions {
  SweepFlags flags;
  std::string threshold, screen_repetitions, finalists, max_repetitions;
  bool quiet = false;
};

void add_tune_options(CLI::App& command, TuneOptions& o) {
  add_sweep_flags(command, o.flags, /*for_tune=*/true);
  // The shared flags' help names the sweep's defaults; say the tuner's.
  command.get_option("--repetitions")
      ->description("final-phase rounds: runs of each finalist, interleaved, before the noise check that may add "
                    "more up to --max-repetitions")
      ->default_str(std::to_string(tune::kDefaultFinalRounds));
  command.get_option("--duration")->default_str(number_text(tune::kDefaultDurationS));
  command.get_option("--warmup")->default_str(number_text(tune::kDefaultWarmupS));
  add_text_option(command, "--max-repetitions", o.max_repetitions,
                  "most final-phase rounds when the first --repetitions are noisy: the final runs as many as it "
                  "takes to show a setting twice the threshold worse (at least --repetitions)",
                  "INT", std::to_string(tune::kDefaultMaxFinalRounds));
  add_text_option(command, "--threshold", o.threshold,
                  "percent of the best throughput a setting may lose and still count as indistinguishable",
                  "FLOAT", number_text(tune::kDefaultThresholdPct));
  add_text_option(command, "--screen-repetitions", o.screen_repetitions,
                  "screening rounds: runs of each setting before the final", "INT",
                  std::to_string(tune::kDefaultScreenRounds));
  add_text_option(command, "--finalists", o.finalists,
                  "settings re-measured in the final phase, the screening's best included", "INT",
                  std::to_string(tune::kDefaultFinalists));
  command.add_flag("--quiet", o.quiet, "no progress display");
}

// What the tuner runs, from the options and checked (BadInput naming the flag otherwise).
struct TuneSettings {
  sweep::Grid grid;  // its workload, port, dispatch, blocking ratio and run lengths
  double threshold_pct = 0;
  unsigned screen_rounds = 0;
  std::size_t max_finalists = 0;
  unsigned final_rounds = 0;      // --repetitions
  unsigned max_final_rounds = 0;  // --max-repetitions
};

TuneSettings settings_from(const TuneOptions& o) {
  const SweepFlags& flags = o.flags;
  TuneSettings s;
  sweep::Grid& grid = s.grid;
  grid = grid_from_flags(flags, false);
  if (flags.repetitions.empty()) grid.repetitions = tune::kDefaultFinalRounds;
  if (grid.repetitions < tune::kMinFinalRounds) {
    throw BadInput{"--repetitions", "tune needs at least " + std::to_string(tune::kMinFinalRounds) +
                                        " final rounds (a 90% signed-rank CI needs 5 pairs)"};
  }
  if (flags.duration.empty()) grid.duration_s = tune::kDefaultDurationS;
  if (flags.warmup.empty()) grid.warmup_s = tune::kDefaultWarmupS;
  if (flags.workload.empty()) throw BadInput{"--workload", "required: post, file or socket"};
  if (grid.workloads.size() != 1) throw BadInput{"--workload", "tune takes one workload"};
  if (grid.ports.size() != 1) throw BadInput{"--port", "tune takes one port backend"};
  if (grid.dispatch.size() != 1) throw BadInput{"--dispatch", "tune takes one dispatch model"};
  if (flags.blocking.empty()) throw BadInput{"--blocking", "required: the blocking ratio in [0,1)"};
  if (grid.blocking.size() != 1) throw BadInput{"--blocking", "tune takes one blocking ratio"};
  s.threshold_pct = o.threshold.empty() ? tune::kDefaultThresholdPct : parse_number_flag(o.threshold, "--threshold");
  if (s.threshold_pct < 0 || s.threshold_pct >= 100) throw BadInput{"--threshold", "must be in [0, 100)"};
  s.screen_rounds = o.screen_repetitions.empty() ? tune::kDefaultScreenRounds
                                                 : parse_count_flag(o.screen_repetitions, "--screen-repetitions", 1);
  s.max_finalists = o.finalists.empty() ? tune::kDefaultFinalists : parse_count_flag(o.finalists, "--finalists", 1);
  if (s.screen_rounds > 1000) throw BadInput{"--screen-repetitions", "more than 1000"};
  s.max_final_rounds = o.max_repetitions.empty() ? std::max(tune::kDefaultMaxFinalRounds, grid.repetitions)
                                                 : parse_count_flag(o.max_repetitions, "--max-repetitions", 1);
  if (s.max_final_rounds < grid.repetitions) throw BadInput{"--max-repetitions", "below --repetitions"};
  if (s.max_final_rounds > 100000) throw BadInput{"--max-repetitions", "more than 100000"};
  if (s.max_finalists > 100) throw BadInput{"--finalists", "more than 100"};
  s.final_rounds = grid.repetitions;
  return s;
}

// The settings tried and their runs: the screening grid, its neighbours, the final's rounds.
class TuneSession {
 public:
  TuneSession(const sweep::Grid& grid, bool quiet)
      : n_(platform::logical_cpus()), quiet_(quiet), rng_(grid.seed), stop_(install_interrupt_handlers()) {}

  unsigned logical_cpus() const { return n_; }
  bool interrupted() const { return interrupted_; }
  const bool& interrupted_flag() const { return interrupted_; }
  std::vector<Trial>& trials() { return trials_; }

  // One trial per distinct (concurrency, pool) value on this machine.
  void add_trial(run::PointSpec spec) {
    const unsigned c = spec.concurrency_value == 0 ? n_ : spec.concurrency_value;
    if (tried_.insert({c, spec.pool_value}).second) trials_.push_back({std::move(spec), {}, {}, {}});
  }

  // `rounds` interleaved rounds over `which`: each round runs every one once, in a fresh random
  // order, so slow drift of the machine falls on all of them alike.
  void measure(const std::vector<std::size_t>& which, unsigned rounds, unsigned first_repetition, bool final_phase) {
    report::Progress progress(which.size() * rounds, quiet_);
    std::vector<std::size_t> order = which;
    for (unsigned r = 0; r < rounds && !interrupted_; ++r) {
      std::shuffle(order.begin(), order.end(), rng_);
      for (std::size_t i : order) {
        const unsigned repetition = first_repetition + r;
        progress.starting(sweep::point_id(trials_[i].spec) + (final_phase ? " final " : " screen ") +
                          std::to_string(r));
        run::RunResult result = run::run_point(trials_[i].spec, &stop_, repetition);
        if (result.interrupted || stop_.load()) {
          interrupted_ = true;
          break;
        }
        (final_phase ? trials_[i].final_ops_per_s : trials_[i].screening_ops_per_s)
            .push_back(result.throughput_ops_per_s);
        trials_[i].runs.push_back(std::move(result));
        progress.finished_one();
      }
    }
    progress.done();
  }

  std::vector<tune::Candidate> screened() const {
    std::vector<tune::Candidate> candidates;
    for (const auto& t : trials_) candidates.push_back(candidate_of(t, n_, false));
    return candidates;
  }

 private:
  unsigned n_;
  bool quiet_;
  std::mt19937_64 rng_;
  const std::atomic<bool>& stop_;
  bool interrupted_ = false;
  std::vector<Trial> trials_;
  std::set<std::pair<unsigned, unsigned>> tried_;
};

std::vector<std::size_t> indices(std::size_t from, std::size_t to) {
  std::vector<std::size_t> out(to - from);
  std::iota(out.begin(), out.end(), from);
  return out;
}

// Phases 1 and 2: the coarse grid, then the neighbours of its best (pool +-1, +-2; concurrency
// +-1), each in `screen_rounds` interleaved rounds.
void run_screening(TuneSession& session, sweep::Grid grid, const TuneSettings& s) {
  const unsigned n = session.logical_cpus();
  grid.concurrency = {spec_of("1"), spec_of("N"), spec_of("2N")};
  grid.pool = {spec_of("N"), spec_of("2N"), spec_of("2N+2"), spec_of("4N")};
  sweep::validate_grid(grid);
  for (auto& spec : sweep::expand(grid, n)) session.add_trial(std::move(spec));
  session.measure(indices(0, session.trials().size()), s.screen_rounds, 0, false);
  const auto coarse_best = tune::select_finalists(session.screened(), s.threshold_pct, 1);
  if (session.interrupted() || coarse_best.empty()) return;
  const std::size_t before = session.trials().size();
  const run::PointSpec base = session.trials()[coarse_best.front()].spec;
  const unsigned base_concurrency = base.concurrency_value == 0 ? n : base.concurrency_value;
  for (const int dp : {-2, -1, 1, 2}) {
    const long p = static_cast<long>(base.pool_value) + dp;
    if (p < 1) continue;
    run::PointSpec spec = base;
    spec.pool = spec_of(std::to_string(p).c_str());
    spec.pool_value = static_cast<unsigned>(p);
    session.add_trial(spec);
  }
  for (const int dc : {-1, 1}) {
    const long c = static_cast<long>(base_concurrency) + dc;
    if (c < 1 || base.dispatch == Dispatch::per_thread) continue;  // per-thread: always 1 per port
    run::PointSpec spec = base;
    spec.concurrency = spec_of(std::to_string(c).c_str());
    spec.concurrency_value = static_cast<unsigned>(c);
    session.add_trial(spec);
  }
  if (session.trials().size() > before) {
    session.measure(indices(before, session.trials().size()), s.screen_rounds, 0, false);
  }
}

// What the tune decided, for the report on stdout and the results file's tune block.
struct TuneReport {
  const std::vector<Trial>& trials;
  const FinalStages& final_stages;
  const TuneSettings& settings;
  unsigned n = 0;
  std::size_t measured = 0;  // settings with runs
  bool interrupted = false;

  const tune::Choice& choice() const { return final_stages.choice; }
  const std::vector<tune::Candidate>& finalists() const { return final_stages.finalists; }
  std::size_t rounds() const { return choice().ratio_to_best[choice().best].pairs; }
  std::string id_of_finalist(std::size_t f) const {
    return sweep::point_id(trials[final_stages.finalist_trials[f]].spec);
  }
};

void print_decision(const TuneReport& t) {
  const sweep::Grid& grid = t.settings.grid;
  const tune::Choice& choice = t.choice();
  const unsigned stages = t.final_stages.stages;
  std::cout << "tune: " << to_string(grid.workloads.front()) << " workload, blocking " << grid.blocking.front()
            << " (" << to_string(grid.blocking_kind) << "), work " << grid.work_us << " us, N = " << t.n << "; screening " << t.measured
            << " settings x " << t.settings.screen_rounds << " runs, final "
            << (stages > 1 ? "(stage " + std::to_string(stages) + ") " : "") << t.finalists().size() << " settings x "
            << t.rounds() << " interleaved rounds of " << grid.duration_s << " s"
            << (t.interrupted ? " (INTERRUPTED: partial evidence)" : "") << "\n";
  const char* shown_line =
      choice.shown == tune::Shown::kWithin ? "shown within the threshold of the best"
      : choice.shown == tune::Shown::kBest ? "the best measured; every smaller finalist was shown worse"
      : choice.shown == tune::Shown::kNoEvidence
          ? "NO EVIDENCE: the best measured, but the final had too few rounds for a 90% CI, so nothing was "
            "shown about the smaller finalists"
          : "NOT SHOWN WORSE than the threshold, but not shown within it either: the final "
            "could not tell it from the best";
  std::cout << "  recommended:   "
            << describe(t.finalists()[choice.recommended], choice.ratio_to_best[choice.recommended]) << "\n";
  std::cout << "                 (" << shown_line << ")\n";
  std::cout << "  best measured: " << describe(t.finalists()[choice.best], choice.ratio_to_best[choice.best])
            << "\n";
  char spread_text[32];
  std::snprintf(spread_text, sizeof(spread_text), "%.3f", t.final_stages.paired_sd);
  std::cout << "  final (= shown within: the ratio's 90% CI is above " << 1 - t.settings.threshold_pct / 100
            << "; ~ not shown worse: its upper end reaches it; ? no CI, too few rounds; paired log-ratio spread "
            << spread_text << ", " << t.rounds() << " rounds"
            << (t.final_stages.rounds_capped ? ", CAPPED by --max-repetitions" : "") << "):\n";
}

bool contains(const std::vector<std::size_t>& list, std::size_t f) {
  return std::find(list.begin(), list.end(), f) != list.end();
}

// The finalists' lines on stdout, and their entries of the tune block.
nlohmann::json finalists_table(const TuneReport& t) {
  const tune::Choice& choice = t.choice();
  nlohmann::json finals = nlohmann::json::array();
  for (std::size_t f = 0; f < t.finalists().size(); ++f) {
    const bool same = contains(choice.indistinguishable, f);
    const bool not_worse = contains(choice.not_shown_worse, f);
    const bool no_evidence = contains(choice.no_evidence, f);
    const tune::Candidate& c = t.finalists()[f];
    std::cout << "    " << (same ? "= " : not_worse ? "~ " : no_evidence ? "? " : "  ")
              << describe(c, choice.ratio_to_best[f]) << (c.excluded ? " EXCLUDED: " + *c.excluded : "") << "\n";
    nlohmann::json entry = candidate_json(c, t.id_of_finalist(f));
    entry["ratio_to_best"] = ratio_json(choice.ratio_to_best[f]);
    entry["indistinguishable"] = same;
    entry["not_shown_worse"] = not_worse;
    entry["no_evidence"] = no_evidence;
    finals.push_back(std::move(entry));
  }
  return finals;
}

// The note when the final's CIs are too wide for the threshold; true when printed.
bool note_if_too_noisy(const TuneReport& t) {
  const tune::Choice& choice = t.choice();
  const double threshold = t.settings.threshold_pct;
  const bool too_noisy = choice.ci_half_width && *choice.ci_half_width * 100 > tune::kNoisyCiFraction * threshold;
  if (too_noisy) {
    char note[400];
    std::snprintf(note, sizeof(note),
                  "  note: the final's 90%% CIs are +-%.1f%% wide (median), over half the %g%% threshold: at this "
                  "noise the rule seldom shows a smaller setting equivalent to the best; the answer is the "
                  "smallest not shown worse (docs/tuning.md); rerun when the machine is quieter\n",
                  *choice.ci_half_width * 100, threshold);
    std::cout << note;
  }
  return too_noisy;
}

nlohmann::json excluded_list(const std::vector<Trial>& trials) {
  nlohmann::json excluded = nlohmann::json::array();
  for (const auto& t : trials) {
    if (auto why = exclusion_reason(t.spec, t.runs)) {
      std::cout << "  excluded: " << sweep::point_id(t.spec) << ": " << *why << "\n";
      excluded.push_back({{"id", sweep::point_id(t.spec)}, {"reason", *why}});
    }
  }
  return excluded;
}

// One rule of thumb (pool `rule` at concurrency N) measured as trial `i`: from the final when
// it was a finalist, else from the screening (a point estimate against the screening's best,
// without a CI).
nlohmann::json rule_of_thumb(const TuneReport& t, const char* rule, std::size_t i,
                             const std::vector<tune::Candidate>& all_screened, double screen_best_level) {
  const auto& spec = t.trials[i].spec;
  const std::vector<std::size_t>& finalist_trials = t.final_stages.finalist_trials;
  nlohmann::json entry = {{"rule", std::string("pool ") + rule}};
  const auto f = std::find(finalist_trials.begin(), finalist_trials.end(), i);
  char line[240];
  if (f != finalist_trials.end()) {
    const std::size_t k = static_cast<std::size_t>(f - finalist_trials.begin());
    const tune::RatioCi& r = t.choice().ratio_to_best[k];
    std::snprintf(line, sizeof(line), "    pool %-5s (%u): %.3fx the best [90%% CI %.3f..%.3f] (final)\n", rule,
                  spec.pool_value, r.estimate, r.low, r.high);
    entry["point"] = candidate_json(t.finalists()[k], sweep::point_id(spec));
    entry["ratio_to_best"] = r.estimate;
    entry["ratio_ci90"] = ratio_json(r);
    entry["measured_in"] = "final";
  } else {
    const tune::Candidate& c = all_screened[i];
    const double ratio = screen_best_level > 0 ? geometric_mean(c.throughput_by_round) / screen_best_level : 0;
    std::snprintf(line, sizeof(line), "    pool %-5s (%u): %.2fx the best (screening, no CI)\n", rule,
                  spec.pool_value, ratio);
    entry["point"] = candidate_json(c, sweep::point_id(spec));
    entry["ratio_to_best"] = ratio;
    entry["ratio_ci90"] = nullptr;
    entry["measured_in"] = "screening";
  }
  std::cout << line;
  return entry;
}

// The rules of thumb (pool N, 2N, 2N+2 at concurrency N) that were measured.
nlohmann::json rules_of_thumb(const TuneReport& t, const std::vector<tune::Candidate>& all_screened) {
  double screen_best_level = 0;
  for (const auto& c : all_screened) {
    if (!c.excluded) screen_best_level = std::max(screen_best_level, geometric_mean(c.throughput_by_round));
  }
  nlohmann::json rules = nlohmann::json::array();
  std::cout << "  rules of thumb (concurrency N):\n";
  for (const char* rule : {"N", "2N", "2N+2"}) {
    const unsigned pool_value = spec_of(rule).resolve(t.n);
    for (std::size_t i = 0; i < t.trials.size(); ++i) {
      const auto& spec = t.trials[i].spec;
      const unsigned c_value = spec.concurrency_value == 0 ? t.n : spec.concurrency_value;
      if (c_value != t.n || spec.pool_value != pool_value || t.trials[i].runs.empty()) continue;
      rules.push_back(rule_of_thumb(t, rule, i, all_screened, screen_best_level));
      break;
    }
  }
  return rules;
}

// The results file's tune.rule: the rule in words and the numbers it ran with.
nlohmann::json rule_json(const TuneReport& t, bool too_noisy) {
  const tune::Choice& choice = t.choice();
  return {{"text", "the smallest pool, then the smallest concurrency, not shown worse than the best by more than "
                   "the threshold: its final-phase throughput ratio to the best (Hodges-Lehmann over the "
                   "interleaved rounds' paired log ratios) has a 90% CI (Wilcoxon signed-rank) whose upper end "
                   "reaches 1 - threshold; recommendation.shown says whether the whole CI is above it "
                   "(shown_within), it is the best (every smaller finalist shown worse), or only not_shown_worse; "
                   "no_evidence: it is the best, and a smaller finalist had no CI (fewer than 5 rounds, an "
                   "interrupted final), so nothing was shown about that one"},
          {"confidence", tune::kEquivalenceConfidence},
          {"screening_rounds", t.settings.screen_rounds},
          {"final_rounds", t.rounds()},
          {"final_rounds_min", t.settings.final_rounds},
          {"final_rounds_max", t.settings.max_final_rounds},
          {"final_rounds_capped", t.final_stages.rounds_capped},
          {"final_stages", t.final_stages.stages},
          {"shown_worse_in_earlier_stages", t.final_stages.shown_worse_in_earlier_stages},
          {"paired_log_sd", t.final_stages.paired_sd},
          {"max_finalists", t.settings.max_finalists},
          {"ci90_half_width_median", choice.ci_half_width && std::isfinite(*choice.ci_half_width)
                                         ? nlohmann::json(*choice.ci_half_width)
                                         : nlohmann::json(nullptr)},
          {"too_noisy", too_noisy}};
}

// The printed parts of the report, as the tune block keeps them.
struct TunePrinted {
  nlohmann::json finals, excluded, rules;
  bool too_noisy = false;
  unsigned estimate = 0;
};

void write_tune_results(const std::string& path, const TuneReport& t, const TunePrinted& printed) {
  const sweep::Grid& grid = t.settings.grid;
  const tune::Choice& choice = t.choice();
  std::vector<results::PointResult> points;
  nlohmann::json evidence = nlohmann::json::array();
  for (const auto& trial : t.trials) {
    if (trial.runs.empty()) continue;
    results::PointResult point = results::point_result(trial.spec, trial.runs);
    point.id = sweep::point_id(trial.spec);
    evidence.push_back(*point.id);
    points.push_back(std::move(point));
  }
  results::SweepBlock sweep_block = sweep::sweep_block(grid);
  sweep_block.mode = "tune";
  sweep_block.complete = !t.interrupted;
  results::ResultsDocument doc = results::new_document(std::move(sweep_block));
  doc.points = std::move(points);
  nlohmann::json recommendation =
      candidate_json(t.finalists()[choice.recommended], t.id_of_finalist(choice.recommended));
  recommendation["ratio_to_best"] = ratio_json(choice.ratio_to_best[choice.recommended]);
  recommendation["shown"] = tune::shown_text(choice.shown);
  nlohmann::json tune = {
      {"workload", to_string(grid.workloads.front())},
      {"blocking", grid.blocking.front()},
      {"blocking_kind", to_string(grid.blocking_kind)},
      {"work_us", grid.work_us},
      {"threshold_pct", t.settings.threshold_pct},
      {"rule", rule_json(t, printed.too_noisy)},
      {"recommendation", recommendation},
      {"best", candidate_json(t.finalists()[choice.best], t.id_of_finalist(choice.best))},
      {"indistinguishable", nlohmann::json::array()},
      {"not_shown_worse", nlohmann::json::array()},
      {"finalists", printed.finals},
      {"excluded", printed.excluded},
      {"rules_of_thumb", printed.rules},
      {"queueing_estimate", {{"formula", "N/(1-b)"}, {"value", printed.estimate}}},
      {"evidence", evidence},
  };
  for (std::size_t f : choice.indistinguishable) tune["indistinguishable"].push_back(t.id_of_finalist(f));
  for (std::size_t f : choice.not_shown_worse) tune["not_shown_worse"].push_back(t.id_of_finalist(f));
  doc.tune = std::move(tune);
  results::write_file(path, doc);
  std::cout << "  evidence: " << t.measured << " settings in " << path << "\n";
}

int tune_command(const TuneOptions& o) {
  const TuneSettings s = settings_from(o);
  // Held until the command returns: no other writer meanwhile.
  const report::FileLock json_lock = o.flags.json.empty() ? report::FileLock() : lock_output_file(o.flags.json, "--json");
  TuneSession session(s.grid, o.quiet);
  run_screening(session, s.grid, s);
  std::vector<Trial>& trials = session.trials();
  const unsigned n = session.logical_cpus();
  // The final (run_final_stages): only its rounds decide, and only the last stage's.
  const FinalStages final_stages = run_final_stages(
      trials, n, tune::select_finalists(session.screened(), s.threshold_pct, s.max_finalists),
      {s.threshold_pct, s.max_finalists, s.final_rounds, s.max_final_rounds, s.screen_rounds},
      session.interrupted_flag(),
      [&](const std::vector<std::size_t>& which, unsigned rounds, unsigned first, bool final_phase) {
        session.measure(which, rounds, first, final_phase);
      });
  const tune::Choice& choice = final_stages.choice;
  const bool interrupted = session.interrupted();
  // (An interruption may leave settings without runs; they are skipped below, not erased, so
  // that the indices in finalist_trials stay valid.)
  const auto measured = static_cast<std::size_t>(
      std::count_if(trials.begin(), trials.end(), [](const Trial& t) { return !t.runs.empty(); }));
  const bool no_final =
      !final_stages.finalists.empty() && choice.found && choice.ratio_to_best[choice.best].pairs == 0;
  if (!choice.found || measured == 0 || no_final) {
    std::cerr << "iocpbench: tune "
              << (interrupted ? "interrupted before the final phase" : "found no setting it may recommend") << "\n";
    return interrupted ? kExitInterrupted : kExitRunFailed;
  }
  const TuneReport report{trials, final_stages, s, n, measured, interrupted};
  print_decision(report);
  TunePrinted printed;
  printed.finals = finalists_table(report);
  printed.too_noisy = note_if_too_noisy(report);
  printed.excluded = excluded_list(trials);
  printed.rules = rules_of_thumb(report, session.screened());
  printed.estimate = tune::queueing_estimate(n, s.grid.blocking.front());
  std::cout << "  queueing estimate N/(1-b) = " << printed.estimate << " threads\n";
  if (!o.flags.json.empty()) write_tune_results(o.flags.json, report, printed);
  return interrupted ? kExitInterrupted : kExitOk;
}

}  // namespace

CommandBody add_tune_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "tune",
      "Recommend a concurrency value and pool size for one workload and blocking ratio: a "
      "screening of concurrency 1, N, 2N x pool N, 2N, 2N+2, 4N and of the neighbours of its "
      "best, then a final phase that re-measures the best and the smallest plausible settings "
      "together in interleaved rounds. The recommendation is the smallest pool, then the smallest "
      "concurrency, whose throughput ratio to the best has a 90% CI entirely above "
      "1 - threshold (docs/tuning.md).");
  auto options = std::make_shared<TuneOptions>();
  add_tune_options(*command, *options);
  return [options]() { return tune_command(*options); };
}

}  // namespace iocpbench::cli
