#pragma once

namespace iocpbench::cli {

// The exit statuses users and CI depend on (architecture.md, "The interface").
inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;
inline constexpr int kExitBadInput = 2;
// `tune --slo`: the runs completed, and no setting was shown to meet the SLO.
inline constexpr int kExitNoneShown = 3;
// `tune --slo`: no setting was shown to meet the SLO, but generator-bound or busy runs decided
// it for some: whether they meet it cannot be told (rerun on a quiet machine).
inline constexpr int kExitInconclusive = 4;
inline constexpr int kExitInterrupted = 130;

}  // namespace iocpbench::cli
