#pragma once
// The order of a sweep's runs: repetition rounds, each visiting every point in a fresh random
// order (seeded, recorded), so slow drift of the machine spreads over all points instead of
// biasing the ones that happened to run last. Runs already in the results file are skipped.

#include <cstdint>
#include <functional>
#include <vector>

namespace iocpbench::sweep {

struct RunSlot {
  std::size_t point = 0;
  unsigned repetition = 0;
};

// `done(point, repetition)` says a run is already recorded (resume).
std::vector<RunSlot> make_schedule(std::size_t points, unsigned repetitions, std::uint64_t seed,
                                   const std::function<bool(std::size_t, unsigned)>& done);

}  // namespace iocpbench::sweep
