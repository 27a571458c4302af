#pragma once
// The emulated completion port: the NT kernel queue's scheduling reproduced in user space
// (port-semantics.md). One lock; a FIFO packet queue E; a LIFO stack W of waiter nodes that live
// on the waiting threads' stacks, each with its own futex word; the packet is written into the
// node before its thread is woken, so a woken thread never races anyone for it.

#include <memory>

#include "port/completion_port.hpp"

namespace iocpbench::port {

class EmulatedPortCore;

class EmulatedPort final : public CompletionPort {
 public:
  // `name` is the backend's name: "emulated", or an ablation's (options.rules has one rule off).
  explicit EmulatedPort(const PortOptions& options, std::string_view name = "emulated");
  ~EmulatedPort() override;

  std::string_view backend() const override { return name_; }
  unsigned concurrency() const override;
  bool post(const Packet& packet) override;
  RemoveStatus remove(Packet& out, Timeout timeout) override;
  RemoveStatus remove_batch(std::span<Packet> out, std::size_t& removed,
                            Timeout timeout) override;
  std::optional<std::size_t> depth() const override;
  void close() override;
  PortCounters counters() const override;
  std::optional<ListTotals> list_totals() const override;
  void record_list_events(std::size_t max) override;
  std::vector<ListEvent> list_events(bool& cut) const override;
  bool attach_feed(IoFeed* feed) override;
  void feed_submitted() override;

 private:
  // Shared with the thread associations, which may outlive this handle (a thread's exit still
  // runs "activate" on a port whose handle is gone).
  std::shared_ptr<EmulatedPortCore> core_;
  std::string_view name_;  // a string literal or a to_string(Backend) name: static storage
};

}  // namespace iocpbench::port
