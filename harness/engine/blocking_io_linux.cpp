#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "engine/blocking_io.hpp"

namespace iocpbench::engine {

int open_direct_for_reads(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) error = path + ": " + std::strerror(errno);
  return fd;
}

void close_file(int fd) {
  if (fd >= 0) ::close(fd);
}

bool blocking_read(int fd, void* buffer, std::uint32_t bytes, std::uint64_t offset) {
  ssize_t n;
  do {
    n = ::pread(fd, buffer, bytes, static_cast<off_t>(offset));
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(bytes);
}

void* aligned_block(std::uint32_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, bytes) != 0) return nullptr;
  std::memset(p, 0, bytes);
  return p;
}

void free_block(void* block) {
  std::free(block);
}

}  // namespace iocpbench::engine
