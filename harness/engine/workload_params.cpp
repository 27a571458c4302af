#include "engine/workload_params.hpp"

#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <system_error>

#include "core/errors.hpp"
#include "port/native_port.hpp"

namespace iocpbench::workloads {
namespace {


std::string flag_of(const std::string& key) {
  std::string flag = "--" + key;
  for (char& c : flag) {
    if (c == '_') c = '-';
  }
  return flag;
}

// An integer in [low, high] from params[key], or `fallback` when absent.
unsigned get_count(const nlohmann::json& params, const char* key, unsigned fallback, long low,
                   long high) {
  if (!params.is_object() || !params.contains(key) || params[key].is_null()) return fallback;
  const auto& value = params[key];
  const std::string flag = flag_of(key);
  long n = 0;
  if (value.is_number_integer()) {
    n = value.get<long>();
  } else if (value.is_number_float()) {
    const double d = value.get<double>();
    if (d != static_cast<double>(static_cast<long>(d))) throw BadInput{flag, "must be an integer"};
    n = static_cast<long>(d);
  } else {
    throw BadInput{flag, "must be an integer"};
  }
  if (n < low) {
    throw BadInput{flag,
                   low == 0 ? "must not be negative" : "must be at least " + std::to_string(low)};
  }
  if (n > high) throw BadInput{flag, "must be at most " + std::to_string(high)};
  return static_cast<unsigned>(n);
}

std::string get_text(const nlohmann::json& params, const char* key, const std::string& fallback) {
  if (!params.is_object() || !params.contains(key) || params[key].is_null()) return fallback;
  if (!params[key].is_string()) throw BadInput{flag_of(key), "must be text"};
  return params[key].get<std::string>();
}

bool has(const nlohmann::json& params, const char* key) {
  return params.is_object() && params.contains(key) && !params[key].is_null();
}

PostParams parse_post(const nlohmann::json& j) {
  PostParams p;
  p.posters = get_count(j, "posters", p.posters, 0, 64);
  p.in_flight = get_count(j, "in_flight", p.in_flight, 1, 1'000'000);
  p.latency_sample_every =
      get_count(j, "latency_sample_every", p.latency_sample_every, 1, 1'000'000);
  return p;
}

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

CompletionPath parse_completion_path(const nlohmann::json& j) {
  const std::string text = get_text(j, "completion_path", to_string(kDefaultCompletionPath));
  if (text == "thread") return CompletionPath::thread;
  if (text == "port") return CompletionPath::port;
  throw BadInput{"--completion-path", "'" + text + "' is not thread or port"};
}

FileParams parse_file(const nlohmann::json& j) {
  FileParams p;
  p.completion_path = parse_completion_path(j);
  p.path = get_text(j, "file", "");
  p.size_mib = get_count(j, "file_size_mib", p.size_mib, 1, 1 << 20);
  p.block_size = get_count(j, "block_size", p.block_size, 1, 16 << 20);
  p.outstanding = get_count(j, "outstanding", p.outstanding, 1, 4096);
  const std::string pattern = get_text(j, "pattern", "random");
  if (pattern == "random") {
    p.pattern = FilePattern::random;
  } else if (pattern == "sequential") {
    p.pattern = FilePattern::sequential;
  } else {
    throw BadInput{"--pattern", "'" + pattern + "' is not random or sequential"};
  }
  const std::string op = get_text(j, "op", "read");
  if (op == "read") {
    p.op = FileOp::read;
  } else if (op == "write") {
    p.op = FileOp::write;
  } else if (op == "mixed") {
    p.op = FileOp::mixed;
  } else {
    throw BadInput{"--op", "'" + op + "' is not read, write or mixed"};
  }
  if (has(j, "buffered")) {
    if (!j["buffered"].is_boolean()) throw BadInput{"--buffered", "must be true or false"};
    p.direct = !j["buffered"].get<bool>();
  } else if (has(j, "direct")) {
    if (!j["direct"].is_boolean()) throw BadInput{"--buffered", "direct must be true or false"};
    p.direct = j["direct"].get<bool>();
  }
  if (has(j, "skip_port_share")) {
    const auto& v = j["skip_port_share"];
    if (!v.is_number()) throw BadInput{"--skip-port-share", "must be a fraction in [0, 0.99]"};
    p.skip_port_share = v.get<double>();
    if (!(p.skip_port_share >= 0 && p.skip_port_share <= 0.99)) {
      throw BadInput{"--skip-port-share", "must be a fraction in [0, 0.99]"};
    }
    if (p.skip_port_share > 0 && !port::native_port_available()) {
      throw BadInput{"--skip-port-share",
                     "needs the kernel's I/O completion port (Windows: an OVERLAPPED whose event "
                     "handle has its low bit set queues no packet); this OS has none"};
    }
  }
  if (p.direct && p.block_size % 512 != 0) {
    throw BadInput{"--block-size", std::to_string(p.block_size) +
                                       " is not a multiple of the 512-byte sector, which direct "
                                       "I/O needs (or pass --buffered)"};
  }
  if (static_cast<std::uint64_t>(p.block_size) > (std::uint64_t{p.size_mib} << 20)) {
    throw BadInput{"--block-size", "larger than the file (--file-size-mib)"};
  }
  if (has(j, "overwrite")) {
    if (!j["overwrite"].is_boolean()) throw BadInput{"--overwrite", "must be true or false"};
    p.overwrite = j["overwrite"].get<bool>();
  }
  // The file itself (docs/reliability.md, "File safety"): usable as it is, or creatable; never changed here.
  check_data_file_once(data_file_request(p));
  return p;
}

SocketParams parse_socket(const nlohmann::json& j) {
  SocketParams p;
  p.completion_path = parse_completion_path(j);
  p.connections = get_count(j, "connections", p.connections, 1, 1024);
  p.message_size = get_count(j, "message_size", p.message_size, 1, 1 << 20);
  p.in_flight = get_count(j, "messages_in_flight", p.in_flight, 1, 1024);
  if (std::uint64_t{p.message_size} * p.in_flight > (std::uint64_t{64} << 20)) {
    throw BadInput{"--messages-in-flight", "message size x messages in flight exceeds 64 MiB"};
  }
  return p;
}

const char* pattern_name(FilePattern p) {
  return p == FilePattern::random ? "random" : "sequential";
}
const char* op_name(FileOp op) {
  switch (op) {
    case FileOp::read:
      return "read";
    case FileOp::write:
      return "write";
    case FileOp::mixed:
      return "mixed";
  }
  return "read";
}

}  // namespace

WorkloadParams parse_workload_params(WorkloadKind workload, const nlohmann::json& params) {
  if (!params.is_null() && !params.is_object())
    throw BadInput{"--workload", "parameters must be an object"};
  WorkloadParams out;
  out.workload = workload;
  switch (workload) {
    case WorkloadKind::post:
      out.params = parse_post(params);
      break;
    case WorkloadKind::file:
      out.params = parse_file(params);
      break;
    case WorkloadKind::socket:
      out.params = parse_socket(params);
      break;
  }
  return out;
}

nlohmann::json to_json(const WorkloadParams& wp) {
  if (const auto* p = std::get_if<PostParams>(&wp.params)) {
    return {{"posters", p->posters},
            {"in_flight", p->in_flight},
            {"latency_sample_every", p->latency_sample_every},
            {"mode", p->posters == 0 ? "closed_loop" : "streaming"}};
  }
  if (const auto* p = std::get_if<FileParams>(&wp.params)) {
    nlohmann::json j = {{"file", p->path.empty() ? nlohmann::json() : nlohmann::json(p->path)},
            {"file_size_mib", p->size_mib},
            {"block_size", p->block_size},
            {"pattern", pattern_name(p->pattern)},
            {"op", op_name(p->op)},
            {"outstanding", p->outstanding},
            {"direct", p->direct}};
    if (p->skip_port_share > 0) j["skip_port_share"] = p->skip_port_share;
    if (p->overwrite) j["overwrite"] = true;
    j["completion_path"] = to_string(p->completion_path);  // always: absent reads as thread
    return j;
  }
  const auto& s = std::get<SocketParams>(wp.params);
  nlohmann::json j = {{"connections", s.connections},
                      {"message_size", s.message_size},
                      {"messages_in_flight", s.in_flight}};
  j["completion_path"] = to_string(s.completion_path);  // always: absent reads as thread
  return j;
}

const char* to_string(CompletionPath path) {
  return path == CompletionPath::port ? "port" : "thread";
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
