#pragma once
// Context switches of the whole process so far (voluntary + involuntary, exited threads
// included), for the benchmarks' cs-per-completion counters. One file per OS; nothing where the
// OS cannot tell cheaply (the counter is then left out of the benchmark's output).

#include <cstdint>
#include <optional>

namespace iocpbench::bench {

std::optional<std::uint64_t> process_context_switches() noexcept;

}  // namespace iocpbench::bench
