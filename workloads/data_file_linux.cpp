#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "workloads/data_file.hpp"

namespace iocpbench::workloads {

DataFile ensure_data_file(const std::string& path, std::uint64_t bytes, bool exact_size) {
  DataFile file{path, bytes, false};
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (S_ISREG(st.st_mode) && (exact_size ? size == bytes : size >= bytes)) {
      file.bytes = exact_size ? bytes : size;
      return file;
    }
  }
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + temp + ": " + std::strerror(errno));
  std::vector<std::uint64_t> chunk((1u << 20) / sizeof(std::uint64_t));
  std::uint64_t x = 0x2545F4914F6CDD1Dull;
  for (std::uint64_t written = 0; written < bytes;) {
    for (auto& word : chunk) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      word = x;
    }
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(bytes - written, chunk.size() * 8));
    const ssize_t n = ::write(fd, chunk.data(), want);
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      ::close(fd);
      ::unlink(temp.c_str());
      throw std::runtime_error("cannot fill " + path + ": " + std::strerror(err));
    }
    written += static_cast<std::uint64_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(err));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    throw std::runtime_error("cannot rename to " + path + ": " + std::strerror(err));
  }
  file.created = true;
  return file;
}

}  // namespace iocpbench::workloads
