// The file workload on Linux: `outstanding` reads/writes of one block each, kept in flight
// through the io_uring completion source; each completion is a port packet, and the worker that
// handled it submits the next I/O of that slot (as soon as its completion is seen).
// Per-thread dispatch (DiskSpd's model): slot i belongs to worker i mod S, and each worker has
// its own ring with no completion thread: the worker itself submits and reaps it, posting each
// completion into its own port and taking it from there (Pool: remove with timeout 0, pump
// when the port is empty), so a slot's I/O never leaves the thread that issued it.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/errors.hpp"
#include "io/completion_source.hpp"
#include "io/source_set.hpp"
#include "metrics/clock.hpp"
#include "io/data_file.hpp"
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
    const DataFileRequest request = data_file_request(params_);
    path_ = request.path;
    const DataFile data = prepare_data_file(request);  // never resizes a file that exists
    created_ = data.created;
    written_ = request.writes;
    blocks_ = data.bytes / params_.block_size;
    if (blocks_ == 0) throw BadInput{"--block-size", "larger than the file " + path_};

    int flags = (params_.op == FileOp::read ? O_RDONLY : O_RDWR) | O_CLOEXEC;
    if (params_.direct) flags |= O_DIRECT;
    fd_ = ::open(path_.c_str(), flags);
    if (fd_ < 0 && params_.direct && errno == EINVAL) {
      throw BadInput{"--buffered", "the file system holding " + path_ +
                                            " refuses O_DIRECT; pass --buffered to measure "
                                            "through the page cache"};
    }
    if (fd_ < 0) {
      throw std::runtime_error("--file: cannot open " + path_ + ": " + std::strerror(errno));
    }
    direct_verified_ = (::fcntl(fd_, F_GETFL) & O_DIRECT) != 0;
    if (params_.direct) check_direct_alignment();

    slots_.resize(params_.outstanding);
    buffers_.resize(params_.outstanding, nullptr);
    for (unsigned i = 0; i < params_.outstanding; ++i) {
      void* p = nullptr;
      if (posix_memalign(&p, 4096, params_.block_size) != 0) throw std::bad_alloc();
      std::memset(p, static_cast<int>(0xA5 ^ i), params_.block_size);
      buffers_[i] = p;
      io::IoOp& op = slots_[i];
      op.fd = fd_;
      op.buf = p;
      op.len = params_.block_size;
      op.key = i;
      op.index = i;
    }
    io::SourceSetOptions options;
    options.port = env.port;
    options.worker_ports = env.worker_ports;
    options.roles = env.roles;
    options.units = params_.outstanding;  // one I/O in flight per slot
    options.port_reads = params_.completion_path == CompletionPath::port;
    options.unit_name = "slot";
    sources_.open(options);
  }

  void start() override {
    WorkerContext context;
    context.rng = 0xD1B54A32D192ED03ull;
    outstanding_.store(slots_.size());
    const std::uint64_t now = metrics::now_ns();
    for (auto& op : slots_) {
      prepare(op, context);
      op.t_submit_ns = now;
      submitted_.fetch_add(1, std::memory_order_relaxed);
      sources_.submit(op);
    }
  }

  Completion on_packet(const port::Packet& packet, WorkerContext&) override {
    const auto* op = static_cast<const io::IoOp*>(packet.context);
    Completion c;
    c.t_start_ns = op->t_submit_ns;
    c.t_insert_ns = op->t_insert_ns;
    c.bytes = packet.bytes;
    c.error = packet.status != 0 || packet.bytes != params_.block_size;
    if (c.error) {
      if (packet.status != 0) {
        io_errors_.fetch_add(1, std::memory_order_relaxed);
      } else {
        short_transfers_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    return c;
  }

  void after_handler(const port::Packet& packet, const Completion&, std::uint64_t t_done_ns,
                     WorkerContext& worker) override {
    auto* op = static_cast<io::IoOp*>(packet.context);
    if (env_.phase->load(std::memory_order_relaxed) == kStopping) {
      outstanding_.fetch_sub(1, std::memory_order_seq_cst);
      return;
    }
    prepare(*op, worker);
    op->t_submit_ns = t_done_ns;  // resubmitted right now: no extra clock read
    submitted_.fetch_add(1, std::memory_order_relaxed);
    sources_.submit(*op);
  }

  bool drain(std::chrono::steady_clock::time_point deadline) override {
    while (outstanding_.load() != 0) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
  }

  void close() override {
    sources_.close();  // stops the completion threads; cancels anything left in flight
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
    for (void*& p : buffers_) {
      std::free(p);
      p = nullptr;
    }
  }

  nlohmann::json stats(double) const override {
    return {{"file", path_},
            {"file_bytes", blocks_ * params_.block_size},
            {"file_created", created_},
            {"file_written", written_},
            {"direct_io_requested", params_.direct},
            {"direct_io_verified", direct_verified_},
            {"io_errors", io_errors_.load()},
            {"short_transfers", short_transfers_.load()},
            {"completion_source", sources_.to_json()}};
  }

  // The port path: a worker's own submissions are in flight in the ring, and io_uring cancels
  // a thread's requests when it exits; conservatively, no worker leaves while any I/O is in
  // flight. (The thread path's completion thread is the only submitter: nothing to cancel.)
  bool worker_has_io_pending(unsigned) const override {
    return params_.completion_path == CompletionPath::port && env_.worker_ports.empty() &&
           outstanding_.load(std::memory_order_relaxed) > 0;
  }

  bool pumps(unsigned worker) const override { return sources_.pumps(worker); }
  int pump(unsigned worker, unsigned wait_us) override { return sources_.pump(worker, wait_us); }

  std::string stall_report() const override {
    if (!sources_.live()) return {};
    const io::SourceStats s = sources_.stats();
    const std::uint64_t submitted = submitted_.load(std::memory_order_relaxed);
    const std::uint64_t in_flight = submitted > s.completions ? submitted - s.completions : 0;
    return std::to_string(in_flight) + " file I/Os in flight in the completion source (" +
           std::to_string(submitted) + " submitted, " + std::to_string(s.completions) +
           " completed, " + std::to_string(s.posted) + " posted to the port) of " +
           std::to_string(slots_.size()) + " slots";
  }

  std::uint64_t errors() const override {
    return sources_.stats().post_failures;
  }

 private:
  void prepare(io::IoOp& op, WorkerContext& rng) {
    std::uint64_t block;
    if (params_.pattern == FilePattern::random) {
      block = rng.next_random() % blocks_;
    } else {
      block = cursor_.fetch_add(1, std::memory_order_relaxed) % blocks_;
    }
    op.offset = block * params_.block_size;
    op.done = 0;
    switch (params_.op) {
      case FileOp::read:
        op.kind = io::IoOp::Kind::read;
        break;
      case FileOp::write:
        op.kind = io::IoOp::Kind::write;
        break;
      case FileOp::mixed:
        op.kind = (rng.next_random() >> 32) & 1 ? io::IoOp::Kind::write : io::IoOp::Kind::read;
        break;
    }
  }

  // Direct I/O needs offsets and sizes aligned to what the file system says (statx
  // STATX_DIOALIGN, Linux 6.1+); refuse a block size that would fail every I/O.
  void check_direct_alignment() {
#ifdef STATX_DIOALIGN
    struct statx sx {};
    if (::statx(fd_, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
        (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align != 0) {
      if (params_.block_size % sx.stx_dio_offset_align != 0) {
        throw BadInput{"--block-size",
                            std::to_string(params_.block_size) + " is not a multiple of " +
                                std::to_string(sx.stx_dio_offset_align) +
                                ", the direct-I/O alignment of " + path_ + " (or pass --buffered)"};
      }
    }
#endif
  }

  FileParams params_;
  RunEnv env_;
  std::string path_;
  bool created_ = false;  // iocpbench made the file (its marker): --file-size-mib applied
  bool written_ = false;  // --op write/mixed: the run writes into the file
  bool direct_verified_ = false;
  std::uint64_t blocks_ = 0;
  int fd_ = -1;
  std::vector<io::IoOp> slots_;
  std::vector<void*> buffers_;
  io::SourceSet sources_;  // one ring, or one per worker port (per-thread dispatch)
  std::atomic<std::uint64_t> outstanding_{0};
  std::atomic<std::uint64_t> cursor_{0};
  std::atomic<std::uint64_t> submitted_{0};  // I/Os handed to the source (the watchdog's view)
  std::atomic<std::uint64_t> io_errors_{0}, short_transfers_{0};
};

}  // namespace

std::unique_ptr<Workload> make_file_workload(const FileParams& params) {
  return std::make_unique<FileWorkload>(params);
}

}  // namespace iocpbench::workloads
