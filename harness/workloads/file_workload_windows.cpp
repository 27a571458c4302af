// The file workload on Windows: `outstanding` overlapped ReadFile/WriteFile of one block each
// on a file opened with FILE_FLAG_OVERLAPPED | FILE_FLAG_NO_BUFFERING (unless --buffered);
// buffers from VirtualAlloc (page-aligned, so sector-aligned). The file is associated with the
// run's port when it is `win32` (the kernel queues each completion), else with the private
// IOCP of io::OverlappedSource, whose thread moves completions into the port. The worker that
// handled a completion issues that slot's next I/O.
//
// An immediate success (ReadFile returns TRUE) still queues its packet: the file handle does
// not use FILE_SKIP_COMPLETION_PORT_ON_SUCCESS, so every I/O is one packet as on Linux. An
// immediate failure queues nothing: the issuer posts the failed packet itself, so the worker
// that takes it sees the error.
//
// --skip-port-share F: before re-issuing its slot through the port, a worker issues further
// I/Os with the OVERLAPPED's hEvent = event | 1 while a draw stays below F (so a fraction F of
// all I/Os). The tagged handle tells the kernel not to queue a packet; the worker waits on the
// event inside a blocking region (on the kernel's port the wait itself releases a waiter).
// Those I/Os are counted in workload_stats.skip_port, not in the run's ops.

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/errors.hpp"
#include "io/overlapped_windows.hpp"
#include "metrics/clock.hpp"
#include "io/data_file.hpp"
#include "engine/workload.hpp"
#include "workloads/workloads.hpp"

namespace iocpbench::workloads {
namespace {

enum OpKind : std::uint32_t { kRead = 0, kWrite = 1 };
constexpr std::uint32_t kSkipPort = 0x100;  // an I/O that must never reach the port

std::string error_text(const char* what, DWORD error) {
  return std::string(what) + ": Windows error " + std::to_string(error);
}

class FileWorkload final : public Workload {
 public:
  explicit FileWorkload(const FileParams& p) : params_(p) {}
  ~FileWorkload() override { close(); }

  std::string_view name() const override { return "file"; }

  void open(const RunEnv& env) override {
    env_ = env;
    if (!env.worker_ports.empty()) {
      throw BadInput{"--dispatch", "per-thread is not implemented for the file workload on "
                                        "Windows yet (shared is)"};
    }
    const DataFileRequest request = data_file_request(params_);
    path_ = request.path;
    const DataFile data = prepare_data_file(request);  // never resizes a file that exists
    created_ = data.created;
    written_ = request.writes;
    blocks_ = data.bytes / params_.block_size;
    if (blocks_ == 0) throw BadInput{"--block-size", "larger than the file " + path_};

    const DWORD access = params_.op == FileOp::read ? GENERIC_READ : GENERIC_READ | GENERIC_WRITE;
    DWORD flags = FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OVERLAPPED;
    if (params_.direct) flags |= FILE_FLAG_NO_BUFFERING;
    file_ = CreateFileA(path_.c_str(), access, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr,
                        OPEN_EXISTING, flags, nullptr);
    if (file_ == INVALID_HANDLE_VALUE) {
      const DWORD error = GetLastError();
      if (params_.direct && error == ERROR_INVALID_PARAMETER) {
        throw BadInput{"--buffered", "the volume holding " + path_ +
                                              " refuses FILE_FLAG_NO_BUFFERING; pass --buffered"};
      }
      throw std::runtime_error(error_text(("--file: cannot open " + path_).c_str(), error));
    }
    if (params_.direct) check_sector_alignment();

    const std::size_t n = params_.outstanding;
    slots_ = std::vector<io::WinOp>(n);
    skip_slots_ = std::vector<io::WinOp>(n);  // the slot's tagged-event I/Os (same buffer)
    buffers_.assign(n, nullptr);
    events_.assign(n, nullptr);
    for (std::size_t i = 0; i < n; ++i) {
      void* p = VirtualAlloc(nullptr, params_.block_size, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
      if (p == nullptr) throw std::bad_alloc();
      std::memset(p, static_cast<int>(0xA5 ^ i), params_.block_size);
      buffers_[i] = p;
      slots_[i].index = static_cast<std::uint32_t>(i);
      skip_slots_[i].index = static_cast<std::uint32_t>(i);
      skip_slots_[i].kind = kSkipPort;
      if (params_.skip_port_share > 0) {
        events_[i] = CreateEventW(nullptr, TRUE, FALSE, nullptr);
        if (events_[i] == nullptr) throw std::runtime_error(error_text("CreateEvent", GetLastError()));
      }
    }
    source_ = std::make_unique<io::OverlappedSource>(*env.port, env.roles);
    source_->associate(file_, kFileKey);
  }

  void start() override {
    WorkerContext context;
    context.rng = 0xD1B54A32D192ED03ull;
    outstanding_.store(slots_.size());
    const std::uint64_t now = metrics::now_ns();
    for (auto& op : slots_) issue(op, context, now);
  }

  Completion on_packet(const port::Packet& packet, WorkerContext&) override {
    const auto* op = static_cast<const io::WinOp*>(packet.context);
    Completion c;
    if (op->kind & kSkipPort) {  // the platform queued a packet for a tagged-event I/O
      skip_packets_seen_.fetch_add(1, std::memory_order_relaxed);
      c.counted = false;
      return c;
    }
    c.t_start_ns = op->t_submit_ns;
    c.t_insert_ns = op->t_insert_ns;
    c.bytes = packet.bytes;
    c.error = packet.status != 0 || packet.bytes != params_.block_size;
    if (c.error) {
      if (packet.status != 0) {
        io_errors_.fetch_add(1, std::memory_order_relaxed);
        last_error_.store(packet.status, std::memory_order_relaxed);
      } else {
        short_transfers_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    return c;
  }

  void after_handler(const port::Packet& packet, const Completion&, std::uint64_t t_done_ns,
                     WorkerContext& worker) override {
    auto* op = static_cast<io::WinOp*>(packet.context);
    if (op->kind & kSkipPort) return;  // counted as an error in on_packet; not a slot
    if (env_.phase->load(std::memory_order_relaxed) == kStopping) {
      outstanding_.fetch_sub(1, std::memory_order_seq_cst);
      return;
    }
    if (params_.skip_port_share > 0) {
      const double share = params_.skip_port_share;
      while (static_cast<double>(worker.next_random() >> 11) * 0x1.0p-53 < share &&
             env_.phase->load(std::memory_order_relaxed) != kStopping) {
        t_done_ns = skip_port_io(skip_slots_[op->index], worker);
      }
    }
    issue(*op, worker, t_done_ns);  // resubmitted right now: no extra clock read
  }

  bool drain(std::chrono::steady_clock::time_point deadline) override {
    while (outstanding_.load() != 0) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
  }

  void close() override {
    if (file_ != INVALID_HANDLE_VALUE) {
      // Anything still in flight (a drain that timed out) is cancelled and waited for, so no
      // buffer is written after it is freed.
      CancelIoEx(file_, nullptr);
      wait_not_pending();
    }
    if (source_) {
      source_->stop();
      source_stats_ = source_->stats();
      post_failures_ = source_->post_failures();
      source_.reset();
    }
    if (file_ != INVALID_HANDLE_VALUE) {
      CloseHandle(file_);
      file_ = INVALID_HANDLE_VALUE;
    }
    for (void*& p : buffers_) {
      if (p != nullptr) VirtualFree(p, 0, MEM_RELEASE);
      p = nullptr;
    }
    for (HANDLE& e : events_) {
      if (e != nullptr) CloseHandle(e);
      e = nullptr;
    }
  }

  nlohmann::json stats(double window_s) const override {
    const std::uint64_t skip_ops = skip_ops_.load();
    return {{"file", path_},
            {"file_bytes", blocks_ * params_.block_size},
            {"file_created", created_},
            {"file_written", written_},
            {"direct_io_requested", params_.direct},
            // Windows cannot confirm FILE_FLAG_NO_BUFFERING after the open (Wine ignores it).
            {"direct_io_verified", nullptr},
            {"direct_io_flag", params_.direct ? "FILE_FLAG_NO_BUFFERING" : "none (buffered)"},
            {"sector_size", sector_size_},
            {"io_errors", io_errors_.load()},
            {"last_io_error", last_error_.load()},
            {"short_transfers", short_transfers_.load()},
            {"immediate_successes", immediate_ok_.load()},
            {"immediate_failures", immediate_failed_.load()},
            {"skip_port",
             {{"share", params_.skip_port_share},
              {"ops", skip_ops},
              {"bytes", skip_ops * params_.block_size},
              {"ops_per_s", window_s > 0 ? static_cast<double>(skip_ops) / window_s : 0.0},
              {"wait_mean_us", skip_ops == 0 ? 0.0
                                             : static_cast<double>(skip_wait_ns_.load()) / 1e3 /
                                                   static_cast<double>(skip_ops)},
              {"errors", skip_errors_.load()},
              {"packets_seen", skip_packets_seen_.load()},
              {"scope", "the measured window; these I/Os are not in the run's ops"}}},
            {"completion_source", source_ ? source_->stats() : source_stats_}};
  }

  std::uint64_t errors() const override {
    return (source_ ? source_->post_failures() : post_failures_) + skip_errors_.load() +
           skip_packets_seen_.load();
  }

 private:
  static constexpr ULONG_PTR kFileKey = 0x46494C45;  // "FILE"

  std::uint64_t next_offset(WorkerContext& rng) {
    const std::uint64_t block = params_.pattern == FilePattern::random
                                    ? rng.next_random() % blocks_
                                    : cursor_.fetch_add(1, std::memory_order_relaxed) % blocks_;
    return block * params_.block_size;
  }

  std::uint32_t next_kind(WorkerContext& rng) {
    switch (params_.op) {
      case FileOp::read: return kRead;
      case FileOp::write: return kWrite;
      case FileOp::mixed: return (rng.next_random() >> 32) & 1 ? kWrite : kRead;
    }
    return kRead;
  }

  BOOL start_io(io::WinOp& op) {
    void* buf = buffers_[op.index];
    return (op.kind & ~kSkipPort) == kWrite ? WriteFile(file_, buf, params_.block_size, nullptr, &op.ov)
                             : ReadFile(file_, buf, params_.block_size, nullptr, &op.ov);
  }

  void issue(io::WinOp& op, WorkerContext& rng, std::uint64_t t_submit) {
    op.reset(next_offset(rng));
    op.kind = next_kind(rng);
    op.t_submit_ns = t_submit;
    op.t_insert_ns = 0;
    if (start_io(op)) {
      immediate_ok_.fetch_add(1, std::memory_order_relaxed);  // its packet is queued all the same
      return;
    }
    const DWORD error = GetLastError();
    if (error == ERROR_IO_PENDING) return;
    // Failed at once: no packet will come, so the issuer posts the failure itself.
    immediate_failed_.fetch_add(1, std::memory_order_relaxed);
    source_->post(op, 0, error == 0 ? ERROR_GEN_FAILURE : error, kFileKey);
  }

  // One I/O kept out of the port: hEvent tagged with its low bit, waited on by this thread.
  // Returns the time it completed.
  std::uint64_t skip_port_io(io::WinOp& op, WorkerContext& rng) {
    HANDLE event = events_[op.index];
    op.reset(next_offset(rng));
    op.kind = next_kind(rng) | kSkipPort;
    op.ov.hEvent = reinterpret_cast<HANDLE>(reinterpret_cast<ULONG_PTR>(event) | 1);
    const std::uint64_t t0 = metrics::now_ns();
    bool ok = start_io(op) != FALSE;
    if (!ok && GetLastError() == ERROR_IO_PENDING) {
      port::BlockingRegion region;
      ok = WaitForSingleObject(event, INFINITE) == WAIT_OBJECT_0;
    }
    DWORD bytes = 0;
    if (ok) ok = GetOverlappedResult(file_, &op.ov, &bytes, FALSE) != FALSE;
    const std::uint64_t t1 = metrics::now_ns();
    op.ov.hEvent = nullptr;
    if (!ok || bytes != params_.block_size) {
      skip_errors_.fetch_add(1, std::memory_order_relaxed);
    } else if (env_.phase->load(std::memory_order_relaxed) == kMeasuring) {
      skip_ops_.fetch_add(1, std::memory_order_relaxed);
      skip_wait_ns_.fetch_add(t1 - t0, std::memory_order_relaxed);
    }
    return t1;
  }

  // Windows refuses unbuffered I/O not aligned to the volume's logical sector.
  void check_sector_alignment() {
    FILE_STORAGE_INFO info{};
    if (GetFileInformationByHandleEx(file_, FileStorageInfo, &info, sizeof info) &&
        info.LogicalBytesPerSector != 0) {
      sector_size_ = info.LogicalBytesPerSector;
    }
    if (params_.block_size % sector_size_ != 0) {
      throw BadInput{"--block-size", std::to_string(params_.block_size) +
                                              " is not a multiple of " +
                                              std::to_string(sector_size_) +
                                              ", the logical sector of " + path_ +
                                              " (or pass --buffered)"};
    }
  }

  void wait_not_pending() {
    const std::uint64_t deadline = metrics::now_ns() + 5'000'000'000ull;
    for (const auto& op : slots_) {
      while (op.pending() && metrics::now_ns() < deadline) Sleep(1);
    }
    for (const auto& op : skip_slots_) {
      while (op.pending() && metrics::now_ns() < deadline) Sleep(1);
    }
  }

  FileParams params_;
  RunEnv env_;
  std::string path_;
  bool created_ = false;  // iocpbench made the file (its marker): --file-size-mib applied
  bool written_ = false;  // --op write/mixed: the run writes into the file
  std::uint64_t blocks_ = 0;
  std::uint32_t sector_size_ = 512;
  HANDLE file_ = INVALID_HANDLE_VALUE;
  std::vector<io::WinOp> slots_, skip_slots_;
  std::vector<void*> buffers_;
  std::vector<HANDLE> events_;
  std::unique_ptr<io::OverlappedSource> source_;
  nlohmann::json source_stats_ = nlohmann::json::object();
  std::uint64_t post_failures_ = 0;
  std::atomic<std::uint64_t> outstanding_{0};
  std::atomic<std::uint64_t> cursor_{0};
  std::atomic<std::uint64_t> io_errors_{0}, short_transfers_{0};
  std::atomic<std::uint32_t> last_error_{0};
  std::atomic<std::uint64_t> immediate_ok_{0}, immediate_failed_{0};
  std::atomic<std::uint64_t> skip_ops_{0}, skip_wait_ns_{0}, skip_errors_{0},
      skip_packets_seen_{0};
};

}  // namespace

std::unique_ptr<Workload> make_file_workload(const FileParams& params) {
  return std::make_unique<FileWorkload>(params);
}

}  // namespace iocpbench::workloads
