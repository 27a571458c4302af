#pragma once
// The structural keys of schema v1, spelled once: results/write.cpp writes them and
// results/read.cpp reads them. (The keys inside a run's measured blocks are spelled where the
// record is built, results/run_record.cpp; iocpbench_analysis/ and
// results/schema/results.schema.json read the same names.)

namespace iocpbench::results::key {

// The document.
inline constexpr const char* kSchemaVersion = "schema_version";
inline constexpr const char* kTool = "tool";
inline constexpr const char* kMachine = "machine";
inline constexpr const char* kSweep = "sweep";
inline constexpr const char* kPoints = "points";
inline constexpr const char* kTune = "tune";

// The machine block's own keys beside platform::MachineInfo's.
inline constexpr const char* kBackend = "backend";
inline constexpr const char* kProbe = "probe";

// The sweep block's session keys.
inline constexpr const char* kCommand = "command";
inline constexpr const char* kMode = "mode";
inline constexpr const char* kStarted = "started";
inline constexpr const char* kFinished = "finished";
inline constexpr const char* kComplete = "complete";
inline constexpr const char* kSchedule = "schedule";

// A point.
inline constexpr const char* kId = "id";
inline constexpr const char* kRuns = "runs";
inline constexpr const char* kSummary = "summary";
inline constexpr const char* kBlockingFidelity = "blocking_fidelity";
inline constexpr const char* kFailures = "failures";
inline constexpr const char* kPeerCommands = "peer_commands";
// The spec keys of a point, in the order point_result() writes them.
inline constexpr const char* kSpecKeys[] = {
    "workload", "workload_params", "port", "dispatch", "metrics", "concurrency", "pool",
    "blocking", "work_us", "working_set_kib", "open_loop", "duration_s", "warmup_s",
    "dequeue_batch", "skip_on_success", "affinity"};

// A run, and a failed run.
inline constexpr const char* kRepetition = "repetition";
inline constexpr const char* kHandlerTime = "handler_time";
inline constexpr const char* kHonoured = "honoured";
inline constexpr const char* kNotHonouredBecause = "not_honoured_because";
inline constexpr const char* kError = "error";

}  // namespace iocpbench::results::key
