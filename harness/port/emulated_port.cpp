#include "port/emulated_port.hpp"

#include <array>
#include <atomic>
#include <cassert>
#include <mutex>
#include <vector>

#include "platform/platform.hpp"
#include "port/blocking_region.hpp"
#include "port/port_lock.hpp"
#include "port/ring_queue.hpp"

namespace iocpbench::port {
namespace {

using platform::Clock;

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
          .count());
}

// A thread in GQCS: lives on that thread's stack, linked into the port's LIFO stack W.
struct Waiter {
  Packet* out = nullptr;
  std::size_t capacity = 1;
  std::size_t filled = 0;
  RemoveStatus status = RemoveStatus::ok;
  std::atomic<std::uint32_t> ready{0};  // the futex word: 1 once `out`/`status` are written
  Waiter* below = nullptr;
  Waiter* above = nullptr;
};

// Threads to wake once the lock is dropped. Only futex words are kept: a woken waiter may return
// and pop its node before we get to it, and the futex uses the address only as a key.
class WakeList {
 public:
  void add(std::atomic<std::uint32_t>* word) {
    if (inline_count_ < inline_.size()) {
      inline_[inline_count_++] = word;
    } else {
      overflow_.push_back(word);
    }
  }
  void wake_all() {
    for (std::size_t i = 0; i < inline_count_; ++i) platform::futex_wake_one(*inline_[i]);
    for (auto* word : overflow_) platform::futex_wake_one(*word);
  }

 private:
  std::array<std::atomic<std::uint32_t>*, 16> inline_{};
  std::size_t inline_count_ = 0;
  std::vector<std::atomic<std::uint32_t>*> overflow_;
};

enum class ThreadState { none, released, paused, waiting };

RemoveStatus status_of(const Packet& packet) {
  return packet.status == 0 ? RemoveStatus::ok : RemoveStatus::io_failed;
}

}  // namespace

class EmulatedPortCore : public std::enable_shared_from_this<EmulatedPortCore> {
 public:
  explicit EmulatedPortCore(const PortOptions& options)
      : concurrency_(options.concurrency == 0 ? platform::logical_cpus() : options.concurrency),
        check_invariants_(options.check_invariants) {}

  unsigned concurrency() const { return concurrency_; }
  bool post(const Packet& packet);
  RemoveStatus remove(Packet* out, std::size_t capacity, std::size_t& filled, Timeout timeout);
  std::size_t depth() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
  }
  void close();
  PortCounters counters() const;

  // Transition 5 for a thread that blocks, leaves for another port, or exits.
  void thread_stops_counting();
  // Transition 6: counted again at once, with no check against M.
  void thread_resumes();

 private:
  // Gated increments (3b, a handoff) happen only while C < M; unconditional ones (a timeout,
  // a resume: 3c, 4, 6) may take C over M, which is the over-limit window.
  enum class Gate { checked, unconditional };
  void increment_active(Gate gate);
  void decrement_active();
  void activate(WakeList& wake);
  void push_waiter(Waiter& waiter);
  Waiter* pop_waiter();
  void unlink_waiter(Waiter& waiter);
  std::size_t take_queued(Packet* out, std::size_t capacity);
  void check_invariant();

  mutable PortLock mutex_;  // spins briefly before sleeping (port_lock.hpp)
  const unsigned concurrency_;
  const bool check_invariants_;
  unsigned active_ = 0;
  bool closed_ = false;
  RingQueue<Packet> queue_;
  Waiter* top_ = nullptr;
  std::uint64_t over_limit_since_ns_ = 0;
  PortCounters counters_{.available = true};
};

namespace {

// Which port the calling thread is associated with, and how it counts there. The thread's exit
// runs leave(): "a thread's exit runs activate".
struct Association {
  std::shared_ptr<EmulatedPortCore> core;
  ThreadState state = ThreadState::none;
  unsigned blocking_depth = 0;

  void leave() {
    if (!core) return;
    auto old = std::move(core);
    if (state == ThreadState::released) old->thread_stops_counting();
    state = ThreadState::none;
    blocking_depth = 0;
  }
  ~Association() { leave(); }
};

// Created on a thread's first GQCS, destroyed by its exit through platform::at_thread_exit (not
// a thread_local Association: MinGW runs thread_local destructors on freed storage). A thread
// that never used an emulated port has none, and the guard does nothing for it (a thread of
// the kernel's IOCP, where the kernel itself activates and resumes).
thread_local Association* t_association = nullptr;

Association& this_thread_association() {
  if (t_association == nullptr) {
    t_association = new Association;
    platform::at_thread_exit(
        [](void* self) {
          delete static_cast<Association*>(self);
          t_association = nullptr;
        },
        t_association);
  }
  return *t_association;
}

}  // namespace

void EmulatedPortCore::increment_active(Gate gate) {
  ++active_;
  if (active_ > counters_.max_active) counters_.max_active = active_;
  if (active_ == concurrency_ + 1) over_limit_since_ns_ = now_ns();
  if (check_invariants_ && gate == Gate::checked && active_ > concurrency_) {
    ++counters_.invariant_violations;
  }
}

void EmulatedPortCore::decrement_active() {
  assert(active_ > 0);
  if (active_ == concurrency_ + 1) counters_.over_limit_ns += now_ns() - over_limit_since_ns_;
  --active_;
}

// The invariant of port-semantics.md: never a queued packet, a waiter and a free slot at once.
void EmulatedPortCore::check_invariant() {
  if (check_invariants_ && !queue_.empty() && top_ != nullptr && active_ < concurrency_) {
    ++counters_.invariant_violations;
  }
}

void EmulatedPortCore::push_waiter(Waiter& waiter) {
  waiter.below = top_;
  waiter.above = nullptr;
  if (top_ != nullptr) top_->above = &waiter;
  top_ = &waiter;
}

Waiter* EmulatedPortCore::pop_waiter() {
  Waiter* waiter = top_;
  top_ = waiter->below;
  if (top_ != nullptr) top_->above = nullptr;
  return waiter;
}

void EmulatedPortCore::unlink_waiter(Waiter& waiter) {
  if (waiter.above != nullptr) {
    waiter.above->below = waiter.below;
  } else {
    top_ = waiter.below;
  }
  if (waiter.below != nullptr) waiter.below->above = waiter.above;
}

std::size_t EmulatedPortCore::take_queued(Packet* out, std::size_t capacity) {
  std::size_t n = 0;
  while (n < capacity && !queue_.empty()) out[n++] = queue_.pop_front();
  return n;
}

// Hand queued packets to waiters while a slot is free (transition 5, second half).
void EmulatedPortCore::activate(WakeList& wake) {
  while (active_ < concurrency_ && !queue_.empty() && top_ != nullptr) {
    Waiter* waiter = pop_waiter();
    waiter->out[0] = queue_.pop_front();
    waiter->filled = 1;
    waiter->status = RemoveStatus::ok;
    increment_active(Gate::checked);
    ++counters_.handoffs;
    waiter->ready.store(1, std::memory_order_release);
    wake.add(&waiter->ready);
  }
}

bool EmulatedPortCore::post(const Packet& packet) {
  std::unique_lock lock(mutex_);
  if (closed_) return false;
  if (top_ != nullptr && active_ < concurrency_) {
    Waiter* waiter = pop_waiter();
    waiter->out[0] = packet;
    waiter->filled = 1;
    waiter->status = RemoveStatus::ok;
    increment_active(Gate::checked);
    ++counters_.handoffs;
    std::atomic<std::uint32_t>* word = &waiter->ready;
    word->store(1, std::memory_order_release);
    lock.unlock();
    platform::futex_wake_one(*word);
    return true;
  }
  queue_.push_back(packet);
  ++counters_.queued;
  if (queue_.size() > counters_.max_depth) counters_.max_depth = queue_.size();
  check_invariant();
  return true;
}

RemoveStatus EmulatedPortCore::remove(Packet* out, std::size_t capacity, std::size_t& filled,
                                      Timeout timeout) {
  filled = 0;
  Association& self = this_thread_association();
  if (self.core.get() != this) self.leave();  // 3a: leaving another port activates it

  std::unique_lock lock(mutex_);
  if (closed_) return RemoveStatus::invalid_handle;
  if (self.core.get() != this) {
    self.core = shared_from_this();
  } else if (self.state == ThreadState::released) {
    decrement_active();
  }

  if (!queue_.empty() && active_ < concurrency_) {  // 3b
    filled = take_queued(out, capacity);
    increment_active(Gate::checked);
    self.state = ThreadState::released;
    check_invariant();
    return capacity == 1 ? status_of(out[0]) : RemoveStatus::ok;
  }
  if (timeout.count() == 0) {  // 3c: the thread keeps a slot until its next GQCS or block
    increment_active(Gate::unconditional);
    self.state = ThreadState::released;
    check_invariant();
    return RemoveStatus::timeout;
  }

  Waiter waiter;  // 3d
  waiter.out = out;
  waiter.capacity = capacity;
  push_waiter(waiter);
  self.state = ThreadState::waiting;
  lock.unlock();

  Clock::time_point deadline{};
  const Clock::time_point* deadline_ptr = nullptr;
  if (timeout != kInfinite) {
    deadline = Clock::now() + timeout;
    deadline_ptr = &deadline;
  }
  while (waiter.ready.load(std::memory_order_acquire) == 0) {
    if (platform::futex_wait(waiter.ready, 0, deadline_ptr)) continue;
    lock.lock();  // deadline: unless a packet arrived meanwhile, leave W (transition 4)
    if (waiter.ready.load(std::memory_order_relaxed) == 0) {
      unlink_waiter(waiter);
      increment_active(Gate::unconditional);
      self.state = ThreadState::released;
      check_invariant();
      return RemoveStatus::timeout;
    }
    lock.unlock();
  }

  if (waiter.status == RemoveStatus::abandoned) {
    self.state = ThreadState::none;
    return RemoveStatus::abandoned;
  }
  self.state = ThreadState::released;
  if (capacity > 1) {  // 7: a batch also takes what is already queued, on the same slot
    lock.lock();
    waiter.filled += take_queued(out + waiter.filled, capacity - waiter.filled);
    lock.unlock();
  }
  filled = waiter.filled;
  return capacity == 1 ? status_of(out[0]) : RemoveStatus::ok;
}

void EmulatedPortCore::close() {
  WakeList wake;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    queue_.clear();
    while (top_ != nullptr) {
      Waiter* waiter = pop_waiter();
      waiter->filled = 0;
      waiter->status = RemoveStatus::abandoned;
      waiter->ready.store(1, std::memory_order_release);
      wake.add(&waiter->ready);
    }
  }
  wake.wake_all();
}

PortCounters EmulatedPortCore::counters() const {
  std::lock_guard lock(mutex_);
  PortCounters snapshot = counters_;
  if (active_ > concurrency_) snapshot.over_limit_ns += now_ns() - over_limit_since_ns_;
  return snapshot;
}

void EmulatedPortCore::thread_stops_counting() {
  WakeList wake;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    decrement_active();
    activate(wake);
    check_invariant();
  }
  wake.wake_all();
}

void EmulatedPortCore::thread_resumes() {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  increment_active(Gate::unconditional);
}

// ---- the guard ----

void blocking_region_begin() noexcept {
  if (t_association == nullptr) return;
  Association& self = *t_association;
  if (!self.core) return;
  if (self.blocking_depth++ > 0) return;
  if (self.state != ThreadState::released) return;
  self.state = ThreadState::paused;
  self.core->thread_stops_counting();
}

void blocking_region_end() noexcept {
  if (t_association == nullptr) return;
  Association& self = *t_association;
  if (!self.core || self.blocking_depth == 0) return;
  if (--self.blocking_depth > 0) return;
  if (self.state != ThreadState::paused) return;
  self.state = ThreadState::released;
  self.core->thread_resumes();
}

void detach_current_thread() noexcept {
  if (t_association != nullptr) t_association->leave();
}

// ---- the handle ----

EmulatedPort::EmulatedPort(const PortOptions& options)
    : core_(std::make_shared<EmulatedPortCore>(options)) {}

EmulatedPort::~EmulatedPort() { core_->close(); }

unsigned EmulatedPort::concurrency() const { return core_->concurrency(); }
bool EmulatedPort::post(const Packet& packet) { return core_->post(packet); }

RemoveStatus EmulatedPort::remove(Packet& out, Timeout timeout) {
  std::size_t filled = 0;
  return core_->remove(&out, 1, filled, timeout);
}

RemoveStatus EmulatedPort::remove_batch(std::span<Packet> out, std::size_t& removed,
                                        Timeout timeout) {
  removed = 0;
  if (out.empty()) return RemoveStatus::invalid_parameter;
  return core_->remove(out.data(), out.size(), removed, timeout);
}

std::optional<std::size_t> EmulatedPort::depth() const { return core_->depth(); }
void EmulatedPort::close() { core_->close(); }
PortCounters EmulatedPort::counters() const { return core_->counters(); }

}  // namespace iocpbench::port
