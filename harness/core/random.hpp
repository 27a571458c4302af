#pragma once
// The project's one pseudo-random generator: Marsaglia's xorshift64 (shifts 13, 7, 17). Cheap
// enough for the hot path (a worker's random file offsets) and deterministic from its seed (the
// data file's contents, so a created file is the same on every machine). Not for statistics:
// the sweep's shuffles use std::mt19937_64 with --seed.

#include <cstdint>

namespace iocpbench::core {

// Advances `state` (never 0: xorshift maps 0 to 0 forever) and returns the new value.
inline std::uint64_t xorshift64(std::uint64_t& state) noexcept {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

}  // namespace iocpbench::core
