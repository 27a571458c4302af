#include "tune/slo.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace iocpbench::tune {
namespace {

std::string trimmed(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c != ' ' && c != '\t') out += c;
  }
  return out;
}

std::optional<SloPercentile> percentile_named(const std::string& name) {
  if (name == "p50") return SloPercentile::kP50;
  if (name == "p90") return SloPercentile::kP90;
  if (name == "p99") return SloPercentile::kP99;
  if (name == "p99.9" || name == "p999") return SloPercentile::kP999;
  return std::nullopt;
}

// Microseconds per unit; 0 for a unit it does not know.
double unit_us(const std::string& unit) {
  if (unit == "ns") return 1e-3;
  if (unit == "us") return 1;
  if (unit == "ms") return 1e3;
  if (unit == "s") return 1e6;
  return 0;
}

// P(Binomial(n, 1/2) <= k).
double binomial_half_cdf(std::size_t n, std::size_t k) {
  double sum = 0;
  const double dn = static_cast<double>(n);
  for (std::size_t i = 0; i <= k && i <= n; ++i) {
    const double di = static_cast<double>(i);
    sum += std::exp(std::lgamma(dn + 1) - std::lgamma(di + 1) - std::lgamma(dn - di + 1) - dn * std::log(2.0));
  }
  return std::min(1.0, sum);
}

}  // namespace

const char* to_string(SloPercentile p) {
  switch (p) {
    case SloPercentile::kP50: return "p50";
    case SloPercentile::kP90: return "p90";
    case SloPercentile::kP99: return "p99";
    case SloPercentile::kP999: return "p99.9";
  }
  return "p99";
}

std::string Slo::text() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s<=%gus", to_string(percentile), limit_us);
  return buf;
}

std::optional<Slo> parse_slo(const std::string& raw, std::string& why) {
  const std::string text = trimmed(raw);
  const auto le = text.find("<=");
  if (le == std::string::npos) {
    why = "'" + raw + "' is not PERCENTILE<=LIMIT (for example p99<=5ms)";
    return std::nullopt;
  }
  const auto percentile = percentile_named(text.substr(0, le));
  if (!percentile) {
    why = "'" + text.substr(0, le) + "' is not a percentile the runs record (p50, p90, p99, p99.9)";
    return std::nullopt;
  }
  const std::string limit = text.substr(le + 2);
  double value = 0;
  const auto [end, ec] = std::from_chars(limit.data(), limit.data() + limit.size(), value);
  if (limit.empty() || ec != std::errc() || end == limit.data()) {
    why = "'" + raw + "' has no limit after <= (for example p99<=5ms)";
    return std::nullopt;
  }
  const std::string unit(end, limit.data() + limit.size());
  if (unit.empty()) {
    why = "'" + raw + "' has no unit (ns, us, ms or s)";
    return std::nullopt;
  }
  const double scale = unit_us(unit);
  if (scale == 0) {
    why = "'" + unit + "' is not a unit it knows (ns, us, ms, s)";
    return std::nullopt;
  }
  if (!(value > 0) || !std::isfinite(value)) {
    why = "the limit must be a positive time";
    return std::nullopt;
  }
  return Slo{*percentile, value * scale};
}

double percentile_us(const metrics::Percentiles& p, SloPercentile which) {
  switch (which) {
    case SloPercentile::kP50: return p.p50;
    case SloPercentile::kP90: return p.p90;
    case SloPercentile::kP99: return p.p99;
    case SloPercentile::kP999: return p.p999;
  }
  return p.p99;
}

bool lower_bound_at(const engine::LowerBounds& b, SloPercentile which) {
  switch (which) {
    case SloPercentile::kP50: return b.p50;
    case SloPercentile::kP90: return b.p90;
    case SloPercentile::kP99: return b.p99;
    case SloPercentile::kP999: return b.p999;
  }
  return b.p99;
}

unsigned median_upper_order(std::size_t n, double confidence) {
  // P(median <= X_(k)) = P(fewer than k of the n values fall below the median)
  //                    = P(Binomial(n, 1/2) <= k - 1).
  for (std::size_t k = 1; k <= n; ++k) {
    if (binomial_half_cdf(n, k - 1) >= confidence) return static_cast<unsigned>(k);
  }
  return 0;
}

PercentileBound median_upper_bound(std::vector<double> values_us, double confidence) {
  PercentileBound b;
  b.runs = values_us.size();
  if (values_us.empty()) return b;
  std::sort(values_us.begin(), values_us.end());
  const std::size_t n = values_us.size();
  b.median_us = n % 2 == 1 ? values_us[n / 2] : (values_us[n / 2 - 1] + values_us[n / 2]) / 2;
  b.order = median_upper_order(n, confidence);
  if (b.order > 0) b.upper_us = values_us[b.order - 1];
  return b;
}

bool shown_under(const PercentileBound& b, const Slo& slo) {
  return b.upper_us.has_value() && *b.upper_us < slo.limit_us;
}

SloChoice choose_slo(const std::vector<SloCandidate>& candidates, const Slo& slo) {
  SloChoice out;
  std::vector<std::size_t> order(candidates.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const SloCandidate& c = candidates[i];
    out.bounds.push_back(median_upper_bound(c.percentile_us));
    out.shown.push_back(!c.excluded && shown_under(out.bounds.back(), slo));
    const bool disturbed = c.generator_bound_runs + c.busy_runs > 0;
    out.undecided.push_back(!out.shown.back() && !c.excluded && disturbed &&
                            shown_under(median_upper_bound(c.best_case_us), slo));
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const SloCandidate& x = candidates[a];
    const SloCandidate& y = candidates[b];
    return x.pool_value != y.pool_value ? x.pool_value < y.pool_value : x.concurrency_value < y.concurrency_value;
  });
  for (std::size_t i : order) {
    if (out.shown[i]) {
      out.recommended = i;
      break;
    }
  }
  return out;
}

bool SloChoice::inconclusive() const {
  return !recommended && std::find(undecided.begin(), undecided.end(), true) != undecided.end();
}

void RateBracket::record(double rate_ops_per_s, bool shown) {
  if (shown) {
    lo_ops_per_s = std::max(lo_ops_per_s, rate_ops_per_s);
  } else {
    hi_ops_per_s = std::min(hi_ops_per_s, rate_ops_per_s);
  }
}

}  // namespace iocpbench::tune
