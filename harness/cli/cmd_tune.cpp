// `iocpbench tune`: which concurrency value and pool size should I use for this workload and
// blocking ratio? The flags and their checks; the search is tune/search (docs/tuning.md), the
// report cli/tune_report, the results file tune/tune_json.

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/help_format.hpp"
#include "cli/interrupt.hpp"
#include "cli/option_help.hpp"
#include "cli/sweep_flags.hpp"
#include "cli/slo_report.hpp"
#include "cli/tune_report.hpp"
#include "engine/capacity_memo.hpp"
#include "platform/platform.hpp"
#include "platform/file_lock.hpp"
#include "results/write.hpp"
#include "sweep/progress.hpp"
#include "tune/search.hpp"
#include "tune/slo_json.hpp"
#include "tune/slo_search.hpp"
#include "tune/tune_json.hpp"

namespace iocpbench::cli {
namespace {

struct TuneOptions {
  SweepFlags flags;
  std::string threshold, screen_repetitions, finalists, max_repetitions;
  std::string slo, rate, load;  // the latency tuner
  bool quiet = false, refine = false, max_rate = false, force = false;
};

void add_tune_options(CLI::App& command, TuneOptions& o) {
  add_sweep_flags(command, o.flags, PointCommand::tune, tune::tune_grid());
  // A tune's repetitions are rounds of its final phase.
  command.get_option("--repetitions")
      ->description("final-phase rounds of a stage, at least: runs of each finalist, interleaved; the first half "
                    "chooses the best and measures the noise, the rest are judged, and more are added when the "
                    "noise or an undecided answer asks, up to --max-repetitions");
  add_text_option(command, "--max-repetitions", o.max_repetitions,
                  "most final-phase rounds of a stage: the judgement looks after its first judged rounds, then "
                  "after twice as many each time, until the answer is decided; at this cap a still undecided "
                  "setting is decided by its estimate, and the output says CAPPED (at least --repetitions)",
                  "INT", std::to_string(tune::kDefaultMaxFinalRounds));
  add_text_option(command, "--threshold", o.threshold,
                  "percent of the best throughput a setting may lose and still count as within; a setting up to " +
                      number_text(tune::kDefaultZonePct) +
                      " points further below is in the indifference zone, where either answer is right and the "
                      "rule takes the smaller setting",
                  "FLOAT", number_text(tune::kDefaultThresholdPct));
  add_text_option(command, "--screen-repetitions", o.screen_repetitions,
                  "screening rounds: runs of each setting before the final", "INT",
                  std::to_string(tune::kDefaultScreenRounds));
  add_text_option(command, "--finalists", o.finalists,
                  "settings re-measured in the final phase, the screening's best included", "INT",
                  std::to_string(tune::kDefaultFinalists));
  command.add_flag("--refine", o.refine,
                   "also screen the neighbours of the coarse grid's best (pool +-1, +-2; concurrency +-1) and "
                   "let them be the answer: a finer answer, but one that can move between reruns, because "
                   "neighbouring settings near the best are a few percent apart (docs/tuning.md)");
  command.add_flag("--quiet", o.quiet, "no progress display");
  command.add_flag("--force", o.force, "let --json replace a results file that holds points");
  add_text_option(command, "--slo", o.slo,
                  "tune for a latency target instead of throughput: PERCENTILE<=LIMIT with a unit, e.g. p99<=5ms "
                  "(p50, p90, p99, p99.9; ns, us, ms, s), under open-loop arrivals at --rate or --load, or with "
                  "--max-rate; its rounds are --repetitions (default " +
                      std::to_string(tune::kDefaultSloRounds) + ")",
                  "SLO", "");
  add_text_option(command, "--rate", o.rate, "with --slo: the offered rate, requests per second", "FLOAT", "");
  add_text_option(command, "--load", o.load, "with --slo: the offered load, a fraction in (0, 1] of each setting's "
                  "closed-loop capacity (measured first in each run)", "FLOAT", "");
  command.add_flag("--max-rate", o.max_rate,
                   "with --slo: per setting, the highest rate whose percentile is shown under the limit "
                   "(bisection up to its closed-loop capacity); recommends the setting that carries the most");
  // The tuner's own flags in two groups of their own (help_format.hpp prints them after Common).
  for (const char* name : {"--threshold", "--screen-repetitions", "--finalists", "--max-repetitions", "--refine"}) {
    command.get_option(name)->group("The search");
  }
  for (const char* name : {"--slo", "--rate", "--load", "--max-rate"}) command.get_option(name)->group("Latency target");
  command.get_option("--force")->group(kGroupCommon);
  command.get_option("--quiet")->group(kGroupAdvanced);
  command.footer(
      "Durations take units (us, ms, s, m, h; a plain number is the flag's own unit).\n"
      "\n"
      "Examples:\n"
      "  iocpbench tune -w file -b 0.5             file reads, half of each blocked\n"
      "  iocpbench tune -w post -b 0.25 --work-us 50 -o tune.json\n"
      "  iocpbench tune -w socket -b 0 --slo 'p99<=2ms' --load 0.7\n"
      "  iocpbench tune -w post -b 0.5 --slo 'p99<=5ms' --max-rate");
}

// What the tuner runs, from the options and checked (BadInput naming the flag otherwise).
tune::Settings settings_from(const TuneOptions& o) {
  const SweepFlags& flags = o.flags;
  tune::Settings s;
  sweep::Grid& grid = s.grid;
  grid = grid_from_flags(flags, tune::tune_grid());
  if (grid.repetitions < tune::kMinFinalRounds) {
    throw BadInput{"--repetitions", "tune needs at least " + std::to_string(tune::kMinFinalRounds) +
                                        " final rounds (a 90% signed-rank CI needs 5 pairs)"};
  }
  if (flags.point.workload.empty()) throw BadInput{"--workload", "required: post, file or socket"};
  if (grid.workloads.size() != 1) throw BadInput{"--workload", "tune takes one workload"};
  if (grid.ports.size() != 1) throw BadInput{"--port", "tune takes one port backend"};
  if (grid.dispatch.size() != 1) throw BadInput{"--dispatch", "tune takes one dispatch model"};
  if (flags.point.blocking.empty()) throw BadInput{"--blocking", "required: the blocking ratio in [0,1)"};
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
  s.refine = o.refine;
  s.logical_cpus = platform::logical_cpus();
  return s;
}

// The latency tuner's settings (BadInput naming the flag otherwise); nullopt without --slo.
std::optional<tune::SloSettings> slo_settings_from(const TuneOptions& o) {
  const bool offered = !o.rate.empty() || !o.load.empty() || o.max_rate;
  if (o.slo.empty()) {
    if (!o.rate.empty()) throw BadInput{"--rate", "only with --slo (the throughput tuner runs the closed loop)"};
    if (!o.load.empty()) throw BadInput{"--load", "only with --slo (the throughput tuner runs the closed loop)"};
    if (o.max_rate) throw BadInput{"--max-rate", "only with --slo"};
    return std::nullopt;
  }
  std::string why;
  const std::optional<tune::Slo> slo = tune::parse_slo(o.slo, why);
  if (!slo) throw BadInput{"--slo", why};
  if (!offered) throw BadInput{"--slo", "needs the load it is for: --rate R, --load F or --max-rate"};
  if ((!o.rate.empty()) + (!o.load.empty()) + o.max_rate > 1) {
    throw BadInput{o.max_rate ? "--max-rate" : "--load", "give one of --rate, --load and --max-rate"};
  }
  tune::SloSettings s;
  s.slo = *slo;
  s.max_rate = o.max_rate;
  if (!o.rate.empty()) s.open_loop.rate_ops_per_s = parse_number_flag(o.rate, "--rate");
  if (!o.load.empty()) s.open_loop.load = parse_number_flag(o.load, "--load");
  if (!o.rate.empty() && !(s.open_loop.rate_ops_per_s > 0)) throw BadInput{"--rate", "must be a positive number"};
  if (!o.load.empty() && !(s.open_loop.load > 0)) throw BadInput{"--load", "must be a fraction in (0, 1]"};
  const std::pair<const char*, const std::string*> throughput_only[] = {
      {"--threshold", &o.threshold}, {"--screen-repetitions", &o.screen_repetitions},
      {"--finalists", &o.finalists}, {"--max-repetitions", &o.max_repetitions}};
  for (const auto& [flag, text] : throughput_only) {
    if (!text->empty()) throw BadInput{flag, "not with --slo (the throughput tuner's)"};
  }
  if (o.refine) throw BadInput{"--refine", "not with --slo"};
  return s;
}

// The tuner's runs: real points, a progress display per batch of rounds on stderr, and the
// interrupt handlers (installed when the search starts, as the sweep's are).
class ProgressRunner final : public tune::Runner {
 public:
  explicit ProgressRunner(bool quiet) : quiet_(quiet), stop_(install_interrupt_handlers()) {}

  void batch_begins(std::size_t runs) override { progress_.emplace(runs, quiet_); }
  void batch_ends() override { progress_->done(); }
  std::optional<engine::RunResult> run_once(const engine::PointSpec& spec, unsigned repetition,
                                         const std::string& label) override {
    progress_->starting(label);
    const std::string id = sweep::point_id(spec);
    engine::RunResult result = engine::run_point(capacities_.with_known(spec, id), &stop_, repetition);
    capacities_.note(id, result);
    if (result.interrupted || stop_.load()) return std::nullopt;
    progress_->finished_one();
    note_machine_load(result, label);
    return result;
  }
  void note(const std::string& line) override { std::cout << line << "\n"; }

  // One line naming the settings measured on a busy machine (engine/machine_load.hpp), or
  // nothing: their runs may be low, and a comparison of settings with them is suspect.
  std::optional<std::string> busy_warning() const {
    if (busy_runs_ == 0) return std::nullopt;
    std::string names;
    for (const auto& name : busy_settings_) names += (names.empty() ? "" : ", ") + name;
    return "the machine was busy during " + std::to_string(busy_runs_) + " of " + std::to_string(runs_) +
           " runs (" + busiest_reason_ + "); numbers may be low; settings with a busy run: " + names;
  }

 private:
  engine::CapacityMemo capacities_;  // --load: each setting's capacity, found by its first run

  void note_machine_load(const engine::RunResult& result, const std::string& label) {
    ++runs_;
    if (!result.machine_load.busy) return;
    ++busy_runs_;
    if (busiest_reason_.empty() && !result.machine_load.reasons.empty()) busiest_reason_ = result.machine_load.reasons.front();
    const std::string setting = label.substr(0, label.find(' '));  // "ID phase round"
    if (std::find(busy_settings_.begin(), busy_settings_.end(), setting) == busy_settings_.end()) {
      busy_settings_.push_back(setting);
    }
  }

  std::size_t runs_ = 0, busy_runs_ = 0;
  std::string busiest_reason_;
  std::vector<std::string> busy_settings_;
  bool quiet_;
  const std::atomic<bool>& stop_;
  std::optional<sweep::Progress> progress_;
};

// --json's file, locked until the command returns (no other writer meanwhile); one that holds
// results points is refused, before any run, unless --force.
platform::FileLock lock_json(const TuneOptions& o) {
  if (o.flags.json.empty()) return platform::FileLock();
  platform::FileLock lock = lock_output_file(o.flags.json, "--json");
  if (!o.force) refuse_replacing_results(o.flags.json, "--json", "--force replaces it, or choose another file");
  return lock;
}

int slo_command(const TuneOptions& o, tune::SloSettings slo) {
  TuneOptions base = o;
  if (o.flags.point.repetitions.empty()) base.flags.point.repetitions = std::to_string(tune::kDefaultSloRounds);
  const unsigned rounds = parse_count_flag(base.flags.point.repetitions, "--repetitions", 1);
  if (rounds < tune::kMinSloRounds) {
    throw BadInput{"--repetitions", "tune --slo needs at least " + std::to_string(tune::kMinSloRounds) +
                                        " rounds (a 95% bound on a median needs 5 runs)"};
  }
  if (rounds > 1000) throw BadInput{"--repetitions", "more than 1000"};
  base.flags.point.repetitions = std::to_string(std::max(rounds, tune::kMinFinalRounds));  // settings_from's own minimum
  const tune::Settings s = settings_from(base);
  slo.grid = s.grid;
  slo.grid.repetitions = rounds;
  slo.rounds = rounds;
  slo.logical_cpus = s.logical_cpus;
  slo.open_loop.seed = s.grid.seed;
  // The open loop's own checks (dispatch, metrics, rates), before any run or file.
  engine::PointSpec probe = sweep::expand(slo.grid, slo.logical_cpus).front();
  probe.open_loop = slo.open_loop;
  if (slo.max_rate) probe.open_loop.rate_ops_per_s = 1000;
  engine::validate_point(probe);
  const platform::FileLock json_lock = lock_json(o);
  ProgressRunner runner(o.quiet);
  const tune::SloOutcome outcome = tune::slo_search(slo, runner);
  print_slo_report(std::cout, outcome);
  if (const auto busy = runner.busy_warning()) std::cerr << "iocpbench: warning: " << *busy << '\n';
  if (!o.flags.json.empty()) {
    results::write_file(o.flags.json, tune::slo_document(outcome));
    std::cout << "  evidence: " << o.flags.json << "\n";
  }
  if (outcome.interrupted) return kExitInterrupted;
  if (outcome.recommended) return kExitOk;
  return outcome.choice.inconclusive() ? kExitInconclusive : kExitNoneShown;
}

int tune_command(const TuneOptions& o) {
  if (auto slo = slo_settings_from(o)) return slo_command(o, std::move(*slo));
  const tune::Settings s = settings_from(o);
  const platform::FileLock json_lock = lock_json(o);
  ProgressRunner runner(o.quiet);
  const tune::TuneOutcome outcome = tune::search(s, runner);
  if (const auto busy = runner.busy_warning()) std::cerr << "iocpbench: warning: " << *busy << '\n';
  if (!outcome.decided()) {
    std::cerr << "iocpbench: tune "
              << (outcome.interrupted ? "interrupted before the final phase" : "found no setting it may recommend")
              << "\n";
    return outcome.interrupted ? kExitInterrupted : kExitRunFailed;
  }
  print_tune_report(std::cout, outcome);
  if (!o.flags.json.empty()) {
    results::write_file(o.flags.json, tune::tune_document(outcome));
    std::cout << "  evidence: " << outcome.measured() << " settings in " << o.flags.json << "\n";
  }
  return outcome.interrupted ? kExitInterrupted : kExitOk;
}

}  // namespace

CommandBody add_tune_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "tune",
      "Recommend a concurrency value and pool size for one workload and blocking ratio: a "
      "screening of concurrency 1, N, 2N x pool N, 2N, 2N+2, 4N (with --refine, also of the "
      "neighbours of its best), then a final phase that re-measures the best and the smallest "
      "plausible settings together in interleaved rounds, more of them while the answer is "
      "undecided. The recommendation is the first setting, smallest pool then smallest concurrency, "
      "shown within the threshold of the best: its ratio to the best, from runs paired by round, is "
      "judged against an indifference zone (0.93..0.95 at the default 5%) at group-sequential looks; "
      "inside the zone it takes the smaller setting and says AT THE THRESHOLD (docs/tuning.md). With --slo p99<=X and --rate, --load or --max-rate it "
      "tunes for a latency target under open-loop arrivals instead (exit 3 when no setting was shown to meet it, 4 when generator-bound or busy runs leave that undecided: INCONCLUSIVE).");
  auto options = std::make_shared<TuneOptions>();
  add_tune_options(*command, *options);
  return [options]() { return tune_command(*options); };
}

}  // namespace iocpbench::cli
