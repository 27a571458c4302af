#include "cli/slo_report.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "stats/statistics.hpp"

namespace iocpbench::cli {
namespace {

std::string setting_text(const tune::SloSetting& s) {
  char text[96];
  std::snprintf(text, sizeof(text), "concurrency %s (%u), pool %s (%u)", s.base.concurrency.text.c_str(),
                s.base.concurrency_value, s.base.pool.fixed.text.c_str(), s.base.pool_value);
  return text;
}

// "median 812 us, bound 950 us (9th of 10 runs): shown under", with the flags of its runs.
std::string trial_text(const tune::SloTrial& t, const tune::Slo& slo) {
  const tune::SloCandidate c = t.candidate();
  const tune::PercentileBound b = tune::median_upper_bound(c.percentile_us);
  char text[320];
  if (b.upper_us) {
    std::snprintf(text, sizeof(text), "%s median %.0f us, upper bound %.0f us (%u of %zu runs): %s",
                  tune::to_string(slo.percentile), b.median_us, *b.upper_us, b.order, b.runs,
                  tune::shown_under(b, slo) ? "shown under" : "NOT shown under");
  } else {
    std::snprintf(text, sizeof(text), "%s median %.0f us from %zu runs: too few runs for a bound",
                  tune::to_string(slo.percentile), b.median_us, b.runs);
  }
  std::string line = text;
  if (c.over_capacity_runs > 0) {
    line += "; " + std::to_string(c.over_capacity_runs) + " run(s) over capacity (over any limit)";
  }
  if (c.generator_bound_runs > 0) line += "; " + std::to_string(c.generator_bound_runs) + " run(s) generator-bound";
  if (c.busy_runs > 0) line += "; " + std::to_string(c.busy_runs) + " run(s) on a busy machine";
  if (c.excluded) line += "; EXCLUDED: " + *c.excluded;
  return line;
}

void print_at_rate(std::ostream& out, const tune::SloOutcome& o) {
  const tune::Slo& slo = o.settings.slo;
  for (const tune::SloSetting& s : o.tried) {
    if (s.steps.empty()) continue;
    out << "  " << setting_text(s) << ": " << trial_text(s.steps.front(), slo) << "\n";
  }
}

void print_max_rate(std::ostream& out, const tune::SloOutcome& o) {
  const tune::Slo& slo = o.settings.slo;
  for (const tune::SloSetting& s : o.tried) {
    char text[200];
    std::snprintf(text, sizeof(text), "  %s: capacity %.0f/s, carries %.0f/s (not shown at %.0f/s)\n",
                  setting_text(s).c_str(), s.capacity_ops_per_s, s.carried_ops_per_s(), s.bracket.hi_ops_per_s);
    out << text;
    for (const tune::SloTrial& t : s.steps) {
      out << "      at " << static_cast<long long>(t.spec.open_loop.rate_ops_per_s) << "/s: " << trial_text(t, slo)
          << "\n";
    }
  }
}

// A generator-bound run's response times include the generator's own lag: a bound under the
// limit holds for the server all the more, one over it may be the generator's.
void print_generator_note(std::ostream& out, const tune::SloOutcome& o) {
  std::size_t trials = 0;
  for (const tune::SloSetting& s : o.tried) {
    for (const tune::SloTrial& t : s.steps) trials += t.candidate().generator_bound_runs > 0 ? 1 : 0;
  }
  if (trials == 0) return;
  out << "  note: " << trials << " of the settings' trials had generator-bound runs (the pacer lagged more "
      << "than 5% of the p99): their percentiles include the generator's lag, so 'shown under' holds for "
      << "the server too, while 'NOT shown under' may be the generator's (docs/open-loop.md)\n";
}

// What the recommendation costs, as the throughput tuner prints it: its trial's median context
// switches per 1,000 completions and requests served per second.
void print_cost(std::ostream& out, const tune::SloSetting& r) {
  if (r.steps.empty() || r.steps.back().runs.empty()) return;
  const tune::SloTrial& t = r.steps.back();
  std::vector<double> switches, served;
  for (const auto& run : t.runs) {
    switches.push_back(run.context_switches_per_kop);
    served.push_back(tune::requests_per_s(run));
  }
  char text[160];
  std::snprintf(text, sizeof(text), "  cost: %.0f context switches per 1,000 completions, %.0f requests/s "
                "served (medians of %zu runs)\n", stats::summarize(switches).median,
                stats::summarize(served).median, t.runs.size());
  out << text;
}

}  // namespace

void print_slo_report(std::ostream& out, const tune::SloOutcome& o) {
  const tune::SloSettings& s = o.settings;
  const std::string target = s.slo.text();
  std::string offered;
  if (s.max_rate) {
    offered = "the highest rate";
  } else if (s.open_loop.load > 0) {
    char load[64];
    std::snprintf(load, sizeof load, "load %g of each setting's capacity", s.open_loop.load);
    offered = load;
  } else {
    offered = std::to_string(static_cast<long long>(s.open_loop.rate_ops_per_s)) + " requests/s";
  }
  out << "tune --slo " << target << " at " << offered << " (" << to_string(s.grid.workloads.front())
      << ", b=" << s.grid.blocking.front() << ", " << s.rounds << " rounds)\n";
  if (o.recommended) {
    const tune::SloSetting& r = o.tried[*o.recommended];
    out << "  recommended: " << setting_text(r);
    if (s.max_rate) {
      out << ", carries " << static_cast<long long>(r.carried_ops_per_s()) << " requests/s with " << target;
    } else {
      out << ", the smallest shown to meet " << target;
    }
    out << "\n";
    print_cost(out, r);
  } else if (o.choice.inconclusive()) {
    std::size_t undecided = 0;
    for (bool u : o.choice.undecided) undecided += u ? 1 : 0;
    out << "  INCONCLUSIVE: no setting was shown to meet " << target << ", but " << undecided
        << " of them had generator-bound runs or ran on a busy machine,\n"
        << "  so whether they meet it cannot be told from these runs. Next: rerun on a quiet "
           "machine,\n  with the pacer at real-time priority (--pacer-priority realtime, which "
           "needs root or CAP_SYS_NICE on Linux)\n";
  } else {
    out << "  NO SETTING was shown to meet " << target
        << (s.max_rate ? " at any rate tried" : " at this rate")
        << ": its bound (the k-th smallest of the runs' values, 95% one-sided) is not under the limit\n";
  }
  out << "  rule: a percentile is shown under the limit when the 95% upper bound of its median over the runs "
         "is (docs/tuning.md, \"Tuning for a latency target\")\n";
  if (s.max_rate) {
    print_max_rate(out, o);
  } else {
    print_at_rate(out, o);
  }
  print_generator_note(out, o);
}

}  // namespace iocpbench::cli
