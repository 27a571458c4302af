#pragma once
// The kinds a point is made of besides its port (port/completion_port.hpp has port::Backend):
// the workload, the dispatch model and the blocking kind. Parsed once where text comes in (the
// CLI's flags, a --grid or --resume file) and compared as enums everywhere else; to_string
// gives the spelling the flags take and the results file records (schema v1, unchanged).

#include <optional>
#include <string_view>

namespace iocpbench {

enum class WorkloadKind { post, file, socket };
// shared: one port for the pool; per_thread: each worker its own port of concurrency 1
// (DiskSpd's model), spelled "per-thread".
enum class Dispatch { shared, per_thread };
// What a blocking handler blocks in: a timed sleep, or synchronous O_DIRECT reads.
enum class BlockingKind { sleep, io };
// --skip-on-success (file and socket): whether the transport asks Windows for
// FILE_SKIP_COMPLETION_PORT_ON_SUCCESS on its handles. by_default: each workload's own choice
// (socket on where granted, file off); spelled "default" in the results.
enum class SkipOnSuccess { by_default, on, off };

// The workload names, for help texts and errors.
inline constexpr const char* kWorkloadNames = "post, file, socket";

const char* to_string(WorkloadKind kind);
const char* to_string(Dispatch dispatch);
const char* to_string(BlockingKind kind);
const char* to_string(SkipOnSuccess mode);

// nullopt for any other text (the caller names its flag in the error).
std::optional<WorkloadKind> parse_workload_kind(std::string_view text);
std::optional<Dispatch> parse_dispatch(std::string_view text);
std::optional<BlockingKind> parse_blocking_kind(std::string_view text);
std::optional<SkipOnSuccess> parse_skip_on_success(std::string_view text);
// What a workload asks of the OS for `mode`: by_default resolves to on for the socket workload
// and off for every other.
bool skip_on_success_asked(SkipOnSuccess mode, WorkloadKind workload);

}  // namespace iocpbench
