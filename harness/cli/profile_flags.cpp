#include "cli/profile_flags.hpp"

#include <charconv>

#include "cli/commands.hpp"
#include "cli/help_format.hpp"
#include "cli/option_help.hpp"

namespace iocpbench::cli {

void add_profile_flags(CLI::App& command, ProfileFlags& f) {
  add_text_option(command, "--blocking-profile", f.blocking_profile,
                  "the blocking ratio over time instead of --blocking: RATIO:SECONDS,... (repeats) "
                  "or with a last RATIO that holds (0.1:5,0.7); time 0 is the measured window's "
                  "start; needs --work-us > 0",
                  "SPEC", "");
  add_text_option(command, "--timeline-ms", f.timeline_ms,
                  "runs[].timeline's window for controlled pools and blocking profiles (10 to "
                  "10000 ms)",
                  "MS", "250");
  group_options(command, kGroupAdvanced, {"--blocking-profile", "--timeline-ms"});
}

std::optional<core::BlockingProfile> profile_from_flags(const ProfileFlags& f, bool blocking_given,
                                                        double work_us) {
  if (f.blocking_profile.empty()) return std::nullopt;
  std::string reason;
  auto profile = core::parse_blocking_profile(f.blocking_profile, &reason);
  if (!profile) throw BadInput{"--blocking-profile", reason};
  if (blocking_given) {
    throw BadInput{"--blocking-profile", "give it or --blocking, not both (the profile sets the ratio)"};
  }
  if (work_us <= 0) {
    throw BadInput{"--blocking-profile", "a profile's ratios need CPU work to be ratios of: give "
                                         "--work-us above 0"};
  }
  return profile;
}

unsigned timeline_ms_from_flags(const ProfileFlags& f) {
  if (f.timeline_ms.empty()) return 250;
  unsigned value = 0;
  const char* end = f.timeline_ms.data() + f.timeline_ms.size();
  const auto [ptr, ec] = std::from_chars(f.timeline_ms.data(), end, value);
  if (ec != std::errc() || ptr != end || value < 10 || value > 10000) {
    throw BadInput{"--timeline-ms", "'" + f.timeline_ms + "': must be a whole number of milliseconds from 10 to 10000"};
  }
  return value;
}

}  // namespace iocpbench::cli
