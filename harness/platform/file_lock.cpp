// The OS-independent part of FileLock: names, the lock file's text, the results-file refusal.

#include "platform/file_lock.hpp"

#include <chrono>
#include <charconv>
#include <thread>

namespace iocpbench::platform {

namespace {
constexpr std::string_view kPrefix = "iocpbench pid ";
}

FileLock::FileLock(FileLock&& other) noexcept
    : path_(std::move(other.path_)), handle_(std::exchange(other.handle_, kNoHandle)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    handle_ = std::exchange(other.handle_, kNoHandle);
  }
  return *this;
}

std::filesystem::path lock_path_for(const std::filesystem::path& target) {
  return std::filesystem::path(target.string() + ".lock");
}

std::string lock_file_text(std::uint64_t pid) {
  return std::string(kPrefix) + std::to_string(pid) + "\n";
}

bool parse_lock_file_text(const std::string& text, std::optional<std::uint64_t>& pid) {
  pid.reset();
  if (text.empty()) return true;  // created, not yet written (or its holder died right then)
  if (text.size() > 64 || text.compare(0, kPrefix.size(), kPrefix) != 0) return false;
  std::uint64_t value = 0;
  const char* begin = text.data() + kPrefix.size();
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin || (ptr != end && *ptr != '\n')) return false;
  pid = value;
  return true;
}

LockAttempt wait_lock_file(const std::filesystem::path& lock_path, double wait_s) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(wait_s));
  for (;;) {
    LockAttempt attempt = try_lock_file(lock_path);
    if (!attempt.busy || std::chrono::steady_clock::now() >= deadline) return attempt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

FileLock lock_results_file(const std::filesystem::path& json, std::string& problem,
                           bool* busy) {
  const std::filesystem::path lock_path = lock_path_for(json);
  LockAttempt attempt = try_lock_file(lock_path);
  if (busy) *busy = attempt.busy;
  if (attempt.lock.held()) return std::move(attempt.lock);
  if (attempt.busy) {
    problem = "'" + json.string() + "' is being written by another iocpbench process (" +
              (attempt.holder_pid ? "pid " + std::to_string(*attempt.holder_pid)
                                  : std::string("pid unknown")) +
              ", lock file '" + lock_path.string() + "'); wait for it to finish or choose "
              "another file";
  } else {
    problem = "cannot lock '" + json.string() + "': " + attempt.error;
  }
  return {};
}

}  // namespace iocpbench::platform
