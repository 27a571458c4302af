#include "engine/workload_params.hpp"

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <system_error>

#include "core/errors.hpp"
#include "port/native_port.hpp"

namespace iocpbench::workloads {
namespace {

constexpr const char* kPatternNames[] = {"random", "sequential"};  // FilePattern's order
constexpr const char* kOpNames[] = {"read", "write", "mixed"};     // FileOp's order
constexpr const char* kPathNames[] = {"thread", "port"};           // CompletionPath's order

// --completion-path, a row of the file and the socket workloads.
template <typename P>
constexpr ParamRow<P> completion_path_row() {
  return row<P, &P::completion_path>(
      {.key = "completion_path", .flag = "--completion-path", .type = ParamType::choice,
       .type_name = "TEXT",
       .help = "Linux: how I/O completions reach the port: thread (a completion thread reaps "
               "io_uring and posts) or port (no thread: the port reads the ring itself); "
               "Windows ignores it (the kernel queues completions)",
       .choices = kPathNames, .advanced = true});
}

constexpr ParamRow<PostParams> kPostRows[] = {
    row<PostParams, &PostParams::posters>(
        {.key = "posters", .flag = "--posters", .type = ParamType::count, .type_name = "INT",
         .help = "threads outside the pool that post packets (0 = closed loop of --in-flight "
                 "packets re-posted by the workers)",
         .low = 0, .high = 64}),
    row<PostParams, &PostParams::in_flight>(
        {.key = "in_flight", .flag = "--in-flight", .type = ParamType::count, .type_name = "INT",
         .help = "bound on outstanding packets (streaming) or packets in the closed loop",
         .low = 1, .high = 1'000'000}),
    row<PostParams, &PostParams::latency_sample_every>(
        {.key = "latency_sample_every", .flag = "--latency-sample-every",
         .type = ParamType::count, .type_name = "INT",
         .help = "time one packet in K (latency and queue delay are that sample; the clock "
                 "reads and records cost 1/K per packet; 1 = every packet)",
         .low = 1, .high = 1'000'000}),
};

constexpr ParamRow<FileParams> kFileRows[] = {
    row<FileParams, &FileParams::path>(
        {.key = "file", .flag = "--file", .type = ParamType::text, .type_name = "FILE",
         .help = "the file to use (default: created once in the temporary directory)"}),
    row<FileParams, &FileParams::size_mib>(
        {.key = "file_size_mib", .flag = "--file-size-mib", .type = ParamType::size,
         .type_name = "MIB",
         .help = "size of a file iocpbench creates, MiB or a size (1GiB); an existing file is "
                 "used at its own size, never resized",
         .low = 1, .high = 1 << 20, .unit_bytes = 1 << 20}),
    row<FileParams, &FileParams::block_size>(
        {.key = "block_size", .flag = "--block-size", .type = ParamType::size,
         .type_name = "BYTES", .help = "bytes per I/O, or a size (4k)", .low = 1,
         .high = 16 << 20}),
    row<FileParams, &FileParams::pattern>(
        {.key = "pattern", .flag = "--pattern", .type = ParamType::choice, .type_name = "TEXT",
         .help = "the order of the offsets", .choices = kPatternNames}),
    row<FileParams, &FileParams::op>(
        {.key = "op", .flag = "--op", .type = ParamType::choice, .type_name = "TEXT",
         .help = "what each I/O does (mixed: a read or a write at even odds)", .choices = kOpNames}),
    row<FileParams, &FileParams::outstanding>(
        {.key = "outstanding", .flag = "--outstanding", .type = ParamType::count,
         .type_name = "INT", .help = "I/Os in flight", .low = 1, .high = 4096}),
    row<FileParams, &FileParams::direct>(
        {.key = "direct", .flag = "--buffered", .type = ParamType::flag, .type_name = "",
         .help = "go through the page cache instead of O_DIRECT (the default measures the "
                 "device)",
         .flag_value = false}),
    row<FileParams, &FileParams::overwrite>(
        {.key = "overwrite", .flag = "--overwrite", .type = ParamType::flag, .type_name = "",
         .help = "allow --op write/mixed to write into an existing --file that iocpbench did "
                 "not create (its data is lost)",
         .omit_default = true}),
    row<FileParams, &FileParams::skip_port_share>(
        {.key = "skip_port_share", .flag = "--skip-port-share", .type = ParamType::fraction,
         .type_name = "FLOAT",
         .help = "Windows: fraction of the I/Os issued with a tagged event handle (no packet) "
                 "and waited on by the issuing worker",
         .low = 0, .high = 0.99, .omit_default = true}),
    completion_path_row<FileParams>(),
};

constexpr ParamRow<SocketParams> kSocketRows[] = {
    row<SocketParams, &SocketParams::connections>(
        {.key = "connections", .flag = "--connections", .type = ParamType::count,
         .type_name = "INT", .help = "loopback TCP connections", .low = 1, .high = 1024}),
    row<SocketParams, &SocketParams::message_size>(
        {.key = "message_size", .flag = "--message-size", .type = ParamType::size,
         .type_name = "BYTES", .help = "bytes per message, or a size (1k)", .low = 1,
         .high = 1 << 20}),
    row<SocketParams, &SocketParams::in_flight>(
        {.key = "messages_in_flight", .flag = "--messages-in-flight", .type = ParamType::count,
         .type_name = "INT", .help = "messages in flight per connection", .low = 1,
         .high = 1024}),
    completion_path_row<SocketParams>(),
};

// The data file's pre-flight check (io/data_file.hpp), once per distinct request in this
// process: parameters are parsed again after a run (results::point_result), when the file may have
// changed under the run on purpose (a fault test truncates it); each run's open of the file
// checks it again for real (io::prepare_data_file).
void check_data_file_once(const io::DataFileRequest& r) {
  static std::mutex mutex;
  static std::set<std::string> checked;
  const std::string key = r.path + '\n' + std::to_string(r.create_bytes) + ' ' +
                          std::to_string(r.block_bytes) + ' ' + std::to_string(r.writes) +
                          std::to_string(r.overwrite) + std::to_string(r.direct);
  {
    const std::lock_guard<std::mutex> hold(mutex);
    if (checked.count(key) != 0) return;
  }
  io::check_data_file(r);
  const std::lock_guard<std::mutex> hold(mutex);
  checked.insert(key);
}

// What no single row can check: the parameters together, and the machine.
void check_file(const FileParams& p) {
  if (p.skip_port_share > 0 && !port::native_port_available()) {
    throw BadInput{"--skip-port-share",
                   "needs the kernel's I/O completion port (Windows: an OVERLAPPED whose event "
                   "handle has its low bit set queues no packet); this OS has none"};
  }
  if (p.direct && p.block_size % 512 != 0) {
    throw BadInput{"--block-size", std::to_string(p.block_size) +
                                       " is not a multiple of the 512-byte sector, which direct "
                                       "I/O needs (or pass --buffered)"};
  }
  if (static_cast<std::uint64_t>(p.block_size) > (std::uint64_t{p.size_mib} << 20)) {
    throw BadInput{"--block-size", "larger than the file (--file-size-mib)"};
  }
  // The file itself (docs/reliability.md, "File safety"): usable as it is, or creatable; never changed here.
  check_data_file_once(data_file_request(p));
}

void check_socket(const SocketParams& p) {
  if (std::uint64_t{p.message_size} * p.in_flight > (std::uint64_t{64} << 20)) {
    throw BadInput{"--messages-in-flight", "message size x messages in flight exceeds 64 MiB"};
  }
}

// Results files and grids written before `direct` was the key said `buffered` (the flag's
// own name); it still reads, as the flag's meaning.
nlohmann::json buffered_as_direct(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("buffered") || j["buffered"].is_null()) return j;
  if (!j["buffered"].is_boolean()) throw BadInput{"--buffered", "must be true or false"};
  nlohmann::json out = j;
  out["direct"] = !j["buffered"].get<bool>();
  out.erase("buffered");
  return out;
}

}  // namespace

nlohmann::json with_current_keys(const nlohmann::json& params) { return buffered_as_direct(params); }

std::span<const ParamRow<PostParams>> post_rows() { return kPostRows; }
std::span<const ParamRow<FileParams>> file_rows() { return kFileRows; }
std::span<const ParamRow<SocketParams>> socket_rows() { return kSocketRows; }

std::vector<ParamListing> param_listing() {
  std::vector<ParamListing> out;
  const auto add = [&](const auto& rows, WorkloadKind workload) {
    using Params = typename std::remove_cvref_t<decltype(rows.front())>::params_type;
    const Params defaults;
    for (const auto& r : rows) {
      auto same = std::find_if(out.begin(), out.end(),
                               [&](const ParamListing& l) {
                                 return std::string_view(l.info->flag) == r.info.flag;
                               });
      if (same != out.end()) {
        same->workloads.push_back(workload);
        continue;
      }
      out.push_back({&r.info, {workload}, r.get(defaults, r.info)});
    }
  };
  add(post_rows(), WorkloadKind::post);
  add(file_rows(), WorkloadKind::file);
  add(socket_rows(), WorkloadKind::socket);
  return out;
}

WorkloadParams parse_workload_params(WorkloadKind workload, const nlohmann::json& params) {
  if (!params.is_null() && !params.is_object())
    throw BadInput{"--workload", "parameters must be an object"};
  WorkloadParams out;
  out.workload = workload;
  switch (workload) {
    case WorkloadKind::post:
      out.params = parse_rows(post_rows(), params);
      break;
    case WorkloadKind::file: {
      const FileParams file = parse_rows(file_rows(), with_current_keys(params));
      check_file(file);
      out.params = file;
      break;
    }
    case WorkloadKind::socket: {
      const SocketParams socket = parse_rows(socket_rows(), params);
      check_socket(socket);
      out.params = socket;
      break;
    }
  }
  return out;
}

nlohmann::json to_json(const WorkloadParams& wp) {
  if (const auto* p = std::get_if<PostParams>(&wp.params)) {
    nlohmann::json j = rows_to_json(post_rows(), *p);
    j["mode"] = p->posters == 0 ? "closed_loop" : "streaming";  // derived, for a reader
    return j;
  }
  if (const auto* p = std::get_if<FileParams>(&wp.params)) return rows_to_json(file_rows(), *p);
  return rows_to_json(socket_rows(), std::get<SocketParams>(wp.params));
}

const char* to_string(CompletionPath path) {
  return path == CompletionPath::port ? "port" : "thread";
}

std::optional<CompletionPath> completion_path_of(const WorkloadParams& wp) {
  if (const auto* f = std::get_if<FileParams>(&wp.params)) return f->completion_path;
  if (const auto* s = std::get_if<SocketParams>(&wp.params)) return s->completion_path;
  return std::nullopt;
}

bool takes_completion_path(WorkloadKind workload) {
  return workload == WorkloadKind::file || workload == WorkloadKind::socket;
}

std::string default_data_file(unsigned size_mib) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  return (dir / ("iocpbench-" + std::to_string(size_mib) + "mib.dat")).string();
}

io::DataFileRequest data_file_request(const FileParams& p) {
  io::DataFileRequest r;
  r.named = !p.path.empty();
  r.path = r.named ? p.path : default_data_file(p.size_mib);
  r.create_bytes = std::uint64_t{p.size_mib} << 20;
  r.block_bytes = p.block_size;
  r.writes = p.op != FileOp::read;
  r.overwrite = p.overwrite;
  r.direct = p.direct;
  return r;
}

}  // namespace iocpbench::workloads
