// The file transport on Linux (file_io.hpp): the file opened with O_DIRECT unless --buffered,
// buffers from posix_memalign, each slot's I/O an io::IoOp through io::SourceSet: one ring with
// its completion thread (or read by the port itself on the port path), or per-thread dispatch's
// ring per worker, submitted and reaped by that worker into its own port, so that a slot's I/O
// never leaves the thread that issued it.

#include "io/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

#include "core/errors.hpp"
#include "io/completion_source_linux.hpp"
#include "io/skip_on_success.hpp"
#include "io/source_set_linux.hpp"

namespace iocpbench::io {

void require_dispatch(const TransportEnv&, const char*) {}  // every dispatch is implemented

bool skip_on_success_supported() { return false; }

const char* skip_on_success_refusal() {
  return "Linux has no skip-on-success mode (every completion is queued as a packet); use it "
         "with the Windows build";
}

namespace {

constexpr const char* kSkipScope =
    "Linux has no skip-on-success mode: every completion is a packet";

class RingFileIo final : public RingTransport<FileIo> {
 public:
  ~RingFileIo() override { close(); }

  void open(const FileIoOptions& o, const TransportEnv& env) override {
    options_ = o;
    skip_.requested = env.skip_requested;  // nothing to ask: io_uring queues every completion
    skip_.handles = 1;
    open_file();
    make_slots();
    SourceSetOptions set;
    set.port = env.port;
    set.worker_ports = env.worker_ports;
    set.roles = env.roles;
    set.units = o.slots;  // one I/O in flight per slot
    set.port_reads = env.port_reads;
    set.unit_name = "slot";
    open_sources(set);
  }

  bool submit(std::uint32_t slot, bool write, std::uint64_t offset, std::uint64_t t_submit_ns,
              port::Packet*) override {
    IoOp& op = slots_[slot];
    op.offset = offset;
    op.done = 0;
    op.kind = write ? IoOp::Kind::write : IoOp::Kind::read;
    op.t_submit_ns = t_submit_ns;
    sources_.submit(op);
    return false;  // io_uring: every completion is a packet
  }

  FileDone done(const port::Packet& packet) override { return file_done<IoOp>(packet); }

  FileWaited wait_outside_port(std::uint32_t, bool, std::uint64_t) override {
    throw std::logic_error("--skip-port-share needs a kernel completion port");
  }
  bool outside_port_supported() const override { return false; }
  bool skip_granted() const override { return false; }

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

  nlohmann::json stats() const override {
    return {{"direct_io_verified", direct_verified_},
            {"completion_source", sources_.to_json()},
            {"skip_on_success", to_json(skip_, kSkipScope)}};
  }

 private:
  void open_file() {
    int flags = (options_.writes ? O_RDWR : O_RDONLY) | O_CLOEXEC;
    if (options_.direct) flags |= O_DIRECT;
    fd_ = ::open(options_.path.c_str(), flags);
    if (fd_ < 0 && options_.direct && errno == EINVAL) {
      throw BadInput{"--buffered", "the file system holding " + options_.path +
                                       " refuses O_DIRECT; pass --buffered to measure "
                                       "through the page cache"};
    }
    if (fd_ < 0) {
      throw std::runtime_error("--file: cannot open " + options_.path + ": " +
                               std::strerror(errno));
    }
    direct_verified_ = (::fcntl(fd_, F_GETFL) & O_DIRECT) != 0;
    if (options_.direct) check_direct_alignment();
  }

  // Direct I/O needs offsets and sizes aligned to what the file system says (statx
  // STATX_DIOALIGN, Linux 6.1+); refuse a block size that would fail every I/O.
  void check_direct_alignment() const {
#ifdef STATX_DIOALIGN
    struct statx sx {};
    if (::statx(fd_, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
        (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align != 0) {
      if (options_.block_bytes % sx.stx_dio_offset_align != 0) {
        throw BadInput{"--block-size", std::to_string(options_.block_bytes) +
                                           " is not a multiple of " +
                                           std::to_string(sx.stx_dio_offset_align) +
                                           ", the direct-I/O alignment of " + options_.path +
                                           " (or pass --buffered)"};
      }
    }
#endif
  }

  void make_slots() {
    slots_.resize(options_.slots);
    buffers_.resize(options_.slots, nullptr);
    for (unsigned i = 0; i < options_.slots; ++i) {
      void* p = nullptr;
      if (posix_memalign(&p, 4096, options_.block_bytes) != 0) throw std::bad_alloc();
      std::memset(p, static_cast<int>(0xA5 ^ i), options_.block_bytes);
      buffers_[i] = p;
      IoOp& op = slots_[i];
      op.fd = fd_;
      op.buf = p;
      op.len = options_.block_bytes;
      op.key = i;
      op.index = i;
    }
  }

  FileIoOptions options_;
  SkipOnSuccessCounts skip_;
  bool direct_verified_ = false;
  int fd_ = -1;
  std::vector<IoOp> slots_;
  std::vector<void*> buffers_;
};

}  // namespace

std::unique_ptr<FileIo> make_file_io() {
  return std::make_unique<RingFileIo>();
}

}  // namespace iocpbench::io
