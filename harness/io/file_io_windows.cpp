// The file transport on Windows (file_io.hpp): overlapped ReadFile/WriteFile of one block each
// on a file opened with FILE_FLAG_OVERLAPPED | FILE_FLAG_NO_BUFFERING (unless --buffered);
// buffers from VirtualAlloc (page-aligned, so sector-aligned). The file is associated with the
// run's port when it is `win32` (the kernel queues each completion), else with the private
// IOCP of io::OverlappedSource, whose thread moves completions into the port.
//
// Skip on success (--skip-on-success; the file's default is off): off, an immediate success
// (ReadFile returns TRUE) still queues its packet, so every I/O is one packet as on Linux. On,
// the handle asks for FILE_SKIP_COMPLETION_PORT_ON_SUCCESS after its association; where Windows
// grants it an immediate success queues nothing, so the issuer takes the completion: a worker's
// re-issue gets it back in `done_now` and handles it on its own thread (engine/pool.hpp), and
// any other issuer (start(), the pacer) posts it into the port itself. Where Windows refuses
// the mode the run goes on with packets and the record says it was not granted. An immediate
// failure queues nothing either way: the issuer posts the failed packet itself, so the worker
// that takes it sees the error.
//
// wait_outside_port (--skip-port-share): the I/O is issued with the OVERLAPPED's hEvent =
// event | 1. The tagged handle tells the kernel not to queue a packet; the worker waits on the
// event inside a blocking region (on the kernel's port the wait itself releases a waiter).

#include "io/file_io.hpp"

#include <atomic>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

#include "core/errors.hpp"
#include "io/overlapped_windows.hpp"
#include "io/skip_on_success.hpp"
#include "metrics/clock.hpp"
#include "port/blocking_region.hpp"

namespace iocpbench::io {
namespace {

enum FileOpKind : std::uint32_t { kRead = 0, kWrite = 1 };
constexpr std::uint32_t kOutsidePort = 0x100;  // an I/O that must never reach the port
constexpr ULONG_PTR kFileKey = 0x46494C45;     // "FILE"
constexpr const char* kFileSkipScope =
    "the whole run; immediate: I/Os that succeeded at once on the granted handle (no packet), "
    "handled_inline by the worker that issued them or posted_by_issuer into the port";

std::string error_text(const std::string& what, DWORD error) {
  return what + ": Windows error " + std::to_string(error);
}

}  // namespace

bool skip_on_success_supported() { return true; }

const char* skip_on_success_refusal() { return ""; }

void require_dispatch(const TransportEnv& env, const char* workload) {
  if (!env.worker_ports.empty()) {
    throw BadInput{"--dispatch", std::string("per-thread is not implemented for the ") + workload +
                                     " workload on Windows yet (shared is)"};
  }
}

namespace {

class OverlappedFileIo final : public FileIo {
 public:
  ~OverlappedFileIo() override { close(); }

  void open(const FileIoOptions& o, const TransportEnv& env) override {
    options_ = o;
    open_file();
    make_slots();
    source_ = std::make_unique<OverlappedSource>(*env.port, env.roles);
    source_->associate(file_, kFileKey);
    ask_skip_on_success(env);
  }

  bool submit(std::uint32_t slot, bool write, std::uint64_t offset, std::uint64_t t_submit_ns,
              port::Packet* done_now) override {
    WinOp& op = slots_[slot];
    op.reset(offset);
    op.kind = write ? kWrite : kRead;
    op.t_submit_ns = t_submit_ns;
    op.t_insert_ns = 0;
    if (start_io(op)) {
      immediate_ok_.fetch_add(1, std::memory_order_relaxed);
      if (!skip_granted_) return false;  // its packet is queued all the same
      return completed_at_once(op, done_now);
    }
    const DWORD error = GetLastError();
    if (error == ERROR_IO_PENDING) return false;
    // Failed at once: no packet will come, so the issuer posts the failure itself.
    immediate_failed_.fetch_add(1, std::memory_order_relaxed);
    source_->post(op, 0, error == 0 ? ERROR_GEN_FAILURE : error, kFileKey);
    return false;
  }

  bool skip_granted() const override { return skip_granted_; }

  FileDone done(const port::Packet& packet) override {
    const auto* op = static_cast<const WinOp*>(packet.context);
    FileDone d = file_done<WinOp>(packet);
    d.outside_port = (op->kind & kOutsidePort) != 0;  // the platform queued a tagged-event I/O
    if (packet.status != 0 && !d.outside_port) {
      last_error_.store(packet.status, std::memory_order_relaxed);
    }
    return d;
  }

  FileWaited wait_outside_port(std::uint32_t slot, bool write, std::uint64_t offset) override {
    WinOp& op = outside_[slot];
    HANDLE event = events_[slot];
    op.reset(offset);
    op.kind = (write ? kWrite : kRead) | kOutsidePort;
    op.ov.hEvent = reinterpret_cast<HANDLE>(reinterpret_cast<ULONG_PTR>(event) | 1);
    FileWaited w;
    w.t_start_ns = metrics::now_ns();
    bool ok = start_io(op) != FALSE;
    if (!ok && GetLastError() == ERROR_IO_PENDING) {
      port::BlockingRegion region;
      ok = WaitForSingleObject(event, INFINITE) == WAIT_OBJECT_0;
    }
    DWORD bytes = 0;
    if (ok) ok = GetOverlappedResult(file_, &op.ov, &bytes, FALSE) != FALSE;
    w.t_end_ns = metrics::now_ns();
    op.ov.hEvent = nullptr;
    w.ok = ok && bytes == options_.block_bytes;
    return w;
  }

  bool outside_port_supported() const override { return true; }

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
      closed_errors_ = source_->post_failures();
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

  nlohmann::json stats() const override {
    return {// Windows cannot confirm FILE_FLAG_NO_BUFFERING after the open (Wine ignores it).
            {"direct_io_verified", nullptr},
            {"direct_io_flag", options_.direct ? "FILE_FLAG_NO_BUFFERING" : "none (buffered)"},
            {"sector_size", sector_size_},
            {"last_io_error", last_error_.load()},
            {"immediate_successes", immediate_ok_.load()},
            {"immediate_failures", immediate_failed_.load()},
            {"skip_on_success", to_json(skip_, kFileSkipScope)},
            {"completion_source", source_ ? source_->stats() : source_stats_}};
  }

  std::uint64_t errors() const override {
    return source_ ? source_->post_failures() : closed_errors_;
  }

  bool progress(TransportProgress&) const override { return false; }  // no live counts yet

 private:
  void open_file() {
    const DWORD access = options_.writes ? GENERIC_READ | GENERIC_WRITE : GENERIC_READ;
    DWORD flags = FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OVERLAPPED;
    if (options_.direct) flags |= FILE_FLAG_NO_BUFFERING;
    file_ = CreateFileA(options_.path.c_str(), access, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr,
                        OPEN_EXISTING, flags, nullptr);
    if (file_ == INVALID_HANDLE_VALUE) {
      const DWORD error = GetLastError();
      if (options_.direct && error == ERROR_INVALID_PARAMETER) {
        throw BadInput{"--buffered", "the volume holding " + options_.path +
                                         " refuses FILE_FLAG_NO_BUFFERING; pass --buffered"};
      }
      throw std::runtime_error(error_text("--file: cannot open " + options_.path, error));
    }
    if (options_.direct) check_sector_alignment();
  }

  // Windows refuses unbuffered I/O not aligned to the volume's logical sector.
  void check_sector_alignment() {
    FILE_STORAGE_INFO info{};
    if (GetFileInformationByHandleEx(file_, FileStorageInfo, &info, sizeof info) &&
        info.LogicalBytesPerSector != 0) {
      sector_size_ = info.LogicalBytesPerSector;
    }
    if (options_.block_bytes % sector_size_ != 0) {
      throw BadInput{"--block-size", std::to_string(options_.block_bytes) +
                                         " is not a multiple of " + std::to_string(sector_size_) +
                                         ", the logical sector of " + options_.path +
                                         " (or pass --buffered)"};
    }
  }

  void make_slots() {
    const std::size_t n = options_.slots;
    slots_ = std::vector<WinOp>(n);
    outside_ = std::vector<WinOp>(n);
    buffers_.assign(n, nullptr);
    events_.assign(n, nullptr);
    for (std::size_t i = 0; i < n; ++i) {
      void* p =
          VirtualAlloc(nullptr, options_.block_bytes, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
      if (p == nullptr) throw std::bad_alloc();
      std::memset(p, static_cast<int>(0xA5 ^ i), options_.block_bytes);
      buffers_[i] = p;
      slots_[i].index = static_cast<std::uint32_t>(i);
      outside_[i].index = static_cast<std::uint32_t>(i);
      outside_[i].kind = kOutsidePort;
      if (options_.outside_port) {
        events_[i] = CreateEventW(nullptr, TRUE, FALSE, nullptr);
        if (events_[i] == nullptr)
          throw std::runtime_error(error_text("CreateEvent", GetLastError()));
      }
    }
  }

  // Skip on success where the run asks for it; a refusal leaves the handle queueing packets.
  void ask_skip_on_success(const TransportEnv& env) {
    skip_.requested = env.skip_requested;
    skip_.handles = 1;
    skip_.asked = env.skip_on_success;
    if (!skip_.asked) return;
    skip_granted_ =
        SetFileCompletionNotificationModes(file_, FILE_SKIP_COMPLETION_PORT_ON_SUCCESS) != FALSE;
    if (skip_granted_) {
      skip_.granted = 1;
    } else {
      skip_.refusal_error = GetLastError();
    }
  }

  // An immediate success with skip on success granted: no packet was queued, so its completion
  // goes to `done_now` (the issuing worker handles it) or, without one, into the port.
  bool completed_at_once(WinOp& op, port::Packet* done_now) {
    skip_.immediate.fetch_add(1, std::memory_order_relaxed);
    const auto bytes = static_cast<std::uint32_t>(op.ov.InternalHigh);
    if (done_now == nullptr) {
      skip_.posted_by_issuer.fetch_add(1, std::memory_order_relaxed);
      source_->post(op, bytes, 0, kFileKey);
      return false;
    }
    skip_.handled_inline.fetch_add(1, std::memory_order_relaxed);
    *done_now = port::Packet{.bytes = bytes, .status = 0, .key = kFileKey, .context = &op};
    return true;
  }

  BOOL start_io(WinOp& op) {
    void* buf = buffers_[op.index];
    return (op.kind & ~kOutsidePort) == kWrite
               ? WriteFile(file_, buf, options_.block_bytes, nullptr, &op.ov)
               : ReadFile(file_, buf, options_.block_bytes, nullptr, &op.ov);
  }

  void wait_not_pending() {
    const std::uint64_t deadline = metrics::now_ns() + 5'000'000'000ull;
    for (const auto& op : slots_) {
      while (op.pending() && metrics::now_ns() < deadline) Sleep(1);
    }
    for (const auto& op : outside_) {
      while (op.pending() && metrics::now_ns() < deadline) Sleep(1);
    }
  }

  FileIoOptions options_;
  std::uint32_t sector_size_ = 512;
  HANDLE file_ = INVALID_HANDLE_VALUE;
  std::vector<WinOp> slots_, outside_;  // outside: the slot's tagged-event I/Os (same buffer)
  std::vector<void*> buffers_;
  std::vector<HANDLE> events_;
  std::unique_ptr<OverlappedSource> source_;
  nlohmann::json source_stats_ = nlohmann::json::object();
  std::uint64_t closed_errors_ = 0;
  std::atomic<std::uint32_t> last_error_{0};
  std::atomic<std::uint64_t> immediate_ok_{0}, immediate_failed_{0};
  SkipOnSuccessCounts skip_;
  bool skip_granted_ = false;  // FILE_SKIP_COMPLETION_PORT_ON_SUCCESS on file_
};

}  // namespace

std::unique_ptr<FileIo> make_file_io() {
  return std::make_unique<OverlappedFileIo>();
}

}  // namespace iocpbench::io
