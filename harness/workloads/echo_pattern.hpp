#pragma once
// The bytes the socket workload's load generator sends and expects back: a
// per-connection pseudo-random stream, so a byte echoed to the wrong connection, out of order or
// corrupted is caught.

#include <cstddef>
#include <cstdint>

namespace iocpbench::workloads {

inline std::uint8_t echo_pattern(std::uint32_t conn, std::uint64_t position) {
  const std::uint64_t x = position * 0x9E3779B97F4A7C15ull + (conn + 1) * 0xBF58476D1CE4E5B9ull;
  return static_cast<std::uint8_t>(x >> 56);
}

// Fills `count` messages of `size` bytes of connection `conn`, starting at message `first`.
inline void fill_echo_messages(std::uint8_t* out, std::uint32_t conn, std::uint64_t first,
                               std::uint32_t count, std::uint32_t size) {
  for (std::uint32_t m = 0; m < count; ++m) {
    const std::uint64_t base = (first + m) * size;
    for (std::uint32_t b = 0; b < size; ++b) out[std::size_t{m} * size + b] = echo_pattern(conn, base + b);
  }
}

// How many of `n` received bytes, starting at stream offset `offset`, differ from what was sent.
inline std::uint64_t count_echo_mismatches(const std::uint8_t* in, std::size_t n, std::uint32_t conn,
                                           std::uint64_t offset) {
  std::uint64_t bad = 0;
  for (std::size_t b = 0; b < n; ++b) bad += in[b] != echo_pattern(conn, offset + b) ? 1 : 0;
  return bad;
}

}  // namespace iocpbench::workloads
