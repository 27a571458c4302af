#include "engine/dequeue_batch.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace iocpbench::engine {

BatchSizes::BatchSizes(unsigned requested) : requested_(requested) {
  if (requested < 1 || requested > kMaxDequeueBatch) {
    throw std::invalid_argument("a dequeue batch is 1 to 1024 packets");
  }
}

std::size_t BatchSizes::bucket_of(std::size_t packets) const {
  const std::size_t k = std::clamp<std::size_t>(packets, 1, requested_);
  if (requested_ <= kExactUpTo) return k - 1;
  return static_cast<std::size_t>(std::bit_width(k) - 1);  // floor(log2 k)
}

std::vector<BatchSizes::Bucket> BatchSizes::buckets() const {
  std::vector<Bucket> out;
  const std::size_t last = bucket_of(requested_);
  for (std::size_t i = 0; i <= last; ++i) {
    Bucket b;
    if (requested_ <= kExactUpTo) {
      b.min_packets = b.max_packets = static_cast<unsigned>(i + 1);
    } else {
      b.min_packets = 1u << i;
      b.max_packets = std::min(requested_, (2u << i) - 1);
    }
    b.removes = counts_[i];
    out.push_back(b);
  }
  return out;
}

BatchSizes& BatchSizes::operator+=(const BatchSizes& other) {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  removes_ += other.removes_;
  packets_ += other.packets_;
  return *this;
}

DequeueBatch::DequeueBatch(unsigned size) : slots_(std::max(1u, size)) {}

port::RemoveStatus DequeueBatch::remove(port::CompletionPort& port, port::Timeout timeout) {
  count_ = 0;
  if (slots_.size() == 1) {
    // GetQueuedCompletionStatus: the path of the pool before batches, kept for b = 1 so that
    // its runs measure what they always did.
    const port::RemoveStatus status = port.remove(slots_[0], timeout);
    if (status == port::RemoveStatus::ok || status == port::RemoveStatus::io_failed) count_ = 1;
    return status;
  }
  std::size_t removed = 0;
  const port::RemoveStatus status = port.remove_batch(slots_, removed, timeout);
  if (status == port::RemoveStatus::ok || status == port::RemoveStatus::io_failed) {
    count_ = std::min(removed, slots_.size());
  }
  return status;
}

bool DequeueBatch::take_stop(port::CompletionPort& port, std::uintptr_t stop_key,
                             std::uint64_t& reposted) {
  bool stopped = false;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    const port::Packet packet = slots_[i];
    if (packet.key != stop_key) {
      slots_[kept++] = packet;
    } else if (!stopped) {
      stopped = true;
    } else {
      // Another thread's stop: without it that thread would wait in the port forever. False
      // only if the port is closed, and then every thread's remove fails instead.
      port.post(packet);
      ++reposted;
    }
  }
  count_ = kept;
  return stopped;
}

}  // namespace iocpbench::engine
