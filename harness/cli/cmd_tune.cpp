// `iocpbench tune`: which concurrency value and pool size should I use for this workload and
// blocking ratio? A coarse search, a refinement around the best, and a recommendation with its
// evidence, beside the rules of thumb and the queueing estimate.

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>
#include <set>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/interrupt.hpp"
#include "cli/sweep_flags.hpp"
#include "platform/platform.hpp"
#include "report/file_lock.hpp"
#include "report/json_file.hpp"
#include "report/progress.hpp"
#include "sweep/grid.hpp"
#include "sweep/summary_json.hpp"
#include "sweep/sweep_runner.hpp"
#include "tune/recommend.hpp"

namespace iocpbench::cli {
namespace {

struct Trial {
  run::PointSpec spec;
  std::vector<run::RunResult> runs;
};

sweep::CountSpec spec_of(const char* text) { return *sweep::parse_count_spec(text, true, nullptr); }

tune::Candidate candidate_of(const Trial& trial, unsigned logical_cpus) {
  tune::Candidate c;
  c.concurrency = trial.spec.concurrency;
  c.concurrency_value = trial.spec.concurrency_value == 0 ? logical_cpus : trial.spec.concurrency_value;
  c.pool = trial.spec.pool.fixed;  // the tuner tries fixed pools only
  c.pool_value = trial.spec.pool_value;
  std::vector<double> throughput, switches;
  for (const auto& r : trial.runs) {
    throughput.push_back(r.throughput_ops_per_s);
    switches.push_back(r.context_switches_per_kop);
  }
  c.throughput = sweep::summarize(throughput);
  c.context_switches_per_kop = sweep::summarize(switches).median;
  return c;
}

std::string describe(const tune::Candidate& c) {
  char text[160];
  std::snprintf(text, sizeof(text), "concurrency %s (%u), pool %s (%u): %.0f ops/s [95%% CI %.0f..%.0f], %.2f cs/kop",
                c.concurrency.text.c_str(), c.concurrency_value, c.pool.text.c_str(), c.pool_value,
                c.throughput.median, c.throughput.ci95_low, c.throughput.ci95_high,
                c.context_switches_per_kop);
  return text;
}

nlohmann::json candidate_json(const tune::Candidate& c, const std::string& id) {
  return {{"id", id},
          {"concurrency", {{"spec", c.concurrency.text}, {"value", c.concurrency_value}}},
          {"pool", {{"spec", c.pool.text}, {"value", c.pool_value}}},
          {"throughput_ops_per_s", sweep::to_json(c.throughput)},
          {"context_switches_per_kop", c.context_switches_per_kop}};
}

}  // namespace

CommandBody add_tune_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "tune",
      "Recommend a concurrency value and pool size for one workload and blocking ratio: a coarse "
      "search (concurrency 1, N, 2N x pool N, 2N, 2N+2, 4N), a refinement around the best, then "
      "the smallest pool and concurrency whose throughput is indistinguishable from the best "
      "(within --threshold percent and overlapping 95% CIs), ties broken by fewer context "
      "switches per completion.");
  struct Options {
    SweepFlags flags;
    std::string threshold = "5";
    bool quiet = false;
  };
  auto options = std::make_shared<Options>();
  add_sweep_flags(*command, options->flags, /*for_tune=*/true);
  command->add_option("--threshold", options->threshold,
                      "percent of the best throughput a setting may lose and still count as "
                      "indistinguishable (default 5)");
  command->add_flag("--quiet", options->quiet, "no progress display");

  return [options]() {
    SweepFlags& flags = options->flags;
    sweep::Grid grid = grid_from_flags(flags, false);
    if (flags.repetitions.empty()) grid.repetitions = 3;
    if (flags.duration.empty()) grid.duration_s = 0.5;
    if (flags.warmup.empty()) grid.warmup_s = 0.1;
    if (flags.workload.empty()) throw BadInput{"--workload", "required: post, file or socket"};
    if (grid.workloads.size() != 1) throw BadInput{"--workload", "tune takes one workload"};
    if (grid.ports.size() != 1) throw BadInput{"--port", "tune takes one port backend"};
    if (grid.dispatch.size() != 1) throw BadInput{"--dispatch", "tune takes one dispatch model"};
    if (flags.blocking.empty()) throw BadInput{"--blocking", "required: the blocking ratio in [0,1)"};
    if (grid.blocking.size() != 1) throw BadInput{"--blocking", "tune takes one blocking ratio"};
    const double threshold = parse_number_flag(options->threshold, "--threshold");
    if (threshold < 0 || threshold >= 100) throw BadInput{"--threshold", "must be in [0, 100)"};
    report::FileLock json_lock;  // held until the command returns: no other writer meanwhile
    if (!flags.json.empty()) {
      if (auto problem = report::output_path_problem(flags.json)) throw BadInput{"--json", *problem};
      std::string busy;
      json_lock = report::lock_results_file(flags.json, busy);
      if (!json_lock.held()) throw BadInput{"--json", busy};
    }
    const unsigned n = platform::logical_cpus();

    // The coarse grid, one point per distinct (concurrency, pool) value on this machine.
    grid.concurrency = {spec_of("1"), spec_of("N"), spec_of("2N")};
    grid.pool = {spec_of("N"), spec_of("2N"), spec_of("2N+2"), spec_of("4N")};
    sweep::validate_grid(grid);
    std::vector<Trial> trials;
    std::set<std::pair<unsigned, unsigned>> tried;
    auto add_trial = [&](run::PointSpec spec) {
      const unsigned c = spec.concurrency_value == 0 ? n : spec.concurrency_value;
      if (tried.insert({c, spec.pool_value}).second) trials.push_back({std::move(spec), {}});
    };
    for (auto& spec : sweep::expand(grid, n)) add_trial(std::move(spec));

    const auto& stop = install_interrupt_handlers();
    std::mt19937_64 rng(grid.seed);
    bool interrupted = false;
    auto measure = [&](std::size_t first) {
      report::Progress progress((trials.size() - first) * grid.repetitions, options->quiet);
      std::vector<std::size_t> order(trials.size() - first);
      for (unsigned r = 0; r < grid.repetitions && !interrupted; ++r) {
        std::iota(order.begin(), order.end(), first);
        std::shuffle(order.begin(), order.end(), rng);
        for (std::size_t i : order) {
          progress.starting(sweep::point_id(trials[i].spec) + " rep " + std::to_string(r));
          run::RunResult result = run::run_point(trials[i].spec, &stop, r);
          if (result.interrupted || stop.load()) {
            interrupted = true;
            break;
          }
          trials[i].runs.push_back(std::move(result));
          progress.finished_one();
        }
      }
      progress.done();
    };
    measure(0);

    auto choose = [&] {
      std::vector<tune::Candidate> candidates;
      for (const auto& t : trials) candidates.push_back(candidate_of(t, n));
      return std::make_pair(candidates, tune::recommend(candidates, threshold));
    };
    if (!interrupted) {  // refine around the best: neighbouring pool sizes and concurrency values
      const auto [candidates, choice] = choose();
      const tune::Candidate& best = candidates[choice.best];
      const std::size_t before = trials.size();
      run::PointSpec base = trials[choice.best].spec;
      for (const int dp : {-2, -1, 1, 2}) {
        const long p = static_cast<long>(best.pool_value) + dp;
        if (p < 1) continue;
        run::PointSpec spec = base;
        spec.pool = spec_of(std::to_string(p).c_str());
        spec.pool_value = static_cast<unsigned>(p);
        add_trial(spec);
      }
      for (const int dc : {-1, 1}) {
        const long c = static_cast<long>(best.concurrency_value) + dc;
        if (c < 1 || base.dispatch == "per-thread") continue;  // per-thread: always 1 per port
        run::PointSpec spec = base;
        spec.concurrency = spec_of(std::to_string(c).c_str());
        spec.concurrency_value = static_cast<unsigned>(c);
        add_trial(spec);
      }
      if (trials.size() > before) measure(before);
    }

    // Drop trials that an interruption left without runs.
    std::erase_if(trials, [](const Trial& t) { return t.runs.empty(); });
    if (trials.empty()) {
      std::cerr << "iocpbench: tune interrupted before any run finished\n";
      return kExitInterrupted;
    }
    const auto [candidates, choice] = choose();
    const double b = grid.blocking.front();
    const tune::Candidate& rec = candidates[choice.recommended];
    const tune::Candidate& best = candidates[choice.best];

    nlohmann::json points = nlohmann::json::array();
    nlohmann::json evidence = nlohmann::json::array();
    for (const auto& t : trials) {
      nlohmann::json point = run::point_to_json(t.spec, t.runs);
      point["id"] = sweep::point_id(t.spec);
      evidence.push_back(point["id"]);
      points.push_back(std::move(point));
    }
    nlohmann::json rules = nlohmann::json::array();
    std::cout << "tune: " << grid.workloads.front() << " workload, blocking " << b << " ("
              << grid.blocking_kind << "), work " << grid.work_us << " us, N = " << n << ", "
              << grid.repetitions << " runs of " << grid.duration_s << " s per setting"
              << (interrupted ? " (INTERRUPTED: partial evidence)" : "") << "\n";
    std::cout << "  recommended:   " << describe(rec) << "\n";
    std::cout << "  best measured: " << describe(best) << "\n";
    std::cout << "  " << choice.indistinguishable.size() << " of " << candidates.size()
              << " settings are within " << threshold << "% of the best\n";
    std::cout << "  rules of thumb (concurrency N):\n";
    for (const char* rule : {"N", "2N", "2N+2"}) {
      const unsigned pool_value = spec_of(rule).resolve(n);
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        const auto& c = candidates[i];
        if (c.concurrency_value != n || c.pool_value != pool_value) continue;
        const double ratio = best.throughput.median > 0 ? c.throughput.median / best.throughput.median : 0;
        char line[200];
        std::snprintf(line, sizeof(line), "    pool %-5s (%u): %.0f ops/s, %.2fx the best, %.2f cs/kop\n",
                      rule, pool_value, c.throughput.median, ratio, c.context_switches_per_kop);
        std::cout << line;
        rules.push_back({{"rule", std::string("pool ") + rule},
                         {"point", candidate_json(c, sweep::point_id(trials[i].spec))},
                         {"ratio_to_best", ratio}});
        break;
      }
    }
    const unsigned estimate = tune::queueing_estimate(n, b);
    std::cout << "  queueing estimate N/(1-b) = " << estimate << " threads\n";

    if (!flags.json.empty()) {
      nlohmann::json sweep_block = sweep::grid_to_json(grid);
      sweep_block["mode"] = "tune";
      sweep_block["complete"] = !interrupted;
      nlohmann::json doc = run::results_document(sweep_block, points);
      doc["tune"] = {
          {"workload", grid.workloads.front()},
          {"blocking", b},
          {"blocking_kind", grid.blocking_kind},
          {"work_us", grid.work_us},
          {"threshold_pct", threshold},
          {"recommendation", candidate_json(rec, sweep::point_id(trials[choice.recommended].spec))},
          {"best", candidate_json(best, sweep::point_id(trials[choice.best].spec))},
          {"indistinguishable", nlohmann::json::array()},
          {"rules_of_thumb", rules},
          {"queueing_estimate", {{"formula", "N/(1-b)"}, {"value", estimate}}},
          {"evidence", evidence},
      };
      for (std::size_t i : choice.indistinguishable) {
        doc["tune"]["indistinguishable"].push_back(sweep::point_id(trials[i].spec));
      }
      report::write_json_atomically(flags.json, doc);
      std::cout << "  evidence: " << trials.size() << " settings in " << flags.json << "\n";
    }
    return interrupted ? kExitInterrupted : kExitOk;
  };
}

}  // namespace iocpbench::cli
