#pragma once
// Workload parameters: parsed and checked once (from CLI flags or from a results file's
// workload_params), with every bad value reported as BadInput naming its flag.

#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "core/kinds.hpp"
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
// default), no thread: the port reads the ring itself and the workers submit their own I/O;
// `thread`, a completion thread that reaps the ring and posts. Windows ignores it (the kernel
// queues completions into the port). Every file and socket point records it in
// workload_params; a results file written before it was recorded was measured on `thread`
// (kLegacyCompletionPath: absent = thread). The point id names it only when not the default.
enum class CompletionPath { thread, port };
inline constexpr CompletionPath kDefaultCompletionPath = CompletionPath::port;
inline constexpr CompletionPath kLegacyCompletionPath = CompletionPath::thread;
const char* to_string(CompletionPath path);
// The workloads whose I/O completions take a completion path (file, socket; not post).
bool takes_completion_path(WorkloadKind workload);
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

// `params` holds any of the keys below (numbers as JSON numbers, --buffered as a bool; the
// normalised output of to_json is accepted back); absent keys take the defaults. Keys of other
// workloads are ignored. Throws BadInput{"--flag", reason}.
//   post:   posters, in_flight, latency_sample_every
//   file:   file, file_size_mib, block_size, pattern, op, outstanding, buffered | direct,
//           skip_port_share (Windows)
//   socket: connections, message_size, messages_in_flight
//   file and socket: completion_path (absent: kDefaultCompletionPath)
WorkloadParams parse_workload_params(WorkloadKind workload, const nlohmann::json& params);
// Every parameter, defaults included (the results' workload_params).
nlohmann::json to_json(const WorkloadParams& params);

// The default data file: <temp dir>/iocpbench-<size>mib.dat.
std::string default_data_file(unsigned size_mib);
// What the file workload asks of its data file (io/data_file.hpp): --file or the default file.
io::DataFileRequest data_file_request(const FileParams& params);

}  // namespace iocpbench::workloads
