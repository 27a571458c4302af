// The `io` blocking kind on Windows: unbuffered (FILE_FLAG_NO_BUFFERING) synchronous reads.

#include "platform/windows_api.hpp"  // first: the lean <windows.h>

#include <malloc.h>
#include <cstring>
#include <mutex>
#include <vector>

#include "engine/blocking_io.hpp"

namespace iocpbench::engine {
namespace {

// The API hands out int descriptors: keep the handles in a small table.
std::mutex g_mutex;
std::vector<HANDLE> g_handles;

HANDLE handle_of(int fd) {
  std::lock_guard lock(g_mutex);
  return fd >= 0 && static_cast<std::size_t>(fd) < g_handles.size() ? g_handles[fd]
                                                                    : INVALID_HANDLE_VALUE;
}

}  // namespace

int open_direct_for_reads(const std::string& path, std::string& error) {
  const HANDLE h = CreateFileA(path.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE,
                               nullptr, OPEN_EXISTING, FILE_FLAG_NO_BUFFERING, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    error = path + ": CreateFile failed, error " + std::to_string(GetLastError());
    return -1;
  }
  std::lock_guard lock(g_mutex);
  g_handles.push_back(h);
  return static_cast<int>(g_handles.size() - 1);
}

void close_file(int fd) {
  if (fd < 0) return;
  std::lock_guard lock(g_mutex);
  if (static_cast<std::size_t>(fd) < g_handles.size() && g_handles[fd] != INVALID_HANDLE_VALUE) {
    CloseHandle(g_handles[fd]);
    g_handles[fd] = INVALID_HANDLE_VALUE;
  }
}

bool blocking_read(int fd, void* buffer, std::uint32_t bytes, std::uint64_t offset) {
  OVERLAPPED at{};
  at.Offset = static_cast<DWORD>(offset);
  at.OffsetHigh = static_cast<DWORD>(offset >> 32);
  DWORD got = 0;
  return ReadFile(handle_of(fd), buffer, bytes, &got, &at) && got == bytes;
}

void* aligned_block(std::uint32_t bytes) {
  void* p = _aligned_malloc(bytes, 4096);
  if (p != nullptr) std::memset(p, 0, bytes);
  return p;
}

void free_block(void* block) {
  _aligned_free(block);
}

}  // namespace iocpbench::engine
