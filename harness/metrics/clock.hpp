#pragma once
// The one clock of a run: steady_clock in nanoseconds since its epoch. Each read costs about
// 34 ns here, so the hot path reads it at most twice per completion (see workloads/README.md).

#include <chrono>
#include <cstdint>

namespace iocpbench::metrics {

inline std::uint64_t now_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

}  // namespace iocpbench::metrics
