#pragma once
// The tuner's search (docs/tuning.md), measured through a Runner that runs one point once:
//   1. screening: concurrency {1, N, 2N} x pool {N, 2N, 2N+2, 4N}, a few interleaved rounds;
//   2. with --refine only, screening of the neighbours of the screening's best (pool +-1, +-2;
//      concurrency +-1);
//   3. the final: the screening's best and the smallest settings that could be within the
//      threshold of it, re-measured together in interleaved rounds: selection rounds that choose
//      the stage's best and size its first look (final_rounds_for), then judged rounds, looked at
//      after that many, twice as many, ... up to `max_final_rounds`, until the answer is decided;
//      in up to kMaxFinalStages stages. Only the last stage's judged rounds decide
//      (tune/recommend), so drift between phases cannot.
// Every phase's rounds come from one sweep::RoundOrder seeded with the grid's seed. The program
// (cli/cmd_tune.cpp) runs real points; tests/tune/recommend_test.cpp's simulation runs the same
// Session and final stages on simulated throughputs.

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "engine/blocking_judge.hpp"
#include "engine/run_point.hpp"
#include "sweep/grid.hpp"
#include "sweep/schedule.hpp"
#include "tune/recommend.hpp"

namespace iocpbench::tune {

// The grid a tune starts from: the sweep's defaults with the tuner's run lengths and final
// rounds (tune/recommend.hpp); the flags given replace its values (cli/cmd_tune.cpp).
sweep::Grid tune_grid();

// What the tuner runs (the CLI checks the values: cli/cmd_tune.cpp's settings_from).
struct Settings {
  sweep::Grid grid;  // its workload, port, dispatch, blocking ratio, run lengths and seed
  unsigned logical_cpus = 1;  // N
  double threshold_pct = kDefaultThresholdPct;
  double zone_pct = kDefaultZonePct;  // the indifference zone below 1 - threshold
  unsigned screen_rounds = kDefaultScreenRounds;
  std::size_t max_finalists = kDefaultFinalists;
  unsigned final_rounds = kDefaultFinalRounds;         // --repetitions: each stage's first rounds
  unsigned max_final_rounds = kDefaultMaxFinalRounds;  // --max-repetitions
  // --refine: also screen the neighbours of the coarse grid's best (pool +-1, +-2; concurrency
  // +-1), which may then be finalists, the best and the answer. Off by default: near the best
  // such steps are a few percent apart, so one of them sits at the threshold and the answer
  // moves between reruns (docs/tuning.md, "Why the coarse grid by default").
  bool refine = false;
};

// How the search measures. The program's runs real points with a progress display; the tests'
// simulate them.
class Runner {
 public:
  virtual ~Runner() = default;
  // A batch of `runs` runs (one call of Session::measure) begins / ends.
  virtual void batch_begins(std::size_t runs) { (void)runs; }
  virtual void batch_ends() {}
  // One run of `spec` as `repetition`; `label` names it ("ID screen 0", "ID final 3"). nullopt:
  // the tune was interrupted; the run is dropped and nothing more is measured.
  virtual std::optional<engine::RunResult> run_once(const engine::PointSpec& spec, unsigned repetition,
                                                 const std::string& label) = 0;
  // A line for the user while the search goes on (a further stage of the final).
  virtual void note(const std::string& line) { (void)line; }
};

// A setting's runs, in the order they ran, kept for the results file. A deque: runs are
// appended one at a time for the whole session and never move (a vector of these 2.6 KB
// results re-allocates and copies megabytes as it grows, which a simulation of thousands of
// tune runs spends most of its time on).
using RunList = std::deque<engine::RunResult>;

struct Trial {
  engine::PointSpec spec;
  std::string id;                    // sweep::point_id(spec)
  RunList runs;                      // every phase
  std::vector<double> screening_ops_per_s;
  std::vector<double> final_ops_per_s;  // the current stage's, one per final round in round order
};

enum class Phase { kScreening, kFinal };

// The concurrency value a point runs at on `n` logical CPUs (a spec's 0 means n).
unsigned concurrency_of(const engine::PointSpec& spec, unsigned n);
// A count spec of the tuner's own grids ("N", "2N+2": always valid).
core::CountSpec spec_of(const std::string& text);

// Why a setting may not be recommended, from its runs; nullopt when it may. The tuner names such
// a setting under "excluded" and never chooses it (nor takes it as the best). This is the one
// place that decides: a run that did not drain, or a point whose blocking ratio was not honoured
// (engine/blocking_judge, the judge behind points[].blocking_fidelity: it did not measure the b
// that was asked).
std::optional<std::string> exclusion_reason(const engine::PointSpec& spec, const RunList& runs);

// The settings tried and their runs.
class Session {
 public:
  Session(const Settings& settings, Runner& runner);

  const Settings& settings() const { return settings_; }
  unsigned logical_cpus() const { return settings_.logical_cpus; }
  bool interrupted() const { return interrupted_; }
  const std::vector<Trial>& trials() const { return trials_; }

  // One trial per distinct (concurrency, pool) value on this machine.
  void add_trial(engine::PointSpec spec);
  // `rounds` interleaved rounds over the trials `which` (repetition numbers from
  // `first_repetition`): each round runs every one once, in a fresh random order, so slow drift
  // of the machine falls on all of them alike. Nothing after an interruption.
  void measure(const std::vector<std::size_t>& which, unsigned rounds, unsigned first_repetition, Phase phase);
  // A new stage of the final: its finalists' final rounds start empty.
  void clear_final(std::size_t trial) { trials_[trial].final_ops_per_s.clear(); }
  void note(const std::string& line) { runner_.note(line); }

  // A trial as the rule sees it: the phase's rounds, its runs' median context switches and its
  // exclusion (both over every phase's runs).
  Candidate candidate(std::size_t trial, Phase phase) const;
  std::vector<Candidate> screened() const;  // every trial, from its screening rounds

 private:
  // What a trial's runs say, brought up to date with its new runs when looked at: the
  // simulations look at every trial after each stage, and judging all of its runs afresh each
  // time would cost them seconds.
  struct RunsVerdict {
    bool looked = false;
    std::size_t runs = 0;              // judged so far
    std::vector<std::vector<engine::LevelReading>> readings;  // of runs that blocked, for the judge
    std::vector<double> switches;      // their context switches per kop
    double context_switches_per_kop = 0;
    std::optional<std::string> excluded;
  };
  const RunsVerdict& verdict(std::size_t trial) const;

  Settings settings_;
  Runner& runner_;
  sweep::RoundOrder order_;
  bool interrupted_ = false;
  std::vector<Trial> trials_;
  mutable std::vector<RunsVerdict> verdicts_;  // per trial
};

struct FinalStages {
  std::vector<std::size_t> finalist_trials;  // the last stage's, in the fixed order
  std::vector<Candidate> finalists;          // the last stage's, as measured
  Choice choice;                             // decided on the last stage's rounds
  unsigned stages = 0;
  double paired_sd = 0;        // the last stage's paired log-ratio spread
  // The last stage's noise asked for more than max_final_rounds, or its answer was still only
  // "not shown worse" there.
  bool rounds_capped = false;
  unsigned rounds_to_decide = 0;  // the last stage's judged rounds after its first look
  unsigned selection_rounds = 0;  // the last stage's rounds that chose its best (not judged)
  unsigned looks = 0, looks_planned = 0;  // the last stage's looks taken, and planned to its cap
  double look_alpha = 0;          // each look's one-sided error (kErrorRate / looks_planned)
  // Point ids: the finalists of earlier stages before their stage's best in the fixed order and
  // shown worse than it (Choice::shown_worse_before_best): why none of them is the answer.
  std::vector<std::string> shown_worse_in_earlier_stages;
};

// Phases 1 and 2: the coarse grid, then (refine) the neighbours of its best, each in screen_rounds
// interleaved rounds (repetitions 0..screen_rounds-1).
void screen(Session& session);
// Phase 3, from `finalist_trials` (select_finalists on the screening), its runs numbered from
// `first_repetition`.
FinalStages run_final_stages(Session& session, std::vector<std::size_t> finalist_trials, unsigned first_repetition);

// What the tune found.
struct TuneOutcome {
  Settings settings;
  std::vector<Trial> trials;         // every setting tried, in the order tried; some without runs
  std::vector<Candidate> screened;   // per trial, from its screening rounds (after the final)
  FinalStages final_stages;
  bool interrupted = false;

  // false: nothing may be recommended (every setting excluded, nothing measured, or no final
  // round), and nothing is reported.
  bool decided() const;
  std::size_t measured() const;  // settings with runs
  const Choice& choice() const { return final_stages.choice; }
  const std::vector<Candidate>& finalists() const { return final_stages.finalists; }
  // The last stage's judged rounds (those the answer was decided on).
  std::size_t rounds() const { return choice().ratio_to_best[choice().best].pairs; }
  std::string finalist_id(std::size_t f) const;
};

// The whole search: screen, then run_final_stages.
TuneOutcome search(const Settings& settings, Runner& runner);

// The report's derived parts, shared by the printed report and the results file's tune block.
struct Excluded {
  std::string id, reason;
};
std::vector<Excluded> excluded(const TuneOutcome& outcome);

// A rule of thumb (pool N, 2N or 2N+2 at concurrency N) that was measured: from the final when
// it was a finalist (a ratio with its CI), else from the screening (a point estimate against the
// screening's best, without a CI).
struct RuleOfThumb {
  std::string rule;  // "N", "2N", "2N+2"
  std::string id;
  unsigned pool_value = 0;
  Candidate candidate;            // as measured in the final or the screening
  std::optional<RatioCi> final;   // set when measured in the final
  double screening_ratio = 0;     // when not
  double ratio() const { return final ? final->estimate : screening_ratio; }
};
std::vector<RuleOfThumb> rules_of_thumb(const TuneOutcome& outcome);

// The final's CIs are too wide for the threshold (kNoisyCiFraction).
bool too_noisy(const TuneOutcome& outcome);

}  // namespace iocpbench::tune
