#include "sweep/schedule.hpp"

#include <algorithm>
#include <numeric>
#include <random>

namespace iocpbench::sweep {

std::vector<RunSlot> make_schedule(std::size_t points, unsigned repetitions, std::uint64_t seed,
                                   const std::function<bool(std::size_t, unsigned)>& done) {
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> order(points);
  std::vector<RunSlot> schedule;
  for (unsigned r = 0; r < repetitions; ++r) {
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::shuffle(order.begin(), order.end(), rng);  // shuffled even when skipped: same order on resume
    for (std::size_t p : order) {
      if (!done || !done(p, r)) schedule.push_back({p, r});
    }
  }
  return schedule;
}

}  // namespace iocpbench::sweep
