// The file workload, on every OS: `outstanding` reads/writes of one block each kept in flight
// through the file transport (io/file_io.hpp: io_uring on Linux, overlapped I/O on Windows);
// each completion is a port packet, and the worker that handled it submits the next I/O of
// that slot (as soon as its completion is seen).
// Per-thread dispatch (DiskSpd's model, Linux): slot i belongs to worker i mod S, and each
// worker has its own ring with no completion thread: the worker itself submits and reaps it,
// posting each completion into its own port and taking it from there (Pool: remove with
// timeout 0, pump when the port is empty), so a slot's I/O never leaves the thread that issued
// it.
//
// --skip-on-success on (Windows): the file handle queues no packet for an I/O that succeeds at
// once. A worker's re-issue that does so is handed back to it (Workload::completes_inline) and
// handled next on its thread like a packet; one issued by start() or the pacer is posted into
// the port by the transport (io/file_io_windows.cpp).
//
// --skip-port-share F (Windows' kernel port only): before re-issuing its slot through the port,
// a worker issues further I/Os that complete without a packet while a draw stays below F (so a
// fraction F of all I/Os), each waited for inside a blocking region. Those I/Os are counted in
// workload_stats.skip_port, not in the run's ops.
//
// Open loop (env.open_loop set): nothing is kept in flight; the pacer issues each read in a free
// slot at its intended time (issue()), and the worker that handles its completion releases the
// slot instead of re-issuing it. The slots (the in-flight bound) are --outstanding, or
// --max-in-flight.
//
// The in-flight depth (workload_stats.inflight_depth, workloads/inflight_depth.hpp): a slot's
// I/O counts from just before it is handed to the transport until a worker takes its
// completion from the port (on_packet), so a completion waiting in the port's queue still
// counts and the handler's time does not. I/Os kept out of the port (--skip-port-share) are not
// counted.

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "core/errors.hpp"
#include "io/file_io.hpp"
#include "metrics/clock.hpp"
#include "io/data_file.hpp"
#include "workloads/inflight_depth.hpp"
#include "workloads/transport_env.hpp"
#include "engine/workload.hpp"
#include "workloads/workloads.hpp"

namespace iocpbench::workloads {
namespace {

class FileWorkload final : public Workload {
 public:
  explicit FileWorkload(const FileParams& p) : params_(p) {}
  ~FileWorkload() override { close(); }

  std::string_view name() const override { return "file"; }

  void open(const RunEnv& env) override {
    env_ = env;
    const io::TransportEnv transport =
        transport_env(env, params_.completion_path, WorkloadKind::file);
    io::require_dispatch(transport, "file");
    const io::DataFileRequest request = data_file_request(params_);
    path_ = request.path;
    const io::DataFile data = io::prepare_data_file(request);  // never resizes a file that exists
    created_ = data.created;
    written_ = request.writes;
    blocks_ = data.bytes / params_.block_size;
    if (blocks_ == 0) throw BadInput{"--block-size", "larger than the file " + path_};
    io::FileIoOptions options;
    options.path = path_;
    options.writes = params_.op != FileOp::read;
    options.direct = params_.direct;
    options.block_bytes = params_.block_size;
    options.slots = params_.outstanding;
    if (env.open_loop != nullptr) {
      options.slots = env.open_loop->slots();
    }
    options.outside_port = params_.skip_port_share > 0;
    if (env.metrics) depth_ = std::make_unique<InflightDepth>(options.slots, metrics::now_ns());
    io_->open(options, transport);
  }

  void start() override {
    if (env_.open_loop != nullptr) return;  // the pacer issues
    WorkerContext context;
    context.rng = 0xD1B54A32D192ED03ull;
    outstanding_.store(params_.outstanding);
    const std::uint64_t now = metrics::now_ns();
    for (std::uint32_t slot = 0; slot < params_.outstanding; ++slot) issue(slot, context, now);
  }

  unsigned open_loop_slots() const override { return params_.outstanding; }

  bool issue(unsigned slot) override {  // the pacer's thread, alone: pacer_rng_ is its own
    outstanding_.fetch_add(1, std::memory_order_relaxed);
    issue(slot, pacer_rng_, env_.open_loop->issue_ns(slot));
    return true;  // a submission that fails completes with an error status
  }

  Completion on_packet(const port::Packet& packet, WorkerContext&) override {
    const io::FileDone d = io_->done(packet);
    Completion c;
    if (d.outside_port) {  // the platform queued a packet for an I/O kept out of the port
      skip_packets_seen_.fetch_add(1, std::memory_order_relaxed);
      c.counted = false;
      return c;
    }
    count_depth(-1, metrics::now_ns());
    // Open loop: the response and service times are the open loop's (engine/request_ledger.hpp),
    // taken when the slot is released.
    c.t_start_ns = env_.open_loop != nullptr ? 0 : d.t_submit_ns;
    c.t_insert_ns = d.t_insert_ns;
    c.bytes = d.bytes;
    c.error = d.status != 0 || d.bytes != params_.block_size;
    if (c.error) {
      if (d.status != 0) {
        io_errors_.fetch_add(1, std::memory_order_relaxed);
      } else {
        short_transfers_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    return c;
  }

  void after_handler(const port::Packet& packet, const Completion& c, std::uint64_t t_done_ns,
                     WorkerContext& worker) override {
    if (!c.counted) return;  // an I/O kept out of the port: counted as an error; not a slot
    const io::FileDone d = io_->done(packet);
    if (env_.open_loop != nullptr) {
      env_.open_loop->release(d.slot, t_done_ns != 0 ? t_done_ns : metrics::now_ns());
      outstanding_.fetch_sub(1, std::memory_order_seq_cst);
      return;
    }
    if (env_.phase->load(std::memory_order_relaxed) == kStopping) {
      outstanding_.fetch_sub(1, std::memory_order_seq_cst);
      return;
    }
    if (params_.skip_port_share > 0) {
      const double share = params_.skip_port_share;
      while (static_cast<double>(worker.next_random() >> 11) * 0x1.0p-53 < share &&
             env_.phase->load(std::memory_order_relaxed) != kStopping) {
        t_done_ns = outside_port_io(d.slot, worker);
      }
    }
    // Resubmitted right now: no extra clock read. Completed at once with no packet (skip on
    // success): the pool handles it next on this thread (engine/workload.hpp InlineCompletion).
    InlineCompletion* done_now = worker.inline_completion;
    if (issue(d.slot, worker, t_done_ns, done_now != nullptr ? &done_now->packet : nullptr)) {
      done_now->ready = true;
    }
  }

  // Only a worker's re-issue can be handed back to it (start() and the pacer are no workers).
  bool completes_inline() const override {
    return env_.open_loop == nullptr && io_->skip_granted();
  }

  bool drain(std::chrono::steady_clock::time_point deadline) override {
    while (outstanding_.load() != 0) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
  }

  void close() override { io_->close(); }  // cancels anything left in flight

  nlohmann::json stats(double window_s) const override {
    nlohmann::json j = io_->stats();  // direct_io_verified, completion_source, the OS's own
    j.update({{"file", path_},
              {"file_bytes", blocks_ * params_.block_size},
              {"file_created", created_},
              {"file_written", written_},
              {"direct_io_requested", params_.direct},
              {"io_errors", io_errors_.load()},
              {"short_transfers", short_transfers_.load()}});
    if (io_->outside_port_supported()) {  // the block exists where the flag does
      j["skip_port"] = skip_port_stats(window_s);
    }
    const char* bound = env_.open_loop != nullptr
                            ? "the open loop's slots (--max-in-flight, else --outstanding)"
                            : "--outstanding";
    put_inflight_depth(
        j, depth_.get(),
        {bound, "an I/O handed to the transport and not yet taken from the port by a worker"});
    return j;
  }

  std::uint64_t errors() const override {
    return io_->errors() + skip_errors_.load() + skip_packets_seen_.load();
  }

  // The workers' own I/O, as the transport sees it (whether a worker fetches its completions
  // itself, whether its exit could cancel I/O in flight).
  port::WorkerIo* worker_io() const override { return io_.get(); }

  std::string stall_report() const override {
    io::TransportProgress s;
    if (!io_->progress(s)) return {};
    const std::uint64_t submitted = submitted_.load(std::memory_order_relaxed);
    const std::uint64_t in_flight = submitted > s.completions ? submitted - s.completions : 0;
    return std::to_string(in_flight) + " file I/Os in flight in the completion source (" +
           std::to_string(submitted) + " submitted, " + std::to_string(s.completions) +
           " completed, " + std::to_string(s.posted) + " posted to the port) of " +
           std::to_string(params_.outstanding) + " slots";
  }

 private:
  std::uint64_t next_offset(WorkerContext& rng) {
    const std::uint64_t block = params_.pattern == FilePattern::random
                                    ? rng.next_random() % blocks_
                                    : cursor_.fetch_add(1, std::memory_order_relaxed) % blocks_;
    return block * params_.block_size;
  }

  bool next_is_write(WorkerContext& rng) {
    switch (params_.op) {
      case FileOp::read:
        return false;
      case FileOp::write:
        return true;
      case FileOp::mixed:
        return ((rng.next_random() >> 32) & 1) != 0;
    }
    return false;
  }

  // True when the I/O completed at once with no packet and its completion is in *done_now.
  bool issue(std::uint32_t slot, WorkerContext& rng, std::uint64_t t_submit_ns,
             port::Packet* done_now = nullptr) {
    const std::uint64_t offset = next_offset(rng);
    const bool write = next_is_write(rng);
    submitted_.fetch_add(1, std::memory_order_relaxed);
    count_depth(+1, t_submit_ns);  // before: its completion may be taken at once
    return io_->submit(slot, write, offset, t_submit_ns, done_now);
  }

  void count_depth(int delta, std::uint64_t t_ns) {
    if (!depth_) return;
    depth_->change(delta, t_ns, env_.phase->load(std::memory_order_relaxed) == kMeasuring);
  }

  // One I/O kept out of the port, waited for by this thread. Returns the time it completed.
  std::uint64_t outside_port_io(std::uint32_t slot, WorkerContext& rng) {
    const std::uint64_t offset = next_offset(rng);
    const io::FileWaited w = io_->wait_outside_port(slot, next_is_write(rng), offset);
    if (!w.ok) {
      skip_errors_.fetch_add(1, std::memory_order_relaxed);
    } else if (env_.phase->load(std::memory_order_relaxed) == kMeasuring) {
      skip_ops_.fetch_add(1, std::memory_order_relaxed);
      skip_wait_ns_.fetch_add(w.t_end_ns - w.t_start_ns, std::memory_order_relaxed);
    }
    return w.t_end_ns;
  }

  nlohmann::json skip_port_stats(double window_s) const {
    const std::uint64_t ops = skip_ops_.load();
    return {{"share", params_.skip_port_share},
            {"ops", ops},
            {"bytes", ops * params_.block_size},
            {"ops_per_s", window_s > 0 ? static_cast<double>(ops) / window_s : 0.0},
            {"wait_mean_us",
             ops == 0 ? 0.0
                      : static_cast<double>(skip_wait_ns_.load()) / 1e3 / static_cast<double>(ops)},
            {"errors", skip_errors_.load()},
            {"packets_seen", skip_packets_seen_.load()},
            {"scope", "the measured window; these I/Os are not in the run's ops"}};
  }

  FileParams params_;
  RunEnv env_;
  WorkerContext pacer_rng_{.index = 0, .rng = 0x9E3779B97F4A7C15ull};  // the pacer's offsets
  std::string path_;
  bool created_ = false;  // iocpbench made the file (its marker): --file-size-mib applied
  bool written_ = false;  // --op write/mixed: the run writes into the file
  std::uint64_t blocks_ = 0;
  std::unique_ptr<io::FileIo> io_ = io::make_file_io();  // the file, buffers, source(s)
  std::unique_ptr<InflightDepth> depth_;  // null with metrics off
  std::atomic<std::uint64_t> outstanding_{0};
  std::atomic<std::uint64_t> cursor_{0};
  std::atomic<std::uint64_t> submitted_{0};  // I/Os handed to the transport (the watchdog's view)
  std::atomic<std::uint64_t> io_errors_{0}, short_transfers_{0};
  std::atomic<std::uint64_t> skip_ops_{0}, skip_wait_ns_{0}, skip_errors_{0}, skip_packets_seen_{0};
};

}  // namespace

std::unique_ptr<Workload> make_file_workload(const FileParams& params) {
  return std::make_unique<FileWorkload>(params);
}

}  // namespace iocpbench::workloads
