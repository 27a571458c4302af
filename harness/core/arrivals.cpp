#include "core/arrivals.hpp"

#include <cmath>

#include "core/random.hpp"

namespace iocpbench::core {

const char* to_string(ArrivalProcess process) {
  return process == ArrivalProcess::constant ? "constant" : "poisson";
}

std::optional<ArrivalProcess> parse_arrival_process(std::string_view text) {
  if (text == "constant") return ArrivalProcess::constant;
  if (text == "poisson") return ArrivalProcess::poisson;
  return std::nullopt;
}

ArrivalSchedule::ArrivalSchedule(double rate_per_s, ArrivalProcess process,
                                 std::uint64_t seed) noexcept
    : rate_per_s_(rate_per_s), process_(process), state_(seed == 0 ? 0x9E3779B97F4A7C15ull : seed) {
  // A few rounds so that small neighbouring seeds (1, 2, 3) do not start alike.
  for (int i = 0; i < 8; ++i) xorshift64(state_);
}

double ArrivalSchedule::gap_ns() noexcept {
  const double mean_ns = 1e9 / rate_per_s_;
  if (process_ == ArrivalProcess::constant) return mean_ns;
  // U in (0, 1]: 53 random bits, never 0, so the logarithm is finite.
  const double u = static_cast<double>((xorshift64(state_) >> 11) + 1) * 0x1.0p-53;
  return -std::log(u) * mean_ns;
}

std::uint64_t ArrivalSchedule::next_ns() noexcept {
  t_ns_ += gap_ns();
  return static_cast<std::uint64_t>(std::llround(t_ns_));
}

}  // namespace iocpbench::core
