#pragma once
// The file workload's transport (async_io.hpp): one data file opened for asynchronous I/O and
// `slots` block-sized buffers, one I/O in flight per slot. Opening applies the OS's direct-I/O
// rules: O_DIRECT and the statx alignment on Linux, FILE_FLAG_NO_BUFFERING and the logical
// sector on Windows. Per OS: file_io_linux.cpp, file_io_windows.cpp.

#include <cstdint>
#include <memory>
#include <string>

#include "io/async_io.hpp"

namespace iocpbench::io {

struct FileIoOptions {
  std::string path;
  bool writes = false;  // opened for writing too (--op write or mixed)
  bool direct = true;   // O_DIRECT / FILE_FLAG_NO_BUFFERING (no --buffered)
  std::uint32_t block_bytes = 4096;
  unsigned slots = 1;
  bool outside_port = false;  // Windows: --skip-port-share (an event per slot)
};

// One completion, read back from its packet.
struct FileDone {
  std::uint32_t slot = 0;
  std::uint32_t bytes = 0;
  std::uint32_t status = 0;  // the OS's error; 0 = success
  std::uint64_t t_submit_ns = 0;
  std::uint64_t t_insert_ns = 0;  // 0: unknown (the kernel queued it)
  bool outside_port = false;      // a packet for an I/O that must never have reached the port
};

// A packet's FileDone, read back through its context: each OS's record of one I/O (`Op`) keeps
// its slot as `index` and its times as `t_submit_ns` and `t_insert_ns`.
template <typename Op>
FileDone file_done(const port::Packet& packet) {
  const auto* op = static_cast<const Op*>(packet.context);
  return FileDone{.slot = op->index,
                  .bytes = packet.bytes,
                  .status = packet.status,
                  .t_submit_ns = op->t_submit_ns,
                  .t_insert_ns = op->t_insert_ns};
}

// One I/O issued outside the port and waited for by the issuing thread.
struct FileWaited {
  bool ok = false;  // completed without error, whole block
  std::uint64_t t_start_ns = 0, t_end_ns = 0;
};

class FileIo : public Transport {
 public:
  // Opens the file, checks the alignment direct I/O needs, allocates the buffers and starts the
  // completion source(s). Throws BadInput (--buffered, --block-size) or std::runtime_error.
  virtual void open(const FileIoOptions& options, const TransportEnv& env) = 0;
  // Slot `slot`'s next I/O, from any thread; its completion becomes a packet. Where skip on
  // success was granted (Windows) and the I/O completed at once, no packet is queued: with
  // `done_now` its completion is written there and submit returns true (the caller handles
  // it); without, the transport posts it into the port. Linux: always a packet, false.
  virtual bool submit(std::uint32_t slot, bool write, std::uint64_t offset,
                      std::uint64_t t_submit_ns, port::Packet* done_now) = 0;
  virtual FileDone done(const port::Packet& packet) = 0;
  // --skip-port-share (Windows): an I/O of the slot's buffer that completes without a packet,
  // waited for by this thread inside a blocking region. Where the port has no such mode the
  // parameters refuse the flag before a run starts.
  virtual FileWaited wait_outside_port(std::uint32_t slot, bool write, std::uint64_t offset) = 0;
  // Whether skip on success was granted on the file (Windows, when asked): submit may then
  // complete an I/O at once without a packet.
  virtual bool skip_granted() const = 0;
  // Whether this OS has wait_outside_port (Windows); its stats block exists only there.
  virtual bool outside_port_supported() const = 0;
  // stats() also holds direct_io_verified (Windows: null, it cannot tell).
};

// This OS's backend.
std::unique_ptr<FileIo> make_file_io();

}  // namespace iocpbench::io
