#include <sys/resource.h>

#include "context_switches.hpp"

namespace iocpbench::bench {

std::optional<std::uint64_t> process_context_switches() noexcept {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(usage.ru_nvcsw) + static_cast<std::uint64_t>(usage.ru_nivcsw);
}

}  // namespace iocpbench::bench
