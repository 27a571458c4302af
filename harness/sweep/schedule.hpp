#pragma once
// The order of runs in repetition rounds: each round visits every point in a fresh random order
// (seeded, recorded), so slow drift of the machine spreads over all points instead of biasing
// the ones that happened to run last. The sweep's schedule (make_schedule) skips runs already in
// the results file; the tuner's phases (RoundOrder) draw their rounds from one generator.

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace iocpbench::sweep {

struct RunSlot {
  std::size_t point = 0;
  unsigned repetition = 0;
};

// The sweep's: `repetitions` rounds over points 0..points-1, each round shuffling them from
// their index order. `done(point, repetition)` says a run is already recorded (resume).
std::vector<RunSlot> make_schedule(std::size_t points, unsigned repetitions, std::uint64_t seed,
                                   const std::function<bool(std::size_t, unsigned)>& done);

// The tuner's: phases over changing sets of points (the screening, its neighbours, each stage of
// the final), all drawn from one generator seeded once, so a seed gives one sequence of orders
// for the whole tune. Within a call each round shuffles the order of the round before (the first
// shuffles `points` as given), which is the order the tuner has always used for a seed.
class RoundOrder {
 public:
  explicit RoundOrder(std::uint64_t seed) : rng_(seed) {}
  // `rounds` rounds over `points`, repetitions numbered from `first_repetition`.
  std::vector<RunSlot> rounds(std::vector<std::size_t> points, unsigned rounds, unsigned first_repetition);

 private:
  std::mt19937_64 rng_;
};

}  // namespace iocpbench::sweep
