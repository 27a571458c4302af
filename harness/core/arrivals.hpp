#pragma once
// Open-loop arrival times: when each request of an offered load is *intended* to start.
// Constant arrivals come every 1/R seconds; Poisson arrivals have exponential gaps of mean 1/R,
// drawn from xorshift64 (core/random.hpp) so that a seed gives the same schedule on every
// compiler (std::exponential_distribution's values are the library's own).
// Times accumulate in double nanoseconds and are rounded once per arrival, so a constant rate
// does not drift by the rounding of each gap.

#include <cstdint>
#include <optional>
#include <string_view>

namespace iocpbench::core {

enum class ArrivalProcess { constant, poisson };

inline constexpr ArrivalProcess kDefaultArrivals = ArrivalProcess::poisson;

const char* to_string(ArrivalProcess process);
std::optional<ArrivalProcess> parse_arrival_process(std::string_view text);

class ArrivalSchedule {
 public:
  // rate_per_s > 0; seed 0 is mapped to a fixed non-zero state (xorshift's 0 is a fixed point).
  ArrivalSchedule(double rate_per_s, ArrivalProcess process, std::uint64_t seed) noexcept;

  // The next arrival's offset from the schedule's start, in nanoseconds (non-decreasing).
  std::uint64_t next_ns() noexcept;
  double rate_per_s() const noexcept { return rate_per_s_; }

 private:
  double gap_ns() noexcept;

  double rate_per_s_;
  ArrivalProcess process_;
  std::uint64_t state_;
  double t_ns_ = 0;
};

}  // namespace iocpbench::core
