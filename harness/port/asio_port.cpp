#include "port/asio_port.hpp"

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "platform/platform.hpp"

namespace iocpbench::port {
namespace {

namespace asio = boost::asio;

// Where a handler leaves its packet: the slot of the thread that runs it, set up by remove()
// around each run_one/poll_one. Only this port's handlers run inside this port's run_one, so
// the slot always belongs to the remove() that is running them.
struct Slot {
  Packet* out = nullptr;
  bool filled = false;
};
thread_local Slot t_slot;

}  // namespace

class AsioPortImpl {
 public:
  explicit AsioPortImpl(unsigned concurrency)
      : concurrency_(concurrency),
        context_(static_cast<int>(concurrency)),
        guard_(asio::make_work_guard(context_)) {}

  unsigned concurrency() const { return concurrency_; }

  bool post(const Packet& packet) {
    if (closed_.load(std::memory_order_acquire)) return false;
    asio::post(context_, [packet] {
      if (t_slot.out != nullptr) {
        *t_slot.out = packet;
        t_slot.filled = true;
      }
    });
    return true;
  }

  // One handler into `out`: true when one ran.
  bool run_one_into(Packet& out, Timeout timeout) {
    t_slot = {&out, false};
    if (timeout.count() == 0) {
      context_.poll_one();
    } else if (timeout == kInfinite) {
      context_.run_one();
    } else {
      context_.run_one_for(timeout);
    }
    const bool filled = t_slot.filled;
    t_slot = {};
    return filled;
  }

  RemoveStatus remove(Packet* out, std::size_t capacity, std::size_t& filled, Timeout timeout) {
    filled = 0;
    if (closed_.load(std::memory_order_acquire)) return RemoveStatus::invalid_handle;
    if (!run_one_into(out[0], timeout)) {
      return closed_.load(std::memory_order_acquire) ? RemoveStatus::abandoned
                                                     : RemoveStatus::timeout;
    }
    filled = 1;
    while (filled < capacity && run_one_into(out[filled], Timeout{0})) ++filled;
    return capacity == 1 ? status_of(out[0]) : RemoveStatus::ok;
  }

  void close() {
    if (closed_.exchange(true, std::memory_order_acq_rel)) return;
    context_.stop();  // threads in run_one return; queued handlers are destroyed unrun
  }

 private:
  const unsigned concurrency_;
  std::atomic<bool> closed_{false};
  asio::io_context context_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
};

AsioPort::AsioPort(const PortOptions& options)
    : impl_(std::make_unique<AsioPortImpl>(
          options.concurrency == 0 ? platform::logical_cpus() : options.concurrency)) {}

AsioPort::~AsioPort() { impl_->close(); }

unsigned AsioPort::concurrency() const { return impl_->concurrency(); }
bool AsioPort::post(const Packet& packet) { return impl_->post(packet); }

RemoveStatus AsioPort::remove(Packet& out, Timeout timeout) {
  std::size_t filled = 0;
  return impl_->remove(&out, 1, filled, timeout);
}

RemoveStatus AsioPort::remove_batch(std::span<Packet> out, std::size_t& removed,
                                    Timeout timeout) {
  removed = 0;
  if (out.empty()) return RemoveStatus::invalid_parameter;
  return impl_->remove(out.data(), out.size(), removed, timeout);
}

void AsioPort::close() { impl_->close(); }

}  // namespace iocpbench::port
