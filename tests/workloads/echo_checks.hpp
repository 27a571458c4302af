#pragma once
// What a socket run must conserve, checked alike by the Linux and the Windows workload tests
// (workload_test.cpp, windows_workload_test.cpp): every message the load generator sent came
// back, byte for byte.

#include <gtest/gtest.h>

#include <cstdint>

#include "engine/run_point.hpp"

namespace iocpbench::test {

inline void expect_every_echo_verified(const engine::RunResult& r) {
  const auto& s = r.workload_stats;
  EXPECT_EQ(s.at("mismatched_bytes").get<std::uint64_t>(), 0u);
  EXPECT_GT(s.at("messages_sent").get<std::uint64_t>(), 0u);
  EXPECT_EQ(s.at("messages_verified"), s.at("messages_sent")) << "every message came back";
}

// The same, and every verified byte belongs to a message of `message_size` bytes.
inline void expect_every_byte_verified(const engine::RunResult& r, std::uint64_t message_size) {
  expect_every_echo_verified(r);
  const auto& s = r.workload_stats;
  EXPECT_EQ(s.at("bytes_verified").get<std::uint64_t>(),
            s.at("messages_sent").get<std::uint64_t>() * message_size);
}

}  // namespace iocpbench::test
