#include "sweep/schedule.hpp"

#include <algorithm>
#include <numeric>

namespace iocpbench::sweep {
namespace {

// One round: shuffles `order` in place and appends its slots not yet `done`. Shuffled even when
// all are skipped, so a resumed sweep draws the same orders as the first session.
void append_round(std::vector<std::size_t>& order, unsigned repetition, std::mt19937_64& rng,
                  const std::function<bool(std::size_t, unsigned)>& done, std::vector<RunSlot>& out) {
  std::shuffle(order.begin(), order.end(), rng);
  for (std::size_t p : order) {
    if (!done || !done(p, repetition)) out.push_back({p, repetition});
  }
}

}  // namespace

std::vector<RunSlot> make_schedule(std::size_t points, unsigned repetitions, std::uint64_t seed,
                                   const std::function<bool(std::size_t, unsigned)>& done) {
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> order(points);
  std::vector<RunSlot> schedule;
  for (unsigned r = 0; r < repetitions; ++r) {
    std::iota(order.begin(), order.end(), std::size_t{0});
    append_round(order, r, rng, done, schedule);
  }
  return schedule;
}

std::vector<RunSlot> RoundOrder::rounds(std::vector<std::size_t> points, unsigned rounds,
                                        unsigned first_repetition) {
  std::vector<RunSlot> out;
  out.reserve(points.size() * rounds);
  for (unsigned r = 0; r < rounds; ++r) append_round(points, first_repetition + r, rng_, nullptr, out);
  return out;
}

}  // namespace iocpbench::sweep
