#pragma once
// The `io` blocking kind: synchronous reads that reach the device (O_DIRECT). One file per OS
// (blocking_io_linux.cpp).

#include <cstdint>
#include <string>

namespace iocpbench::engine {

// Opens `path` for direct (uncached) reads; -1 and `error` set on failure.
int open_direct_for_reads(const std::string& path, std::string& error);
void close_file(int fd);
// One synchronous read of `bytes` at `offset`; false on error or a short read.
bool blocking_read(int fd, void* buffer, std::uint32_t bytes, std::uint64_t offset);
// A buffer aligned for direct I/O; release it with free_block.
void* aligned_block(std::uint32_t bytes);
void free_block(void* block);

}  // namespace iocpbench::engine
