#pragma once
// The tuner's choice, as a pure function of the measured candidates: the smallest pool, then the
// smallest concurrency value, whose throughput is indistinguishable from the best, ties broken
// by fewer context switches per completion.
//
// "Indistinguishable" is decided two ways at once: the candidate's median throughput is within
// `threshold_pct` of the best median, and the candidate's 95% CI reaches the best's CI (a
// candidate that is consistently lower, even by less than the threshold, is not chosen).

#include <string>
#include <vector>

#include "sweep/count_spec.hpp"
#include "sweep/statistics.hpp"

namespace iocpbench::tune {

struct Candidate {
  sweep::CountSpec concurrency;
  unsigned concurrency_value = 0;  // as the port resolves it (0 = N)
  sweep::CountSpec pool;
  unsigned pool_value = 0;
  sweep::Summary throughput;             // ops/s over the runs
  double context_switches_per_kop = 0;   // median
};

struct Choice {
  std::size_t recommended = 0;
  std::size_t best = 0;  // the highest median throughput
  std::vector<std::size_t> indistinguishable;  // candidates within the threshold of the best
};

// Candidates must be non-empty.
Choice recommend(const std::vector<Candidate>& candidates, double threshold_pct);

// The queueing estimate of the pool size for blocking ratio b: N/(1-b), rounded up.
unsigned queueing_estimate(unsigned logical_cpus, double blocking_ratio);

}  // namespace iocpbench::tune
