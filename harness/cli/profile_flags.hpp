#pragma once
// --blocking-profile and --timeline-ms (run, sweep): work whose blocking ratio changes over the
// run (core/blocking_profile.hpp), and the window of runs[].timeline. One value each.

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "core/blocking_profile.hpp"

namespace iocpbench::cli {

struct ProfileFlags {
  std::string blocking_profile;
  std::string timeline_ms;
};

void add_profile_flags(CLI::App& command, ProfileFlags& flags);

// The profile the flag gives, or none; BadInput naming --blocking-profile when it is malformed,
// when `blocking_given` (an explicit --blocking other than 0) or when work_us is 0.
std::optional<core::BlockingProfile> profile_from_flags(const ProfileFlags& flags,
                                                        bool blocking_given, double work_us);

// --timeline-ms: 10..10000 (250 when absent); BadInput naming the flag otherwise.
unsigned timeline_ms_from_flags(const ProfileFlags& flags);

}  // namespace iocpbench::cli
