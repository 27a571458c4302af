#include "cli/tune_report.hpp"

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
  std::snprintf(text, sizeof(text),
                "%s: median %.0f ops/s, %.2f context switches per 1,000 completions, %.3fx the best [CI %.3f..%.3f]",
                setting_text(c).c_str(), s.median, c.context_switches_per_kop, ratio.estimate, ratio.low, ratio.high);
  return text;
}

const char* shown_line(tune::Shown shown) {
  switch (shown) {
    case tune::Shown::kWithin:
      return "shown within the threshold of the best: its ratio is shown above the indifference zone's lower edge";
    case tune::Shown::kBest:
      return "the best measured; every smaller finalist was shown worse";
    case tune::Shown::kNoEvidence:
      return "NO EVIDENCE: the best measured, but the final had too few rounds for a 90% CI, so nothing was "
             "shown about the smaller finalists";
    case tune::Shown::kNotShownWorse:
      break;
  }
  return "UNDECIDED at the last look (its CI still covers the whole indifference zone); taken because its "
         "estimate is at least the zone's middle";
}

double zone_upper(const tune::TuneOutcome& t) { return 1 - t.settings.threshold_pct / 100; }
double zone_lower(const tune::TuneOutcome& t) { return 1 - (t.settings.threshold_pct + t.settings.zone_pct) / 100; }

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
  const tune::FinalStages& f = t.final_stages;
  char zone_text[160];
  std::snprintf(zone_text, sizeof(zone_text), "indifference zone %.3f..%.3f, each look's CI %.2f%% one-sided",
                zone_lower(t), zone_upper(t), f.look_alpha * 100);
  out << "  final (" << zone_text << "; = within: the ratio's CI is above " << zone_lower(t)
      << "; @ inside the zone: either answer is right, the rule takes the smaller; ~ undecided; ? no CI; the best "
      << "chosen on " << f.selection_rounds << " selection rounds, the ratios on " << t.rounds()
      << " judged rounds, look " << f.looks << " of " << f.looks_planned << "; paired log-ratio spread "
      << spread_text << (f.rounds_capped ? "; CAPPED by --max-repetitions" : "") << "):\n";
}

// Two settings straddle the threshold: say so, with both ratios and which one the rule takes.
void print_at_threshold(std::ostream& out, const tune::TuneOutcome& t) {
  const tune::Choice& choice = t.choice();
  if (!choice.at_threshold) return;
  const tune::AtThreshold& a = *choice.at_threshold;
  out << "  AT THE THRESHOLD: the truth may sit at it, so two settings straddle it:\n"
      << "    " << describe(t.finalists()[a.smaller], choice.ratio_to_best[a.smaller]) << "\n"
      << "    " << describe(t.finalists()[a.larger], choice.ratio_to_best[a.larger]) << "\n"
      << "    the rule takes " << (a.picked_smaller ? "the smaller" : "the larger") << ": "
      << tune::at_threshold_reason(choice, a, t.settings.threshold_pct, t.settings.zone_pct) << "\n";
}

void print_finalists(std::ostream& out, const tune::TuneOutcome& t) {
  const tune::Choice& choice = t.choice();
  for (std::size_t f = 0; f < t.finalists().size(); ++f) {
    const tune::Verdict v = choice.verdicts[f];
    const char* mark = v == tune::Verdict::kBest || v == tune::Verdict::kWithin ? "= "
                       : v == tune::Verdict::kAtThreshold                       ? "@ "
                       : v == tune::Verdict::kUndecided                         ? "~ "
                       : v == tune::Verdict::kNoEvidence                        ? "? "
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
      std::snprintf(line, sizeof(line), "    pool %-5s (%u): %.3fx the best [CI %.3f..%.3f] (final)\n",
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
  print_at_threshold(out, outcome);
  print_noise_note(out, outcome);
  for (const tune::Excluded& e : tune::excluded(outcome)) out << "  excluded: " << e.id << ": " << e.reason << "\n";
  print_rules_of_thumb(out, outcome);
  out << "  queueing estimate N/(1-b) = "
      << tune::queueing_estimate(outcome.settings.logical_cpus, outcome.settings.grid.blocking.front())
      << " threads\n";
}

}  // namespace iocpbench::cli
