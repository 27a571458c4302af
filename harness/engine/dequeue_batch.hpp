#pragma once
// The pool's dequeue batch (`--dequeue-batch`): each worker takes up to b packets in one remove
// (GetQueuedCompletionStatusEx; CompletionPort::remove_batch) and handles them in order, each
// exactly as a packet taken alone. b = 1 calls remove() (GetQueuedCompletionStatus), the pool's
// one-packet path.
//
// What a batch changes. The concurrency value limits removes, not packets: a batch holds one
// slot (the kernel's rule, port-semantics.md), so up to C threads run and each may hold b
// packets. And the packets of a batch wait behind the thread that took them: the last one's
// handler starts only when the ones before it are done, or when that thread comes back from a
// block. A packet's queue delay is therefore measured to the start of its own handler, not to
// the remove, so that wait shows in the queue delay and the latency (Pool::handle_packet reads
// the clock as each handler starts).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "port/completion_port.hpp"

namespace iocpbench::engine {

inline constexpr unsigned kMaxDequeueBatch = 1024;  // packets per remove

// How many packets each remove returned: one bucket per count k = 1..b for b <= 16, and
// power-of-two ranges [1], [2, 3], [4, 7], ... (the last one ending at b) above.
class BatchSizes {
 public:
  static constexpr unsigned kExactUpTo = 16;

  struct Bucket {
    unsigned min_packets = 0, max_packets = 0;
    std::uint64_t removes = 0;
  };

  explicit BatchSizes(unsigned requested = 1);

  // One remove that returned `packets` (none: not a remove that took anything).
  void record(std::size_t packets) {
    if (packets == 0) return;
    ++counts_[bucket_of(packets)];
    ++removes_;
    packets_ += packets;
  }
  unsigned requested() const { return requested_; }
  std::uint64_t removes() const { return removes_; }
  std::uint64_t packets() const { return packets_; }
  // Every bucket from 1 to the requested batch, in order, empty ones included.
  std::vector<Bucket> buckets() const;
  // Adds another's counts (both of the same requested batch).
  BatchSizes& operator+=(const BatchSizes& other);

 private:
  std::size_t bucket_of(std::size_t packets) const;

  unsigned requested_ = 1;
  std::array<std::uint64_t, kExactUpTo> counts_{};  // b = 1024: 11 power-of-two buckets
  std::uint64_t removes_ = 0;
  std::uint64_t packets_ = 0;
};

// One worker's buffer of packets and its one remove.
class DequeueBatch {
 public:
  explicit DequeueBatch(unsigned size);

  unsigned size() const { return static_cast<unsigned>(slots_.size()); }
  // One remove of up to size() packets. ok and io_failed: packets() holds what it took (a
  // batch's entries each carry their own status); any other status: none.
  port::RemoveStatus remove(port::CompletionPort& port, port::Timeout timeout);
  std::span<const port::Packet> packets() const { return {slots_.data(), count_}; }

  // Takes the stop packets out of the batch, the rest keeping their order; true when there was
  // one, the thread's own. Each further one is posted back to `port` for a thread that has not
  // taken its stop yet (a thread takes exactly one: pool.hpp); `reposted` counts them.
  bool take_stop(port::CompletionPort& port, std::uintptr_t stop_key, std::uint64_t& reposted);

 private:
  std::vector<port::Packet> slots_;
  std::size_t count_ = 0;
};

}  // namespace iocpbench::engine
