#pragma once
// A comparison dispatcher, not an IOCP: Boost.Asio's io_context run by the pool, as an Asio
// server would be. post() is asio::post of a small handler that hands the packet to whichever
// thread runs it; remove() is run_one_for(timeout) (poll_one for a zero timeout, run_one for an
// infinite one) on an io_context kept alive by a work guard; remove_batch() runs up to n
// handlers (the first may wait, the rest are poll_one); close() is stop().
//
// The concurrency value is passed to the io_context as its concurrency hint, which only tunes
// Asio's locking: it is not a limit (every thread in run_one may run a handler). Asio wakes
// idle threads in no documented order and does not say how many handlers are queued: depth()
// is unknown and counters() reports available=false. On Windows the io_context is itself built
// on an IOCP, so there the hint does reach the kernel as the port's concurrency value.

#include <memory>

#include "port/completion_port.hpp"

namespace iocpbench::port {

class AsioPortImpl;

class AsioPort final : public CompletionPort {
 public:
  explicit AsioPort(const PortOptions& options);
  ~AsioPort() override;

  std::string_view backend() const override { return "asio"; }
  unsigned concurrency() const override;
  bool post(const Packet& packet) override;
  RemoveStatus remove(Packet& out, Timeout timeout) override;
  RemoveStatus remove_batch(std::span<Packet> out, std::size_t& removed,
                            Timeout timeout) override;
  std::optional<std::size_t> depth() const override { return std::nullopt; }
  void close() override;
  PortCounters counters() const override { return {}; }

 private:
  // Asio stays out of the header: only asio_port.cpp includes Boost.
  std::unique_ptr<AsioPortImpl> impl_;
};

}  // namespace iocpbench::port
