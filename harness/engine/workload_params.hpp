#pragma once
// Workload parameters: a typed struct per workload, declared as rows (engine/param_rows.hpp),
// parsed and checked once at the edge (the CLI's flags, a grid, a results file's
// workload_params), with every bad value reported as BadInput naming its flag. A point carries
// them typed (engine::PointSpec); JSON is their form in results files only.

#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kinds.hpp"
#include "engine/param_rows.hpp"
#include "io/data_file.hpp"

namespace iocpbench::workloads {

struct PostParams {
  unsigned posters = 1;     // threads outside the pool that post; 0 = closed loop
  unsigned in_flight = 64;  // bound on outstanding packets (streaming) / K (closed loop)
  // Every this many posts (per poster; per worker for re-posts) carry their post time, and
  // only those are timed: latency and queue delay are a systematic sample, so the clock reads
  // and histogram records cost 1/K of a packet each (targets P6). 1: every packet.
  unsigned latency_sample_every = 32;
};

enum class FilePattern { random, sequential };

// How I/O completions reach the port on Linux (harness/io/completion_source_linux.hpp): `port` (the
// default), no thread: the port reads the kernel's completions itself and the workers submit
// their own I/O; `thread`, a completion thread that reaps them and posts. Windows ignores it (the kernel
// queues completions into the port). Every file and socket point records it in
// workload_params; a results file written before it was recorded was measured on `thread`
// (kLegacyCompletionPath: absent = thread). The point id names it only when not the default.
enum class CompletionPath { thread, port };
inline constexpr CompletionPath kDefaultCompletionPath = CompletionPath::port;
inline constexpr CompletionPath kLegacyCompletionPath = CompletionPath::thread;
const char* to_string(CompletionPath path);
// The workloads whose I/O completions take a completion path (file, socket; not post).
bool takes_completion_path(WorkloadKind workload);
struct WorkloadParams;
// A file or socket point's completion path; nullopt for post.
std::optional<CompletionPath> completion_path_of(const WorkloadParams& params);
enum class FileOp { read, write, mixed };

struct FileParams {
  std::string path;  // empty: the default file in the temporary directory
  unsigned size_mib = 256;
  unsigned block_size = 4096;
  FilePattern pattern = FilePattern::random;
  FileOp op = FileOp::read;
  unsigned outstanding = 32;
  bool direct = true;
  // Windows: this fraction of the I/Os is issued with the OVERLAPPED's event handle tagged
  // (low bit set), so it completes without a packet, and waited on through the event by the
  // issuing worker inside a blocking region. Refused where there is no kernel completion port.
  double skip_port_share = 0;
  // --overwrite: consent to write (--op write/mixed) into a file iocpbench did not create.
  bool overwrite = false;
  CompletionPath completion_path = kDefaultCompletionPath;  // --completion-path
};

struct SocketParams {
  unsigned connections = 16;
  unsigned message_size = 64;
  unsigned in_flight = 1;  // messages in flight per connection
  CompletionPath completion_path = kDefaultCompletionPath;  // --completion-path
};

struct WorkloadParams {
  WorkloadKind workload = WorkloadKind::post;
  std::variant<PostParams, FileParams, SocketParams> params;
};

// Each workload's parameters, one row each (engine/param_rows.hpp): key, flag, type, range,
// help. The structs above hold the defaults.
std::span<const ParamRow<PostParams>> post_rows();
std::span<const ParamRow<FileParams>> file_rows();
std::span<const ParamRow<SocketParams>> socket_rows();

// Every workload parameter once per flag, for the CLI: its row, the workloads that take it
// (--completion-path: file and socket) and its default, in the tables' order.
struct ParamListing {
  const ParamInfo* info;
  std::vector<WorkloadKind> workloads;
  nlohmann::json default_value;  // null: none (--file)
};
std::vector<ParamListing> param_listing();

// Parsed and checked by the rows, then together (a direct I/O's block size, the data file's
// pre-flight check): absent keys take the defaults, keys of other workloads are ignored.
// `params` is the results' form (to_json's output reads back) or the CLI's (the flags' values
// under the rows' keys). Throws BadInput{"--flag", reason}.
WorkloadParams parse_workload_params(WorkloadKind workload, const nlohmann::json& params);
// `params` with the keys of files written before today's rows (`buffered: true` for
// `direct: false`), so that a grid read back compares with one from today's flags.
nlohmann::json with_current_keys(const nlohmann::json& params);
// Every parameter, defaults included (the results' workload_params).
nlohmann::json to_json(const WorkloadParams& params);

// The default data file: <temp dir>/iocpbench-<size>mib.dat.
std::string default_data_file(unsigned size_mib);
// What the file workload asks of its data file (io/data_file.hpp): --file or the default file.
io::DataFileRequest data_file_request(const FileParams& params);

}  // namespace iocpbench::workloads
