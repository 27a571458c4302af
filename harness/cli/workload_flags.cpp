#include "cli/workload_flags.hpp"

#include <charconv>
#include <iostream>
#include <string_view>
#include <utility>
#include <stdexcept>
#include <system_error>

#include "cli/help_format.hpp"
#include "cli/option_help.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "engine/workload_params.hpp"

namespace iocpbench::cli {
namespace {

// Which workload each flag belongs to, and the --help heading it is filed under.
struct WorkloadFlag {
  const char* name;
  const char* group;
  bool post, file, socket;
  bool applies_to(WorkloadKind w) const {
    return w == WorkloadKind::post ? post : w == WorkloadKind::file ? file : socket;
  }
};

constexpr WorkloadFlag kWorkloadFlagTable[] = {
    {"--posters", kGroupPost, true, false, false},
    {"--in-flight", kGroupPost, true, false, false},
    {"--latency-sample-every", kGroupPost, true, false, false},
    {"--file", kGroupFile, false, true, false},
    {"--file-size-mib", kGroupFile, false, true, false},
    {"--block-size", kGroupFile, false, true, false},
    {"--pattern", kGroupFile, false, true, false},
    {"--op", kGroupFile, false, true, false},
    {"--outstanding", kGroupFile, false, true, false},
    {"--buffered", kGroupFile, false, true, false},
    {"--overwrite", kGroupFile, false, true, false},
    {"--skip-port-share", kGroupFile, false, true, false},
    {"--connections", kGroupSocket, false, false, true},
    {"--message-size", kGroupSocket, false, false, true},
    {"--messages-in-flight", kGroupSocket, false, false, true},
    {"--completion-path", kGroupAdvanced, false, true, true},
};

// Whether the user gave `name` (the flags keep the user's text: empty when absent).
bool given(const WorkloadFlags& f, std::string_view name) {
  const std::pair<std::string_view, const std::string*> texts[] = {
      {"--posters", &f.posters}, {"--in-flight", &f.in_flight},
      {"--latency-sample-every", &f.latency_sample_every}, {"--file", &f.file},
      {"--file-size-mib", &f.file_size_mib}, {"--block-size", &f.block_size},
      {"--pattern", &f.pattern}, {"--op", &f.op}, {"--outstanding", &f.outstanding},
      {"--skip-port-share", &f.skip_port_share}, {"--connections", &f.connections},
      {"--message-size", &f.message_size}, {"--messages-in-flight", &f.messages_in_flight},
      {"--completion-path", &f.completion_path}};
  if (name == "--buffered") return f.buffered;
  if (name == "--overwrite") return f.overwrite;
  for (const auto& [flag, text] : texts) {
    if (flag == name) return !text->empty();
  }
  return false;
}

}  // namespace

void add_workload_flags(CLI::App& c, WorkloadFlags& f) {
  // The defaults shown are the parameter structs' own, the ones parse_workload_params takes.
  const workloads::PostParams post;
  const workloads::FileParams file;
  const workloads::SocketParams socket;
  const auto n = [](unsigned value) { return std::to_string(value); };
  add_text_option(c, "--posters", f.posters,
                  "post: threads outside the pool that post packets (0 = closed loop of "
                  "--in-flight packets re-posted by the workers)",
                  "INT", n(post.posters));
  add_text_option(c, "--in-flight", f.in_flight,
                  "post: bound on outstanding packets (streaming) or packets in the closed loop",
                  "INT", n(post.in_flight));
  add_text_option(c, "--latency-sample-every", f.latency_sample_every,
                  "post: time one packet in K (latency and queue delay are that sample; the clock "
                  "reads and records cost 1/K per packet; 1 = every packet)",
                  "INT", n(post.latency_sample_every));
  c.add_option("--file", f.file,
               "file: the file to use (default: created once in the temporary directory)")
      ->type_name("FILE");
  add_text_option(c, "--file-size-mib", f.file_size_mib,
                  "file: size of a file iocpbench creates, MiB or a size (1GiB); an existing file "
                  "is used at its own size, never resized",
                  "MIB", n(file.size_mib));
  add_text_option(c, "--block-size", f.block_size, "file: bytes per I/O, or a size (4k)", "BYTES",
                  n(file.block_size));
  add_text_option(c, "--pattern", f.pattern, "file: random | sequential", "TEXT", "random");
  add_text_option(c, "--op", f.op, "file: read | write | mixed", "TEXT", "read");
  add_text_option(c, "--outstanding", f.outstanding, "file: I/Os in flight", "INT", n(file.outstanding));
  c.add_flag("--buffered", f.buffered,
             "file: go through the page cache instead of O_DIRECT (the default measures the "
             "device)");
  c.add_flag("--overwrite", f.overwrite,
             "file: allow --op write/mixed to write into an existing --file that iocpbench did "
             "not create (its data is lost)");
  add_text_option(c, "--skip-port-share", f.skip_port_share,
                  "file, Windows: fraction of the I/Os issued with a tagged event handle (no "
                  "packet) and waited on by the issuing worker",
                  "FLOAT", number_text(file.skip_port_share));
  add_text_option(c, "--connections", f.connections, "socket: loopback TCP connections", "INT",
                  n(socket.connections));
  add_text_option(c, "--message-size", f.message_size, "socket: bytes per message, or a size (1k)",
                  "BYTES", n(socket.message_size));
  add_text_option(c, "--messages-in-flight", f.messages_in_flight,
                  "socket: messages in flight per connection", "INT", n(socket.in_flight));
  add_text_option(c, "--completion-path", f.completion_path,
                  "file, socket, Linux: how I/O completions reach the port: thread (a completion "
                  "thread reaps io_uring and posts) | port (no thread: the port reads the ring "
                  "itself) (Windows: ignored, the kernel queues completions)",
                  "TEXT", workloads::to_string(workloads::kDefaultCompletionPath));
  for (const auto& flag : kWorkloadFlagTable) group_options(c, flag.group, {flag.name});
}

void warn_inapplicable_flags(const WorkloadFlags& f, const std::vector<WorkloadKind>& workloads) {
  std::string flags, owners;
  std::size_t count = 0;
  for (const auto& flag : kWorkloadFlagTable) {
    if (!given(f, flag.name)) continue;
    bool applies = false;
    for (WorkloadKind w : workloads) applies = applies || flag.applies_to(w);
    if (applies) continue;
    flags += (flags.empty() ? "" : ", ") + std::string(flag.name);
    ++count;
  }
  if (count == 0) return;
  for (WorkloadKind w : workloads) owners += (owners.empty() ? "" : ",") + std::string(to_string(w));
  std::cerr << "iocpbench: warning: " << flags << (count == 1 ? " does" : " do") << " not apply to the "
            << owners << (workloads.size() == 1 ? " workload" : " workloads")
            << (count == 1 ? " and is ignored\n" : " and are ignored\n");
}

nlohmann::json workload_params_from_flags(const WorkloadFlags& f) {
  nlohmann::json j = nlohmann::json::object();
  auto number = [&](const std::string& text, const char* key, const char* flag) {
    if (text.empty()) return;
    long value = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end) throw BadInput{flag, "'" + text + "' is not an integer"};
    j[key] = value;
  };
  number(f.posters, "posters", "--posters");
  number(f.in_flight, "in_flight", "--in-flight");
  number(f.latency_sample_every, "latency_sample_every", "--latency-sample-every");
  // Sizes take units (4k, 64MiB); a plain number is the flag's own unit.
  auto size = [&](const std::string& text, const char* key, const char* flag, std::uint64_t base) {
    if (text.empty()) return;
    std::string reason;
    const auto value = core::parse_size(text, base, &reason);
    if (!value) throw BadInput{flag, reason};
    j[key] = *value;
  };
  size(f.file_size_mib, "file_size_mib", "--file-size-mib", std::uint64_t{1} << 20);
  size(f.block_size, "block_size", "--block-size", 1);
  number(f.outstanding, "outstanding", "--outstanding");
  number(f.connections, "connections", "--connections");
  size(f.message_size, "message_size", "--message-size", 1);
  number(f.messages_in_flight, "messages_in_flight", "--messages-in-flight");
  if (!f.skip_port_share.empty()) {
    try {
      std::size_t used = 0;
      const double share = std::stod(f.skip_port_share, &used);
      if (used != f.skip_port_share.size()) throw std::invalid_argument("trailing text");
      j["skip_port_share"] = share;
    } catch (const std::exception&) {
      throw BadInput{"--skip-port-share", "'" + f.skip_port_share + "' is not a number"};
    }
  }
  if (!f.file.empty()) j["file"] = f.file;
  if (!f.pattern.empty()) j["pattern"] = f.pattern;
  if (!f.op.empty()) j["op"] = f.op;
  if (f.buffered) j["buffered"] = true;
  if (f.overwrite) j["overwrite"] = true;
  if (!f.completion_path.empty()) j["completion_path"] = f.completion_path;
  return j;
}

}  // namespace iocpbench::cli
