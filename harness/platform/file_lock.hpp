#pragma once
// An exclusive lock on a small lock file beside the file it guards (a results file, a data file
// being created), held for the holder's life. The OS drops the lock when the process ends,
// however it ends (flock on POSIX, LockFileEx on Windows), so a crash leaves at most a stale
// lock file that blocks nothing: the next process takes it over. The lock file holds
// "iocpbench pid N" so that a refusal can name the other process, and is removed on release.
// One implementation per OS (file_lock_posix.cpp, file_lock_windows.cpp).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

namespace iocpbench::platform {

class FileLock {
 public:
  static constexpr std::intptr_t kNoHandle = -1;
  FileLock() = default;
  // Adopts a locked handle (the per-OS try_lock_file makes these).
  FileLock(std::filesystem::path path, std::intptr_t handle)
      : path_(std::move(path)), handle_(handle) {}
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() { release(); }

  bool held() const { return handle_ != kNoHandle; }
  const std::filesystem::path& path() const { return path_; }
  // Removes the lock file, then drops the lock (in that order, so a process that opened the
  // old file sees it is gone and retries on a fresh one). Idempotent.
  void release();

 private:
  std::filesystem::path path_;
  std::intptr_t handle_ = kNoHandle;  // a POSIX fd or a Windows HANDLE
};

// The outcome of one try: the lock, or who holds it, or why the lock file cannot be used.
struct LockAttempt {
  FileLock lock;                          // held on success
  bool busy = false;                      // another process (or another FileLock) holds it
  std::optional<std::uint64_t> holder_pid;  // from the lock file, when it could be read
  std::string error;                      // neither held nor busy: the reason
};

// Tries once, never waits. The lock file is created when missing; an existing file that is not
// an iocpbench lock file (other content) is never written: that is an error.
LockAttempt try_lock_file(const std::filesystem::path& lock_path);

// Waits for the lock, trying every 20 ms for at most `wait_s` seconds (then busy).
LockAttempt wait_lock_file(const std::filesystem::path& lock_path, double wait_s);

// The lock file guarding `target`: `<target>.lock` in the same directory.
std::filesystem::path lock_path_for(const std::filesystem::path& target);

// The results file `json` locked for the writer's whole life; when that fails, an unheld lock
// and `problem` says why, naming the other process ("'x.json' is being written by another
// iocpbench process (pid 123)"), for a BadInput on --json.
// `busy`, when given, says whether another process holds it (rather than an error).
FileLock lock_results_file(const std::filesystem::path& json, std::string& problem,
                           bool* busy = nullptr);

// The text a lock file holds, and its parse (nothing when it is not one of ours; an empty file
// is ours: a holder that died between creating and writing it).
std::string lock_file_text(std::uint64_t pid);
bool parse_lock_file_text(const std::string& text, std::optional<std::uint64_t>& pid);

}  // namespace iocpbench::platform
