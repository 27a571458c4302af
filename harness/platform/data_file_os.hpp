#pragma once
// The OS calls behind io/data_file.cpp (whose rules are in io/data_file.hpp), one
// implementation per OS: data_file_os_linux.cpp (stat, O_DIRECT, BLKGETSIZE64; a file's
// identity is its device and inode), data_file_os_windows.cpp (std::filesystem, CreateFile,
// FILE_FLAG_NO_BUFFERING; a file's identity is its volume serial and file index).
//
// Each check returns the reason a path cannot be used, phrased in the OS's own terms, for the
// caller's "--file: '<path>' <reason>"; an empty reason means it can.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace iocpbench::platform {

struct PathState {
  bool exists = false;
  bool regular = false;  // a regular file (else, where allowed, a block device)
  std::uint64_t bytes = 0;
};

// What is at `path` (a link followed); refuses what can never be a data file (a directory, a
// FIFO, a dangling link, ...).
std::string inspect_data_path(const std::string& path, PathState& out);
// The identity of the regular file at `path` as the marker's lines after `header`; empty when
// it cannot be read.
std::string file_identity(const std::string& path, const char* header);
// The first bytes of a small file (a marker); empty when it cannot be read.
std::string read_small_file(const std::string& path);
// What a file too small to hold one block may be (Linux: /proc, /sys); else empty.
std::string small_file_note(const std::string& path);
// Whether the existing file opens for the I/O asked for; `op_text` names the flag that writes.
std::string open_refusal(const std::string& path, bool writes, bool direct,
                         const std::string& op_text);
// Whether a file can be created at `path` (its directory exists and takes a new file, probed
// with a file of our own that is removed at once, with direct I/O when asked for).
std::string create_refusal(const std::string& path, bool direct);

// Writes `bytes` bytes into a temporary file beside `path` and renames it into place; `fill`
// makes each chunk (called with the chunk's words). On a fault the partial file is removed and
// the result names it: the step that failed ("create", "fill", "write", "rename a new file to")
// and, where the OS says, ": <reason>"; empty on success.
struct WriteFault {
  std::string what;
  std::string reason;
  bool failed() const { return !what.empty(); }
};
WriteFault write_new_file(const std::string& path, std::uint64_t bytes,
                          const std::function<void(std::uint64_t*, std::size_t)>& fill);
// Writes `text` to `path` through a temporary name, unless something that is not a file
// starting with `header` is there (never overwritten). Faults are ignored: without a marker
// the data file only counts as not ours.
void write_marker_file(const std::string& path, const std::string& text, const char* header);

}  // namespace iocpbench::platform
