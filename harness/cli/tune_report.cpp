#include "cli/tune_report.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "stats/statistics.hpp"

namespace iocpbench::cli {
namespace {

std::string setting_text(const tune::Candidate& c) {
  char text[96];
  std::snprintf(text, sizeof(text), "concurrency %s (%u), pool %s (%u)", c.concurrency.text.c_str(),
                c.concurrency_value, c.pool.text.c_str(), c.pool_value);
  return text;
}

std::string describe(const tune::Candidate& c, const tune::RatioCi& ratio) {
  const stats::Summary s = stats::summarize(c.throughput_by_round);
  char text[240];
  std::snprintf(text, sizeof(text), "%s: median %.0f ops/s, %.3fx the best [90%% CI %.3f..%.3f], %.2f cs/kop",
                setting_text(c).c_str(), s.median, ratio.estimate, ratio.low, ratio.high,
                c.context_switches_per_kop);
  return text;
}

const char* shown_line(tune::Shown shown) {
  switch (shown) {
    case tune::Shown::kWithin:
      return "shown within the threshold of the best";
    case tune::Shown::kBest:
      return "the best measured; every smaller finalist was shown worse";
    case tune::Shown::kNoEvidence:
      return "NO EVIDENCE: the best measured, but the final had too few rounds for a 90% CI, so nothing was "
             "shown about the smaller finalists";
    case tune::Shown::kNotShownWorse:
      break;
  }
  return "NOT SHOWN WORSE than the threshold, but not shown within it either: the final could not tell it from "
         "the best";
}

void print_decision(std::ostream& out, const tune::TuneOutcome& t) {
  const sweep::Grid& grid = t.settings.grid;
  const tune::Choice& choice = t.choice();
  const unsigned stages = t.final_stages.stages;
  out << "tune: " << to_string(grid.workloads.front()) << " workload, blocking " << grid.blocking.front() << " ("
      << to_string(grid.blocking_kind) << "), work " << grid.work_us << " us, N = " << t.settings.logical_cpus
      << "; screening " << t.measured() << " settings x " << t.settings.screen_rounds << " runs, final "
      << (stages > 1 ? "(stage " + std::to_string(stages) + ") " : "") << t.finalists().size() << " settings x "
      << t.rounds() << " interleaved rounds of " << grid.duration_s << " s"
      << (t.interrupted ? " (INTERRUPTED: partial evidence)" : "") << "\n";
  out << "  recommended:   " << describe(t.finalists()[choice.recommended], choice.ratio_to_best[choice.recommended])
      << "\n";
  out << "                 (" << shown_line(choice.shown) << ")\n";
  out << "  best measured: " << describe(t.finalists()[choice.best], choice.ratio_to_best[choice.best]) << "\n";
  char spread_text[32];
  std::snprintf(spread_text, sizeof(spread_text), "%.3f", t.final_stages.paired_sd);
  out << "  final (= shown within: the ratio's 90% CI is above " << 1 - t.settings.threshold_pct / 100
      << "; ~ not shown worse: its upper end reaches it; ? no CI, too few rounds; paired log-ratio spread "
      << spread_text << ", " << t.rounds() << " rounds"
      << (t.final_stages.rounds_to_decide > 0
              ? " (" + std::to_string(t.final_stages.rounds_to_decide) + " of them to decide a 'not shown worse')"
              : "")
      << (t.final_stages.rounds_capped ? ", CAPPED by --max-repetitions" : "") << "):\n";
}

bool contains(const std::vector<std::size_t>& list, std::size_t f) {
  return std::find(list.begin(), list.end(), f) != list.end();
}

void print_finalists(std::ostream& out, const tune::TuneOutcome& t) {
  const tune::Choice& choice = t.choice();
  for (std::size_t f = 0; f < t.finalists().size(); ++f) {
    const char* mark = contains(choice.indistinguishable, f) ? "= "
                       : contains(choice.not_shown_worse, f) ? "~ "
                       : contains(choice.no_evidence, f)     ? "? "
                                                             : "  ";
    const tune::Candidate& c = t.finalists()[f];
    out << "    " << mark << describe(c, choice.ratio_to_best[f]) << (c.excluded ? " EXCLUDED: " + *c.excluded : "")
        << "\n";
  }
}

void print_noise_note(std::ostream& out, const tune::TuneOutcome& t) {
  if (!tune::too_noisy(t)) return;
  char note[400];
  std::snprintf(note, sizeof(note),
                "  note: the final's 90%% CIs are +-%.1f%% wide (median), over half the %g%% threshold: at this "
                "noise the rule seldom shows a smaller setting equivalent to the best; the answer is the "
                "smallest not shown worse (docs/tuning.md); rerun when the machine is quieter\n",
                *t.choice().ci_half_width * 100, t.settings.threshold_pct);
  out << note;
}

void print_rules_of_thumb(std::ostream& out, const tune::TuneOutcome& t) {
  out << "  rules of thumb (concurrency N):\n";
  for (const tune::RuleOfThumb& rule : tune::rules_of_thumb(t)) {
    char line[240];
    if (rule.final) {
      std::snprintf(line, sizeof(line), "    pool %-5s (%u): %.3fx the best [90%% CI %.3f..%.3f] (final)\n",
                    rule.rule.c_str(), rule.pool_value, rule.final->estimate, rule.final->low, rule.final->high);
    } else {
      std::snprintf(line, sizeof(line), "    pool %-5s (%u): %.2fx the best (screening, no CI)\n", rule.rule.c_str(),
                    rule.pool_value, rule.screening_ratio);
    }
    out << line;
  }
}

}  // namespace

void print_tune_report(std::ostream& out, const tune::TuneOutcome& outcome) {
  print_decision(out, outcome);
  print_finalists(out, outcome);
  print_noise_note(out, outcome);
  for (const tune::Excluded& e : tune::excluded(outcome)) out << "  excluded: " << e.id << ": " << e.reason << "\n";
  print_rules_of_thumb(out, outcome);
  out << "  queueing estimate N/(1-b) = "
      << tune::queueing_estimate(outcome.settings.logical_cpus, outcome.settings.grid.blocking.front())
      << " threads\n";
}

}  // namespace iocpbench::cli
