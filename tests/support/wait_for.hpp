#pragma once
// Polls `predicate` every millisecond until it holds (true) or `limit` passes (false): the
// engine tests' bound on every wait, so that nothing hangs.

#include <chrono>
#include <thread>

namespace iocpbench::test_support {

template <typename Predicate>
bool wait_for(Predicate predicate, std::chrono::seconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace iocpbench::test_support
