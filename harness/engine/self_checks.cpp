#include "engine/self_checks.hpp"

#include <algorithm>
#include <cmath>

#include "core/units.hpp"

namespace iocpbench::engine {

using core::fixed;

namespace {

// Walks both histograms' buckets together: the largest gap between their cumulative shares.
double two_sample_d(const metrics::Histogram& a, const metrics::Histogram& b) {
  std::vector<std::uint64_t> counts_a(metrics::Histogram::kBuckets), counts_b(metrics::Histogram::kBuckets);
  a.for_each_bucket([&](std::size_t i, std::uint64_t n) { counts_a[i] = n; });
  b.for_each_bucket([&](std::size_t i, std::uint64_t n) { counts_b[i] = n; });
  double seen_a = 0, seen_b = 0, d = 0;
  for (std::size_t i = 0; i < counts_a.size(); ++i) {
    seen_a += static_cast<double>(counts_a[i]);
    seen_b += static_cast<double>(counts_b[i]);
    d = std::max(d, std::abs(seen_a / static_cast<double>(a.count()) - seen_b / static_cast<double>(b.count())));
  }
  return d;
}

}  // namespace

SelfCheck check_arrivals(std::vector<std::uint64_t> gaps_ns, double rate_per_s,
                         core::ArrivalProcess process) {
  SelfCheck c;
  if (gaps_ns.size() < kMinCheckSample || !(rate_per_s > 0)) return c;
  c.judged = true;
  std::sort(gaps_ns.begin(), gaps_ns.end());
  const double n = static_cast<double>(gaps_ns.size());
  const double mean_gap_ns = 1e9 / rate_per_s;
  if (process == core::ArrivalProcess::constant) {
    const double median = static_cast<double>(gaps_ns[gaps_ns.size() / 2]);
    c.statistic = std::abs(median - mean_gap_ns) / mean_gap_ns;
    c.passed = c.statistic <= kConstantGapTolerance;
    if (!c.passed) {
      c.failed_because = "constant arrivals: the median gap between issues was " + fixed(median / 1e3, 1) +
                         " us against " + fixed(mean_gap_ns / 1e3, 1) + " us asked";
    }
    return c;
  }
  for (std::size_t i = 0; i < gaps_ns.size(); ++i) {
    const double f = 1 - std::exp(-static_cast<double>(gaps_ns[i]) / mean_gap_ns);
    c.statistic = std::max({c.statistic, static_cast<double>(i + 1) / n - f, f - static_cast<double>(i) / n});
  }
  const double critical = kKsCoefficient / std::sqrt(n);
  c.passed = c.statistic <= critical;
  if (!c.passed) {
    c.failed_because = "Poisson arrivals: the gaps between issues are not exponential of mean " +
                       fixed(mean_gap_ns / 1e3, 1) + " us (Kolmogorov-Smirnov D " + fixed(c.statistic, 3) +
                       " over " + fixed(critical, 3) + ", " + std::to_string(gaps_ns.size()) + " gaps)";
  }
  return c;
}

SelfCheck check_stationarity(const metrics::Histogram& first_half,
                             const metrics::Histogram& second_half) {
  SelfCheck c;
  if (first_half.count() < kMinCheckSample || second_half.count() < kMinCheckSample) return c;
  c.judged = true;
  c.statistic = two_sample_d(first_half, second_half);
  const double n1 = static_cast<double>(first_half.count()), n2 = static_cast<double>(second_half.count());
  const double critical = kKsCoefficient * std::sqrt((n1 + n2) / (n1 * n2));
  const double m1 = first_half.quantile(0.5), m2 = second_half.quantile(0.5);
  const double ratio = m1 > 0 && m2 > 0 ? std::max(m1 / m2, m2 / m1) : 1;
  c.passed = !(c.statistic > critical && ratio > kStationaryMedianRatio);
  if (!c.passed) {
    c.failed_because = "not stationary: the response time's median was " + fixed(m1 / 1e3, 1) +
                       " us in the window's first half and " + fixed(m2 / 1e3, 1) +
                       " us in its second (Kolmogorov-Smirnov D " + fixed(c.statistic, 3) + ")";
  }
  return c;
}

}  // namespace iocpbench::engine
