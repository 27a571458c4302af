#pragma once
// An open-loop run's checks on itself, as Lancet makes them: did the generator produce the
// arrival process asked for, and was the run's latency stationary over its window? A run that
// fails either is flagged with the reason (runs[].open_loop.self_checks), never silently kept.
// Pure functions on what the run recorded; tests/engine/request_ledger_test.cpp drives them
// with seeded samples.

#include <cstdint>
#include <string>
#include <vector>

#include "core/arrivals.hpp"
#include "metrics/histogram.hpp"

namespace iocpbench::engine {

struct SelfCheck {
  bool judged = false;  // enough data to test
  bool passed = true;   // unjudged counts as passed
  double statistic = 0; // the test's statistic (a Kolmogorov-Smirnov D, or a share)
  std::string failed_because;  // empty when passed
};

// The fewest gaps or requests a check judges; the most gaps a run keeps for it.
inline constexpr std::size_t kMinCheckSample = 50;
inline constexpr std::size_t kMaxArrivalGaps = 5000;
// The Kolmogorov-Smirnov critical coefficient at alpha = 0.001 (c = sqrt(-ln(alpha/2)/2)): a
// sound run fails a check about once in a thousand.
inline constexpr double kKsCoefficient = 1.949;
// Constant arrivals: the median gap may be off the asked gap by this share.
inline constexpr double kConstantGapTolerance = 0.10;
// Stationarity: the halves' medians may differ by this factor before a KS rejection counts (a
// run's requests are not independent, so the test alone would reject small drifts).
inline constexpr double kStationaryMedianRatio = 1.5;

// The gaps between consecutive issues of arrivals that found a slot on time, against the
// process asked for: Poisson (exponential gaps of mean 1/rate: a one-sample KS test) or
// constant (the median gap within kConstantGapTolerance of 1/rate).
SelfCheck check_arrivals(std::vector<std::uint64_t> gaps_ns, double rate_per_s,
                         core::ArrivalProcess process);

// The response times of the window's first half against its second (by intended time): a
// two-sample KS test on the histograms, failed only when it rejects and the medians differ by
// more than kStationaryMedianRatio.
SelfCheck check_stationarity(const metrics::Histogram& first_half,
                             const metrics::Histogram& second_half);

}  // namespace iocpbench::engine
