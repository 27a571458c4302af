// The data file's OS calls on Linux (data_file_os.hpp). A file's identity for the marker is its
// device and inode; a block device's size comes from BLKGETSIZE64.

#include "platform/data_file_os.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace iocpbench::platform {
namespace {

std::string error_text(int err) {
  return std::strerror(err);
}

// A block device's size, or the reason it cannot be read.
std::string block_device_size(const std::string& path, std::uint64_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::ioctl(fd, BLKGETSIZE64, &size) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    return "is a block device whose size cannot be read: " + error_text(err);
  }
  ::close(fd);
  return {};
}

}  // namespace

std::string inspect_data_path(const std::string& path, PathState& out) {
  out = PathState{};
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0) {
    if (errno == ENOENT) return {};
    return "cannot be used: " + error_text(errno);
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (S_ISLNK(link.st_mode) && err == ENOENT) {
      std::error_code ec;
      const auto target = std::filesystem::read_symlink(path, ec);
      return "is a dangling symbolic link (to '" + target.string() +
             "', which does not exist); iocpbench does not create files through links";
    }
    return "cannot be used: " + error_text(err);
  }
  const char* not_a_file = S_ISDIR(st.st_mode)    ? "is a directory"
                           : S_ISFIFO(st.st_mode) ? "is a FIFO (a named pipe)"
                           : S_ISCHR(st.st_mode)  ? "is a character device"
                           : S_ISSOCK(st.st_mode) ? "is a socket"
                                                  : nullptr;
  if (not_a_file) return std::string(not_a_file) + ", not a regular file or block device";
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) return "is not a regular file or block device";
  out.exists = true;
  out.regular = S_ISREG(st.st_mode);
  if (!out.regular) return block_device_size(path, out.bytes);
  out.bytes = static_cast<std::uint64_t>(st.st_size);
  return {};
}

std::string file_identity(const std::string& path, const char* header) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  return std::string(header) + "device " + std::to_string(st.st_dev) + "\ninode " +
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

std::string small_file_note(const std::string& path) {
  const bool pseudo = path.rfind("/proc/", 0) == 0 || path.rfind("/sys/", 0) == 0;
  return pseudo ? "; files in /proc and /sys report no size and cannot be measured" : "";
}

std::string open_refusal(const std::string& path, bool writes, bool direct,
                         const std::string& op_text) {
  const int fd =
      ::open(path.c_str(), (writes ? O_RDWR : O_RDONLY) | O_CLOEXEC | (direct ? O_DIRECT : 0));
  if (fd >= 0) {
    ::close(fd);
    return {};
  }
  const int err = errno;
  if (err == EINVAL && direct) {
    return "is on a file system that refuses O_DIRECT; pass --buffered to measure through "
           "the page cache";
  }
  if (err == EROFS) return "is on a read-only file system, and " + op_text + " writes it";
  return std::string("cannot be opened for ") + (writes ? "writing" : "reading") + ": " +
         error_text(err);
}

std::string create_refusal(const std::string& path_text, bool direct) {
  const std::filesystem::path path(path_text);
  const std::string dir = path.has_parent_path() ? path.parent_path().string() : ".";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return "cannot be created: directory '" + dir + "' " +
           (errno == ENOENT ? std::string("does not exist") : error_text(errno));
  }
  if (!S_ISDIR(st.st_mode)) return "cannot be created: '" + dir + "' is not a directory";
  const std::string probe = path_text + ".probe." + std::to_string(::getpid());
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
  int fd = ::open(probe.c_str(), flags | (direct ? O_DIRECT : 0), 0644);
  int err = errno;
  if (fd < 0 && err == EINVAL && direct) {
    ::unlink(probe.c_str());  // some file systems create the file before refusing O_DIRECT
    fd = ::open(probe.c_str(), flags, 0644);
    if (fd >= 0) {
      ::close(fd);
      ::unlink(probe.c_str());
      return "cannot be created for direct I/O: the file system holding '" + dir +
             "' refuses O_DIRECT; pass --buffered to measure through the page cache";
    }
    err = errno;
  }
  if (fd < 0) return "cannot be created: " + error_text(err);
  ::close(fd);
  ::unlink(probe.c_str());
  return {};
}

WriteFault write_new_file(const std::string& path, std::uint64_t bytes,
                          const std::function<void(std::uint64_t*, std::size_t)>& fill) {
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return {"create", ": " + error_text(errno)};
  auto fail = [&](const char* what, int err) {
    ::close(fd);
    ::unlink(temp.c_str());
    return WriteFault{what, ": " + error_text(err)};
  };
  std::vector<std::uint64_t> chunk((1u << 20) / sizeof(std::uint64_t));
  for (std::uint64_t written = 0; written < bytes;) {
    fill(chunk.data(), chunk.size());
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(bytes - written, chunk.size() * 8));
    const ssize_t n = ::write(fd, chunk.data(), want);
    if (n <= 0) return fail("fill", n < 0 ? errno : ENOSPC);
    written += static_cast<std::uint64_t>(n);
  }
  if (::fsync(fd) != 0) return fail("write", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return {"write", ": " + error_text(err)};
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return {"rename a new file to", ": " + error_text(err)};
  }
  return {};
}

void write_marker_file(const std::string& marker, const std::string& text, const char* header) {
  struct stat existing {};
  if (::lstat(marker.c_str(), &existing) == 0 &&
      (!S_ISREG(existing.st_mode) || read_small_file(marker).rfind(header, 0) != 0)) {
    return;
  }
  const std::string temp = marker + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (::close(fd) != 0 || !ok || ::rename(temp.c_str(), marker.c_str()) != 0) {
    ::unlink(temp.c_str());
  }
}

}  // namespace iocpbench::platform
