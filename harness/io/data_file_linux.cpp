// The data file on Linux (the rules are in data_file.hpp). A file's identity for the marker is
// its device and inode; a block device's size comes from BLKGETSIZE64.

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "core/errors.hpp"
#include "core/random.hpp"
#include "platform/file_lock.hpp"
#include "io/data_file.hpp"

namespace iocpbench::workloads {
namespace {


constexpr const char* kMarkerHeader = "iocpbench data file\n";
constexpr double kCreateWaitS = 600;  // another run creating the same file: at most this long

std::string who(const DataFileRequest& r) {
  return (r.named ? "'" : "the default data file '") + r.path + "'";
}

[[noreturn]] void refuse(const DataFileRequest& r, const std::string& why) {
  throw BadInput{"--file", who(r) + " " + why};
}

std::string op_text(const DataFileRequest& r) {
  return r.writes ? "--op write/mixed" : "--op read";
}

std::string identity_text(const struct stat& st) {
  return std::string(kMarkerHeader) + "device " + std::to_string(st.st_dev) + "\ninode " +
         std::to_string(st.st_ino) + "\n";
}

std::string read_small_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return {};
  char buffer[256];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  ::close(fd);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

// Our marker beside `path` names exactly this file.
bool made_by_iocpbench(const std::string& path, const struct stat& st) {
  return S_ISREG(st.st_mode) && read_small_file(data_file_marker(path)) == identity_text(st);
}

// Writes the marker for the file just created, unless a file of that name that is not one of
// our markers is there (never overwritten: the data file then simply counts as not ours).
void write_marker(const std::string& path, const struct stat& st) {
  const std::string marker = data_file_marker(path);
  struct stat existing {};
  if (::lstat(marker.c_str(), &existing) == 0 &&
      (!S_ISREG(existing.st_mode) || read_small_file(marker).rfind(kMarkerHeader, 0) != 0)) {
    return;
  }
  const std::string temp = marker + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return;
  const std::string text = identity_text(st);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (::close(fd) != 0 || !ok || ::rename(temp.c_str(), marker.c_str()) != 0) {
    ::unlink(temp.c_str());
  }
}

enum class State { missing, usable, recreate };

struct Found {
  State state = State::missing;
  std::uint64_t bytes = 0;
  bool ours = false;
};

// What is at the path now; refuses what can never be used (a directory, a FIFO, ...).
Found inspect(const DataFileRequest& r) {
  Found found;
  struct stat link {};
  if (::lstat(r.path.c_str(), &link) != 0) {
    if (errno == ENOENT) return found;
    refuse(r, std::string("cannot be used: ") + std::strerror(errno));
  }
  struct stat st {};
  if (::stat(r.path.c_str(), &st) != 0) {
    const int err = errno;
    if (S_ISLNK(link.st_mode) && err == ENOENT) {
      std::error_code ec;
      const auto target = std::filesystem::read_symlink(r.path, ec);
      refuse(r, "is a dangling symbolic link (to '" + target.string() +
                    "', which does not exist); iocpbench does not create files through links");
    }
    refuse(r, std::string("cannot be used: ") + std::strerror(err));
  }
  const char* not_a_file = S_ISDIR(st.st_mode)    ? "is a directory"
                           : S_ISFIFO(st.st_mode) ? "is a FIFO (a named pipe)"
                           : S_ISCHR(st.st_mode)  ? "is a character device"
                           : S_ISSOCK(st.st_mode) ? "is a socket"
                                                  : nullptr;
  if (not_a_file) refuse(r, std::string(not_a_file) + ", not a regular file or block device");
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
    refuse(r, "is not a regular file or block device");
  }
  if (S_ISBLK(st.st_mode)) {
    const int fd = ::open(r.path.c_str(), O_RDONLY | O_CLOEXEC);
    std::uint64_t size = 0;
    if (fd < 0 || ::ioctl(fd, BLKGETSIZE64, &size) != 0) {
      const int err = errno;
      if (fd >= 0) ::close(fd);
      refuse(r, std::string("is a block device whose size cannot be read: ") + std::strerror(err));
    }
    ::close(fd);
    found.bytes = size;
  } else {
    found.bytes = static_cast<std::uint64_t>(st.st_size);
  }
  found.ours = made_by_iocpbench(r.path, st);
  // Only iocpbench's own default file is ever replaced, and only to give it the size asked for.
  found.state = !r.named && found.ours && found.bytes != r.create_bytes ? State::recreate
                                                                        : State::usable;
  return found;
}

// An existing file: big enough, writable only with consent, and it opens for the I/O asked for.
void check_usable(const DataFileRequest& r, const Found& found) {
  if (found.bytes < r.block_bytes) {
    const bool pseudo = r.path.rfind("/proc/", 0) == 0 || r.path.rfind("/sys/", 0) == 0;
    refuse(r, "has " + std::to_string(found.bytes) + " bytes, less than one block (" +
                  std::to_string(r.block_bytes) + " bytes, --block-size)" +
                  (pseudo ? "; files in /proc and /sys report no size and cannot be measured"
                          : ""));
  }
  if (r.writes && !found.ours && !r.overwrite) {
    throw BadInput{"--overwrite", who(r) + " exists and was not created by iocpbench; " +
                                      op_text(r) + " would overwrite its data: pass --overwrite "
                                      "to allow that"};
  }
  const int fd = ::open(r.path.c_str(),
                        (r.writes ? O_RDWR : O_RDONLY) | O_CLOEXEC | (r.direct ? O_DIRECT : 0));
  if (fd >= 0) {
    ::close(fd);
    return;
  }
  const int err = errno;
  if (err == EINVAL && r.direct) {
    refuse(r, "is on a file system that refuses O_DIRECT; pass --buffered to measure through "
              "the page cache");
  }
  if (err == EROFS) refuse(r, "is on a read-only file system, and " + op_text(r) + " writes it");
  refuse(r, std::string("cannot be opened for ") + (r.writes ? "writing" : "reading") + ": " +
                std::strerror(err));
}

// A file to create (or our default file to replace): its directory exists and takes a new
// file, probed with a file of our own that is removed at once.
void check_creatable(const DataFileRequest& r) {
  const std::filesystem::path path(r.path);
  const std::string dir = path.has_parent_path() ? path.parent_path().string() : ".";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    refuse(r, "cannot be created: directory '" + dir + "' " +
                  (errno == ENOENT ? std::string("does not exist") : std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) refuse(r, "cannot be created: '" + dir + "' is not a directory");
  const std::string probe = r.path + ".probe." + std::to_string(::getpid());
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
  int fd = ::open(probe.c_str(), flags | (r.direct ? O_DIRECT : 0), 0644);
  int err = errno;
  if (fd < 0 && err == EINVAL && r.direct) {
    ::unlink(probe.c_str());  // some file systems create the file before refusing O_DIRECT
    fd = ::open(probe.c_str(), flags, 0644);
    if (fd >= 0) {
      ::close(fd);
      ::unlink(probe.c_str());
      refuse(r, "cannot be created for direct I/O: the file system holding '" + dir +
                    "' refuses O_DIRECT; pass --buffered to measure through the page cache");
    }
    err = errno;
  }
  if (fd < 0) refuse(r, std::string("cannot be created: ") + std::strerror(err));
  ::close(fd);
  ::unlink(probe.c_str());
}

Found check(const DataFileRequest& r) {
  const Found found = inspect(r);
  if (found.state == State::usable) {
    check_usable(r, found);
  } else {
    check_creatable(r);
  }
  return found;
}

[[noreturn]] void fault(const DataFileRequest& r, const std::string& what, int err) {
  throw std::runtime_error("--file: cannot " + what + " " + r.path + ": " + std::strerror(err));
}

// Writes the file under a temporary name, then renames it into place; a partial file is
// removed. Returns the new file's identity.
struct stat create(const DataFileRequest& r) {
  const std::string temp = r.path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) fault(r, "create", errno);
  std::vector<std::uint64_t> chunk((1u << 20) / sizeof(std::uint64_t));
  std::uint64_t x = 0x2545F4914F6CDD1Dull;
  auto fail = [&](const char* what, int err) {
    ::close(fd);
    ::unlink(temp.c_str());
    fault(r, what, err);
  };
  for (std::uint64_t written = 0; written < r.create_bytes;) {
    for (auto& word : chunk) {
      word = core::xorshift64(x);
    }
    const std::size_t want = static_cast<std::size_t>(
        std::min<std::uint64_t>(r.create_bytes - written, chunk.size() * 8));
    const ssize_t n = ::write(fd, chunk.data(), want);
    if (n <= 0) fail("fill", n < 0 ? errno : ENOSPC);
    written += static_cast<std::uint64_t>(n);
  }
  struct stat st {};
  if (::fsync(fd) != 0 || ::fstat(fd, &st) != 0) fail("write", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fault(r, "write", err);
  }
  if (::rename(temp.c_str(), r.path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fault(r, "rename a new file to", err);
  }
  return st;
}

}  // namespace

void check_data_file(const DataFileRequest& request) { check(request); }

DataFile prepare_data_file(const DataFileRequest& r) {
  Found found = check(r);
  if (found.state == State::usable) return {r.path, found.bytes, found.ours, false};

  // Created under a lock, so that another run waits and then finds the whole file.
  const auto lock_path = report::lock_path_for(r.path);
  report::LockAttempt attempt = report::wait_lock_file(lock_path, kCreateWaitS);
  if (!attempt.lock.held()) {
    if (attempt.busy) {
      throw std::runtime_error(
          "--file: " + who(r) + " is still being created by another process (" +
          (attempt.holder_pid ? "pid " + std::to_string(*attempt.holder_pid) : "pid unknown") +
          ") after " + std::to_string(static_cast<int>(kCreateWaitS)) + " s");
    }
    refuse(r, "cannot be created: " + attempt.error);
  }
  found = check(r);  // it may have appeared while we waited
  if (found.state == State::usable) return {r.path, found.bytes, found.ours, false};
  const struct stat st = create(r);
  write_marker(r.path, st);
  return {r.path, r.create_bytes, true, true};
}

DataFile ensure_data_file(const std::string& path, std::uint64_t bytes, bool exact_size) {
  DataFileRequest request;
  request.path = path;
  request.named = !exact_size;
  request.create_bytes = bytes;
  request.block_bytes = 4096;
  request.direct = false;  // the caller opens it for O_DIRECT and says so when that fails
  return prepare_data_file(request);
}

}  // namespace iocpbench::workloads
