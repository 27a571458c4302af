// No cheap process-wide context-switch count on this OS (Windows sums per-thread counts from
// NtQuerySystemInformation: harness/metrics does that for runs; the benchmarks go without).
#include "context_switches.hpp"

namespace iocpbench::bench {

std::optional<std::uint64_t> process_context_switches() noexcept { return std::nullopt; }

}  // namespace iocpbench::bench
