#include "cli/workload_flags.hpp"

#include <charconv>
#include <stdexcept>
#include <system_error>

#include "cli/option_help.hpp"
#include "core/errors.hpp"
#include "engine/workload_params.hpp"

namespace iocpbench::cli {

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
               "file: the file to use (default: created once in the temporary directory)");
  add_text_option(c, "--file-size-mib", f.file_size_mib,
                  "file: size of a file iocpbench creates; an existing file is used at its own "
                  "size, never resized",
                  "INT", n(file.size_mib));
  add_text_option(c, "--block-size", f.block_size, "file: bytes per I/O", "INT", n(file.block_size));
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
  add_text_option(c, "--message-size", f.message_size, "socket: bytes per message", "INT",
                  n(socket.message_size));
  add_text_option(c, "--messages-in-flight", f.messages_in_flight,
                  "socket: messages in flight per connection", "INT", n(socket.in_flight));
  add_text_option(c, "--completion-path", f.completion_path,
                  "file, socket, Linux: how I/O completions reach the port: thread (a completion "
                  "thread reaps io_uring and posts) | port (no thread: the port reads the ring "
                  "itself) (Windows: ignored, the kernel queues completions)",
                  "TEXT", workloads::to_string(workloads::kDefaultCompletionPath));
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
  number(f.file_size_mib, "file_size_mib", "--file-size-mib");
  number(f.block_size, "block_size", "--block-size");
  number(f.outstanding, "outstanding", "--outstanding");
  number(f.connections, "connections", "--connections");
  number(f.message_size, "message_size", "--message-size");
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
