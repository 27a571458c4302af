#pragma once
// A worker thread's own working set (--working-set-kib): a buffer the handler reads and
// writes one cache line at a time on every packet, so that the data a packet handler keeps
// warm in a CPU's cache is part of the experiment. It is what makes the LIFO wake-up's claimed
// cache effect measurable: the thread that ran last (LIFO) finds its lines still in cache, the
// one that waited longest (FIFO) has lost them. 0 KiB (the default) touches nothing.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace iocpbench::engine {

inline constexpr std::uint32_t kMaxWorkingSetKib = 1u << 20;  // 1 GiB per thread

class WorkingSet {
 public:
  explicit WorkingSet(std::uint32_t kib);
  // One read-modify-write per 64-byte line of the set, in order (a prefetcher helps a warm and
  // a cold set alike, so what differs between them is whether the lines are in cache).
  void touch() noexcept;
  std::size_t bytes() const { return words_.size() * sizeof(std::uint64_t); }
  // How many lines were touched, for tests (the compiler cannot drop the loop: it is counted).
  std::uint64_t lines_touched() const { return lines_touched_; }

 private:
  std::vector<std::uint64_t> words_;
  std::uint64_t lines_touched_ = 0;
};

}  // namespace iocpbench::engine
