// FileLock on POSIX: flock(2) on <target>.lock. flock belongs to the open file description, so
// the kernel drops it when the holder exits or is killed; the file left behind by a crash is
// locked again by the next process (its stale pid is overwritten). Release unlinks the file
// while still holding the lock, and a new holder checks that the path still names the file it
// locked (else it raced with a release and retries), so two holders never lock different files.

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "platform/file_lock.hpp"

namespace iocpbench::platform {

namespace {

std::string read_small(int fd) {
  char buffer[80];
  const ssize_t n = ::pread(fd, buffer, sizeof buffer, 0);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace

void FileLock::release() {
  if (handle_ == kNoHandle) return;
  const int fd = static_cast<int>(handle_);
  ::unlink(path_.c_str());
  ::close(fd);  // drops the flock
  handle_ = kNoHandle;
}

LockAttempt try_lock_file(const std::filesystem::path& lock_path) {
  LockAttempt attempt;
  for (int tries = 0; tries < 100; ++tries) {
    // O_NOFOLLOW: a symbolic link planted at the lock's name is never followed and written.
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
      attempt.error = "cannot open the lock file '" + lock_path.string() + "': " +
                      std::strerror(errno);
      return attempt;
    }
    struct stat held {};
    if (::fstat(fd, &held) != 0 || !S_ISREG(held.st_mode)) {
      ::close(fd);
      attempt.error = "the lock file '" + lock_path.string() + "' is not a regular file";
      return attempt;
    }
    std::optional<std::uint64_t> pid;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string text = read_small(fd);
      ::close(fd);
      if (err == EWOULDBLOCK) {
        attempt.busy = true;
        if (parse_lock_file_text(text, pid)) attempt.holder_pid = pid;
        return attempt;
      }
      attempt.error = "cannot lock '" + lock_path.string() + "': " + std::strerror(err);
      return attempt;
    }
    struct stat now {};
    if (::stat(lock_path.c_str(), &now) != 0 || now.st_ino != held.st_ino ||
        now.st_dev != held.st_dev) {
      ::close(fd);  // released and removed by its last holder in between: try a fresh file
      continue;
    }
    if (!parse_lock_file_text(read_small(fd), pid)) {
      ::close(fd);
      attempt.error = "'" + lock_path.string() + "' exists and is not an iocpbench lock file "
                      "(left untouched; remove or rename it)";
      return attempt;
    }
    const std::string text = lock_file_text(static_cast<std::uint64_t>(::getpid()));
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      const int err = errno;
      ::unlink(lock_path.c_str());
      ::close(fd);
      attempt.error = "cannot write the lock file '" + lock_path.string() + "': " +
                      std::strerror(err);
      return attempt;
    }
    attempt.lock = FileLock(lock_path, fd);
    return attempt;
  }
  attempt.error = "the lock file '" + lock_path.string() + "' kept being replaced";
  return attempt;
}

}  // namespace iocpbench::platform
