#pragma once

namespace iocpbench::cli {

// The exit statuses users and CI depend on (architecture.md, "The interface").
inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;
inline constexpr int kExitBadInput = 2;
// `tune --slo`: the runs completed, and no setting was shown to meet the SLO.
inline constexpr int kExitNoneShown = 3;
inline constexpr int kExitInterrupted = 130;

}  // namespace iocpbench::cli
