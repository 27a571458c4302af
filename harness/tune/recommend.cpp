#include "tune/recommend.hpp"

#include <cmath>
#include <tuple>

namespace iocpbench::tune {

Choice recommend(const std::vector<Candidate>& candidates, double threshold_pct) {
  Choice choice;
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    if (candidates[i].throughput.median > candidates[choice.best].throughput.median) choice.best = i;
  }
  const Candidate& best = candidates[choice.best];
  const double floor = best.throughput.median * (1 - threshold_pct / 100);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    const bool close = c.throughput.median >= floor;
    const bool overlaps = c.throughput.ci95_high >= best.throughput.ci95_low;
    if (i == choice.best || (close && overlaps)) choice.indistinguishable.push_back(i);
  }
  auto key = [&](std::size_t i) {
    const Candidate& c = candidates[i];
    return std::make_tuple(c.pool_value, c.concurrency_value, c.context_switches_per_kop);
  };
  choice.recommended = choice.indistinguishable.front();
  for (std::size_t i : choice.indistinguishable) {
    if (key(i) < key(choice.recommended)) choice.recommended = i;
  }
  return choice;
}

unsigned queueing_estimate(unsigned logical_cpus, double blocking_ratio) {
  return static_cast<unsigned>(std::ceil(static_cast<double>(logical_cpus) / (1 - blocking_ratio) - 1e-9));
}

}  // namespace iocpbench::tune
