#pragma once
// N-relative counts: "4", "N", "2N", "2N+2", "3N-1", and "0" where the caller allows it (the
// port default for a concurrency value). The spec text is kept beside its value on this machine
// so results from machines with different N line up.

#include <optional>
#include <string>
#include <string_view>

namespace iocpbench::core {

struct CountSpec {
  std::string text;  // normalised: "N", "2N", "2N+2", "4", "0"
  long multiplier = 0;  // a in aN+b (0 for a plain integer)
  long offset = 0;      // b

  // The value on a machine with `logical_cpus` CPUs; N-relative results are at least 1.
  unsigned resolve(unsigned logical_cpus) const;
  bool is_zero() const { return multiplier == 0 && offset == 0; }
};

// Parses one spec. `allow_zero` admits "0" (concurrency only). Returns the reason on failure.
std::optional<CountSpec> parse_count_spec(std::string_view text, bool allow_zero,
                                          std::string* reason);

}  // namespace iocpbench::core
