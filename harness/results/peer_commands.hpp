#pragma once
// The fio and DiskSpd command lines that ask a file point's question of those tools
// (points[].peer_commands): the same file, block size, direct or buffered, read/write mix,
// pattern, depth, submitting threads, warm-up and run time. The one place they are spelled:
// bench/anchors.py's P4 runs the fio line it reads from a results file, not one of its own.
// What they cannot say (the handler's work and blocking, the port between the I/O and the
// handler, an open loop) is in `notes` and harness/workloads/README.md ("The same I/O in fio
// and DiskSpd").

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/run_point.hpp"
#include "engine/workload_params.hpp"

namespace iocpbench::results {

// A file point's I/O, as both peers take it.
struct FileJob {
  std::string path;
  // iocpbench's own data file, made at size_mib when absent: the peers are told the size (fio
  // lays the file out, DiskSpd -c creates it). A named file is used whole by all three.
  bool default_file = true;
  unsigned size_mib = 256;
  unsigned block_bytes = 4096;
  bool direct = true;
  workloads::FileOp op = workloads::FileOp::read;
  workloads::FilePattern pattern = workloads::FilePattern::random;
  unsigned jobs = 1;            // submitting threads (fio numjobs, DiskSpd -t)
  unsigned depth_per_job = 32;  // fio iodepth, DiskSpd -o
  double duration_s = 5;
  double warmup_s = 0.5;
};

struct PeerCommands {
  std::string fio;
  std::string diskspd;             // for Windows (diskspd.exe)
  std::vector<std::string> notes;  // what the lines do not reproduce of this point
};

std::string fio_command(const FileJob& job);
std::string diskspd_command(const FileJob& job);

// The job of a file point (nullopt for other workloads): a shared port is one submitting
// queue of `outstanding`; per-thread dispatch splits the slots over the workers that get some.
std::optional<FileJob> file_job(const engine::PointSpec& spec, const workloads::FileParams& params);
// Both lines and the notes for the point, its parameters parsed (nullopt for other workloads).
std::optional<PeerCommands> peer_commands(const engine::PointSpec& spec,
                                          const workloads::WorkloadParams& params);
// points[].peer_commands: {fio, diskspd, notes}.
nlohmann::json to_json(const PeerCommands& commands);

}  // namespace iocpbench::results
