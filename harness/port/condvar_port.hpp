#pragma once
// A comparison dispatcher, not an IOCP: the plain FIFO queue on a mutex and a condition variable
// that naive thread-pool code builds. post() appends and notifies one waiter; the woken thread
// races every running thread (and every other woken thread) for the packet, so a wake-up may
// find the queue already empty and go back to sleep.
//
// What it lacks (iocpbench probe --port condvar shows it): no concurrency limit (the value given
// is kept and reported, but never enforced: every waiting thread may run at once), no LIFO
// wake-up (the condition variable wakes whom the OS picks), no blocking-region accounting (the
// guard is a no-op here). What it keeps: packets leave in FIFO order, close() wakes waiters with
// `abandoned` and later calls get `invalid_handle`. counters() reports available=false: the
// dispatcher has no active-thread count to report.

#include <condition_variable>
#include <mutex>

#include "port/completion_port.hpp"
#include "port/ring_queue.hpp"

namespace iocpbench::port {

class CondvarPort final : public CompletionPort {
 public:
  explicit CondvarPort(const PortOptions& options);
  ~CondvarPort() override;

  std::string_view backend() const override { return "condvar"; }
  unsigned concurrency() const override { return concurrency_; }
  bool post(const Packet& packet) override;
  RemoveStatus remove(Packet& out, Timeout timeout) override;
  RemoveStatus remove_batch(std::span<Packet> out, std::size_t& removed,
                            Timeout timeout) override;
  std::optional<std::size_t> depth() const override;
  void close() override;
  PortCounters counters() const override { return {}; }

 private:
  // Waits until a packet is queued, the port closes or the timeout passes; takes up to
  // `capacity` packets. Called with the lock held.
  RemoveStatus take(std::unique_lock<std::mutex>& lock, Packet* out, std::size_t capacity,
                    std::size_t& filled, Timeout timeout);

  const unsigned concurrency_;
  mutable std::mutex mutex_;
  std::condition_variable nonempty_;
  RingQueue<Packet> queue_;
  bool closed_ = false;
};

}  // namespace iocpbench::port
