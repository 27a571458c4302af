#include "port/condvar_port.hpp"

#include "platform/platform.hpp"

namespace iocpbench::port {
namespace {

}  // namespace

CondvarPort::CondvarPort(const PortOptions& options)
    : concurrency_(options.concurrency == 0 ? platform::logical_cpus() : options.concurrency) {}

CondvarPort::~CondvarPort() { close(); }

bool CondvarPort::post(const Packet& packet) {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    queue_.push_back(packet);
  }
  nonempty_.notify_one();
  return true;
}

RemoveStatus CondvarPort::take(std::unique_lock<std::mutex>& lock, Packet* out,
                               std::size_t capacity, std::size_t& filled, Timeout timeout) {
  filled = 0;
  if (closed_) return RemoveStatus::invalid_handle;
  const auto ready = [this] { return closed_ || !queue_.empty(); };
  if (timeout == kInfinite) {
    nonempty_.wait(lock, ready);
  } else if (timeout.count() > 0) {
    // An absolute deadline: spurious and lost-race wake-ups do not extend the timeout.
    nonempty_.wait_until(lock, std::chrono::steady_clock::now() + timeout, ready);
  }
  if (closed_) return RemoveStatus::abandoned;
  if (queue_.empty()) return RemoveStatus::timeout;
  while (filled < capacity && !queue_.empty()) out[filled++] = queue_.pop_front();
  return capacity == 1 ? status_of(out[0]) : RemoveStatus::ok;
}

RemoveStatus CondvarPort::remove(Packet& out, Timeout timeout) {
  std::unique_lock lock(mutex_);
  std::size_t filled = 0;
  return take(lock, &out, 1, filled, timeout);
}

RemoveStatus CondvarPort::remove_batch(std::span<Packet> out, std::size_t& removed,
                                       Timeout timeout) {
  removed = 0;
  if (out.empty()) return RemoveStatus::invalid_parameter;
  std::unique_lock lock(mutex_);
  return take(lock, out.data(), out.size(), removed, timeout);
}

std::optional<std::size_t> CondvarPort::depth() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

void CondvarPort::close() {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    queue_.clear();
  }
  nonempty_.notify_all();
}

}  // namespace iocpbench::port
