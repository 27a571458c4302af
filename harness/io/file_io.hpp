#pragma once
// The file workload's transport (async_io.hpp): one data file opened for asynchronous I/O and
// `slots` block-sized buffers, one I/O in flight per slot. Opening applies the OS's direct-I/O
// rules: O_DIRECT and the statx alignment on Linux, FILE_FLAG_NO_BUFFERING and the logical
// sector on Windows. Per OS: file_io_linux.cpp, file_io_windows.cpp.

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

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

// One I/O issued outside the port and waited for by the issuing thread.
struct FileWaited {
  bool ok = false;  // completed without error, whole block
  std::uint64_t t_start_ns = 0, t_end_ns = 0;
};

class FileIo {
 public:
  FileIo();
  ~FileIo();
  FileIo(const FileIo&) = delete;
  FileIo& operator=(const FileIo&) = delete;

  // Opens the file, checks the alignment direct I/O needs, allocates the buffers and starts the
  // completion source(s). Throws BadInput (--buffered, --block-size) or std::runtime_error.
  void open(const FileIoOptions& options, const TransportEnv& env);
  // Slot `slot`'s next I/O, from any thread; its completion becomes a packet.
  void submit(std::uint32_t slot, bool write, std::uint64_t offset, std::uint64_t t_submit_ns);
  FileDone done(const port::Packet& packet);
  // --skip-port-share (Windows): an I/O of the slot's buffer that completes without a packet,
  // waited for by this thread inside a blocking region. Where the port has no such mode the
  // parameters refuse the flag before a run starts.
  FileWaited wait_outside_port(std::uint32_t slot, bool write, std::uint64_t offset);
  // Whether this OS has wait_outside_port (Windows); its stats block exists only there.
  bool outside_port_supported() const;
  // Cancels what is still in flight (waiting, bounded, until no buffer can be written), stops
  // the source(s), closes the file and frees the buffers. Idempotent.
  void close();

  // The workload_stats keys the backend owns: direct_io_verified and `completion_source`, plus
  // what only this OS has. Valid after close().
  nlohmann::json stats() const;
  std::uint64_t post_failures() const;
  // False where the backend keeps no live counters for the watchdog.
  bool progress(TransportProgress& out) const;
  // Whether workers submit the I/O themselves on a shared port (Linux's port path): then a
  // worker's exit could cancel it (Workload::worker_has_io_pending).
  bool workers_submit() const;
  bool pumps(unsigned worker) const;
  int pump(unsigned worker, unsigned wait_us);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace iocpbench::io
