#include "results/peer_commands.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>
#include <variant>

namespace iocpbench::results {
namespace {

using workloads::FileOp;
using workloads::FilePattern;

// One word for a POSIX shell: bare when it needs no quoting, else single-quoted.
std::string sh_word(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("/._-+=:,@%").find(c) != std::string_view::npos;
  });
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// One argument for cmd.exe: double-quoted when it has a space or a tab.
std::string cmd_word(const std::string& word) {
  return word.find_first_of(" \t") == std::string::npos ? word : "\"" + word + "\"";
}

// fio's time values take a unit: whole milliseconds, at least one.
std::string fio_ms(double seconds) {
  return std::to_string(std::max<long long>(1, std::llround(seconds * 1000))) + "ms";
}

// DiskSpd's -d and -W take whole seconds: rounded up, so the run is never shorter.
long long whole_seconds(double seconds) {
  return static_cast<long long>(std::ceil(seconds - 1e-9));
}

const char* fio_rw(FileOp op, FilePattern pattern) {
  const bool random = pattern == FilePattern::random;
  switch (op) {
    case FileOp::read:
      return random ? "randread" : "read";
    case FileOp::write:
      return random ? "randwrite" : "write";
    case FileOp::mixed:
      return random ? "randrw" : "rw";
  }
  return "randread";
}

int diskspd_write_pct(FileOp op) {
  return op == FileOp::read ? 0 : op == FileOp::write ? 100 : 50;
}

}  // namespace

std::string fio_command(const FileJob& job) {
  std::string line = "fio --name=iocpbench-file --filename=" + sh_word(job.path) +
                     " --ioengine=io_uring --direct=" + (job.direct ? "1" : "0") +
                     " --rw=" + fio_rw(job.op, job.pattern);
  if (job.op == FileOp::mixed) line += " --rwmixread=50";
  line += " --bs=" + std::to_string(job.block_bytes) +
          " --iodepth=" + std::to_string(job.depth_per_job) +
          " --numjobs=" + std::to_string(job.jobs);
  // iocpbench draws each offset uniformly, with repeats; fio's default map would not repeat.
  if (job.pattern == FilePattern::random) line += " --norandommap";
  if (job.default_file) line += " --size=" + std::to_string(job.size_mib) + "M";
  line += " --time_based --runtime=" + fio_ms(job.duration_s);
  if (job.warmup_s > 0) line += " --ramp_time=" + fio_ms(job.warmup_s);
  if (job.jobs > 1) line += " --group_reporting";
  return line;
}

std::string diskspd_command(const FileJob& job) {
  std::string line = "diskspd.exe -b" + std::to_string(job.block_bytes) + " -o" +
                     std::to_string(job.depth_per_job) + " -t" + std::to_string(job.jobs) + " -d" +
                     std::to_string(whole_seconds(job.duration_s)) + " -W" +
                     std::to_string(whole_seconds(job.warmup_s));
  // -r: random offsets aligned to the block; -si: one sequential cursor shared by the threads.
  line += job.pattern == FilePattern::random ? " -r" : " -si";
  // -Su: FILE_FLAG_NO_BUFFERING alone, as iocpbench opens it (-Sh would add write-through).
  if (job.direct) line += " -Su";
  // -n: no thread affinity (DiskSpd pins its threads round-robin by default; iocpbench and fio
  // pin nothing).
  line += " -w" + std::to_string(diskspd_write_pct(job.op)) + " -n -L";
  if (job.default_file) line += " -c" + std::to_string(job.size_mib) + "M";
  return line + " " + cmd_word(job.path);
}

std::optional<FileJob> file_job(const engine::PointSpec& spec,
                                const workloads::FileParams& params) {
  if (spec.workload != WorkloadKind::file) return std::nullopt;
  FileJob job;
  job.path = workloads::data_file_request(params).path;
  job.default_file = params.path.empty();
  job.size_mib = params.size_mib;
  job.block_bytes = params.block_size;
  job.direct = params.direct;
  job.op = params.op;
  job.pattern = params.pattern;
  job.depth_per_job = params.outstanding;
  if (spec.dispatch == Dispatch::per_thread) {  // slot i is worker i mod S's
    job.jobs = std::max(1u, std::min(spec.pool_value, params.outstanding));
    job.depth_per_job = (params.outstanding + job.jobs - 1) / job.jobs;
  }
  job.duration_s = spec.duration_s;
  job.warmup_s = spec.warmup_s;
  return job;
}

namespace {

// What the lines leave out of this point, one sentence each.
std::vector<std::string> notes_for(const engine::PointSpec& spec,
                                   const workloads::FileParams& params, const FileJob& job) {
  std::vector<std::string> notes;
  if (spec.work_us > 0 || spec.blocking_ratio > 0) {
    notes.push_back(
        "the handler's work and blocking (work_us, blocking) have no counterpart: the peers "
        "reissue "
        "each I/O as soon as they reap it");
  }
  if (job.jobs * job.depth_per_job != params.outstanding) {
    notes.push_back("the " + std::to_string(params.outstanding) + " slots split unevenly over " +
                    std::to_string(job.jobs) + " workers; the peers keep " +
                    std::to_string(job.depth_per_job) + " per thread");
  }
  if (spec.open_loop.enabled())
    notes.push_back("open-loop arrivals are not expressed: the peers run a closed loop");
  if (params.skip_port_share > 0) notes.push_back("--skip-port-share has no counterpart");
  if (spec.affinity.pins()) {
    notes.push_back("--affinity " + spec.affinity.text +
                    " is not in the lines, which pin nothing: fio's --cpus_allowed=LIST "
                    "--cpus_allowed_policy=split and DiskSpd's -aLIST (for -n) pin one thread per "
                    "CPU of a list as a CPU list does here");
  }
  if (std::abs(spec.duration_s - std::round(spec.duration_s)) > 1e-9 ||
      std::abs(spec.warmup_s - std::round(spec.warmup_s)) > 1e-9) {
    notes.push_back("DiskSpd's -d and -W are whole seconds: rounded up");
  }
  return notes;
}

}  // namespace

std::optional<PeerCommands> peer_commands(const engine::PointSpec& spec,
                                          const workloads::WorkloadParams& parsed) {
  const auto* file = std::get_if<workloads::FileParams>(&parsed.params);
  if (file == nullptr) return std::nullopt;
  const workloads::FileParams& params = *file;
  const std::optional<FileJob> job = file_job(spec, params);
  if (!job) return std::nullopt;
  return PeerCommands{fio_command(*job), diskspd_command(*job), notes_for(spec, params, *job)};
}

nlohmann::json to_json(const PeerCommands& commands) {
  return {{"fio", commands.fio}, {"diskspd", commands.diskspd}, {"notes", commands.notes}};
}

}  // namespace iocpbench::results
