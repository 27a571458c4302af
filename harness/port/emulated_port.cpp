#include "port/emulated_port.hpp"

#include <array>
#include <atomic>
#include <cassert>
#include <limits>
#include <mutex>
#include <thread>
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

// GQCS reports a failed packet as a failed call; GQCSEx returns TRUE and each entry carries its
// own status, even for a batch of one (D2).
enum class Call { single, batch };

RemoveStatus status_of_call(Call call, const Packet* out) {
  return call == Call::single ? status_of(out[0]) : RemoveStatus::ok;
}

// Why a released thread stops counting: only a block is subject to the block rules.
enum class StopReason { block, leave };

constexpr unsigned kNoLimit = std::numeric_limits<unsigned>::max();

struct Association;

}  // namespace

class EmulatedPortCore : public std::enable_shared_from_this<EmulatedPortCore> {
 public:
  explicit EmulatedPortCore(const PortOptions& options)
      : concurrency_(options.concurrency == 0 ? platform::logical_cpus() : options.concurrency),
        gate_(options.rules.concurrency_cap ? concurrency_ : kNoLimit),
        block_gate_(options.rules.block_releases_within_cap ? gate_ : kNoLimit),
        check_invariants_(options.check_invariants),
        rules_(options.rules) {}

  unsigned concurrency() const { return concurrency_; }
  bool releases_on_block() const { return rules_.release_on_block; }
  bool post(const Packet& packet);
  RemoveStatus remove(Packet* out, std::size_t capacity, std::size_t& filled, Timeout timeout,
                      Call call);
  std::size_t depth() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
  }
  void close();
  PortCounters counters() const;

  // Transition 5 for a thread that blocks, leaves for another port, or exits; `slots` is what
  // it holds (1, or more under the batch_slot_per_entry mutant).
  void thread_stops_counting(StopReason reason, unsigned slots);
  // Transition 6: counted again at once, with no check against M.
  void thread_resumes();

 private:
  // Gated increments (3b, a handoff) happen only while C < M; unconditional ones (a timeout,
  // a resume: 3c, 4, 6) may take C over M, which is the over-limit window.
  enum class Gate { checked, unconditional };
  void increment_active(Gate gate);
  void decrement_active();
  void activate(WakeList& wake, unsigned gate);
  void push_waiter(Waiter& waiter);
  Waiter* pop_waiter();
  void unlink_waiter(Waiter& waiter);
  std::size_t take_queued(Packet* out, std::size_t capacity);
  std::size_t take_queued_on_own_slots(Packet* out, std::size_t capacity);
  void count_timed_out(Association& self);
  // The D2 mutant reads a batch of one as a single remove; the faithful port never does.
  Call batch_of_one_as_single(Call call, std::size_t capacity) const {
    return !rules_.batch_entry_status && capacity == 1 ? Call::single : call;
  }
  void check_invariant();

  mutable PortLock mutex_;  // spins briefly before sleeping (port_lock.hpp)
  const unsigned concurrency_;  // M
  // What C is compared against before a gated increment: M, or no limit without the cap rule
  // (so the faithful port's hot path does the one compare it always did).
  const unsigned gate_;
  const unsigned block_gate_;  // the same for the handoffs of a block
  const bool check_invariants_;
  const PortRules rules_;
  unsigned active_ = 0;
  bool closed_ = false;
  RingQueue<Packet> queue_;
  Waiter* top_ = nullptr;     // the newest waiter (LIFO wake-up takes this one)
  Waiter* bottom_ = nullptr;  // the oldest (the fifo_wakeup mutant takes this one)
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
  unsigned extra_slots = 0;  // slots held beyond one (only the batch_slot_per_entry mutant)

  unsigned slots() const { return 1 + extra_slots; }
  void leave() {
    if (!core) return;
    auto old = std::move(core);
    if (state == ThreadState::released) old->thread_stops_counting(StopReason::leave, slots());
    state = ThreadState::none;
    blocking_depth = 0;
    extra_slots = 0;
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

// The checks below test the state itself, never the branch that led here: a gated increment
// that finds C >= M counts a violation whatever gate the caller applied, so a port that hands
// out a slot it does not have (the no_cap or release_all_on_block mutant) is caught.
void EmulatedPortCore::increment_active(Gate gate) {
  if (check_invariants_ && gate == Gate::checked && active_ >= concurrency_) {
    ++counters_.invariant_violations;
  }
  ++active_;
  if (active_ > counters_.max_active) counters_.max_active = active_;
  if (active_ == concurrency_ + 1) over_limit_since_ns_ = now_ns();
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
  if (top_ != nullptr) {
    top_->above = &waiter;
  } else {
    bottom_ = &waiter;
  }
  top_ = &waiter;
}

Waiter* EmulatedPortCore::pop_waiter() {
  Waiter* waiter = rules_.lifo_wakeup ? top_ : bottom_;
  unlink_waiter(*waiter);
  return waiter;
}

void EmulatedPortCore::unlink_waiter(Waiter& waiter) {
  if (waiter.above != nullptr) {
    waiter.above->below = waiter.below;
  } else {
    top_ = waiter.below;
  }
  if (waiter.below != nullptr) {
    waiter.below->above = waiter.above;
  } else {
    bottom_ = waiter.above;
  }
}

std::size_t EmulatedPortCore::take_queued(Packet* out, std::size_t capacity) {
  std::size_t n = 0;
  while (n < capacity && !queue_.empty()) out[n++] = queue_.pop_front();
  return n;
}

// The batch_slot_per_entry mutant: each further entry needs (and takes) a slot of its own.
std::size_t EmulatedPortCore::take_queued_on_own_slots(Packet* out, std::size_t capacity) {
  std::size_t n = 0;
  while (n < capacity && !queue_.empty() && active_ < gate_) {
    out[n++] = queue_.pop_front();
    increment_active(Gate::checked);
  }
  return n;
}

// Hand queued packets to waiters while a slot is free (transition 5, second half).
void EmulatedPortCore::activate(WakeList& wake, unsigned gate) {
  while (active_ < gate && !queue_.empty() && top_ != nullptr) {
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
  if (top_ != nullptr && active_ < gate_) {
    Waiter* waiter = pop_waiter();
    waiter->out[0] = packet;
    waiter->filled = 1;
    waiter->status = RemoveStatus::ok;
    increment_active(Gate::checked);
    ++counters_.handoffs;
    std::atomic<std::uint32_t>* word = &waiter->ready;
    word->store(1, std::memory_order_release);
    check_invariant();
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
                                      Timeout timeout, Call call) {
  filled = 0;
  Association& self = this_thread_association();
  if (!rules_.closed_check_first && self.core.get() != this) self.leave();  // the D1 mutant
  std::unique_lock lock(mutex_);
  if (closed_) return RemoveStatus::invalid_handle;  // D1: the old association stays as it was
  if (self.core.get() != this) {
    // 3a: leaving another port activates it. Its lock is taken with ours dropped (one lock at
    // a time, no lock order); a close meanwhile fails this call after the move, as a close
    // racing the kernel's reference would.
    lock.unlock();
    self.leave();
    lock.lock();
    if (closed_) return RemoveStatus::invalid_handle;
    self.core = shared_from_this();
  } else if (self.state == ThreadState::released) {
    decrement_active();
    for (; self.extra_slots > 0; --self.extra_slots) decrement_active();
  }

  if (!queue_.empty() && active_ < gate_) {  // 3b
    increment_active(Gate::checked);
    if (rules_.batch_one_slot) {
      filled = take_queued(out, capacity);
    } else {
      out[0] = queue_.pop_front();
      filled = 1 + take_queued_on_own_slots(out + 1, capacity - 1);
      self.extra_slots = static_cast<unsigned>(filled - 1);
    }
    self.state = ThreadState::released;
    check_invariant();
    return status_of_call(batch_of_one_as_single(call, capacity), out);
  }
  if (timeout.count() == 0) {  // 3c: the thread keeps a slot until its next GQCS or block
    count_timed_out(self);
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
      count_timed_out(self);
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
    if (rules_.batch_one_slot) {
      waiter.filled += take_queued(out + waiter.filled, capacity - waiter.filled);
    } else {
      const std::size_t more =
          take_queued_on_own_slots(out + waiter.filled, capacity - waiter.filled);
      waiter.filled += more;
      self.extra_slots = static_cast<unsigned>(more);
    }
    check_invariant();
    lock.unlock();
  }
  filled = waiter.filled;
  return status_of_call(batch_of_one_as_single(call, capacity), out);
}

// 3c and 4: a thread whose wait ended without a packet is counted (C++, no check against M),
// and keeps that slot until its next GQCS or block. The timeout_not_counted mutant leaves it
// associated but uncounted.
void EmulatedPortCore::count_timed_out(Association& self) {
  if (rules_.timeout_counts) {
    increment_active(Gate::unconditional);
    self.state = ThreadState::released;
  } else {
    self.state = ThreadState::none;
  }
}

void EmulatedPortCore::close() {
  WakeList wake;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    queue_.clear();
    while (rules_.close_wakes_waiters && top_ != nullptr) {
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

void EmulatedPortCore::thread_stops_counting(StopReason reason, unsigned slots) {
  WakeList wake;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    for (unsigned i = 0; i < slots; ++i) decrement_active();
    if (reason == StopReason::leave) {
      activate(wake, gate_);
    } else if (rules_.block_activates) {
      activate(wake, block_gate_);
    }
    check_invariant();
  }
  wake.wake_all();
}

void EmulatedPortCore::thread_resumes() {
  std::unique_lock lock(mutex_);
  // The resume_waits_for_slot mutant polls for a free slot (a close ends the wait); the
  // faithful port counts the thread at once.
  while (!rules_.resume_over_limit && !closed_ && active_ >= concurrency_) {
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lock.lock();
  }
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
  if (!self.core->releases_on_block()) return;  // the no_block_release ablation
  self.state = ThreadState::paused;
  self.core->thread_stops_counting(StopReason::block, self.slots());
  self.extra_slots = 0;  // a resume takes one slot back
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

EmulatedPort::EmulatedPort(const PortOptions& options, std::string_view name)
    : core_(std::make_shared<EmulatedPortCore>(options)), name_(name) {}

EmulatedPort::~EmulatedPort() { core_->close(); }

unsigned EmulatedPort::concurrency() const { return core_->concurrency(); }
bool EmulatedPort::post(const Packet& packet) { return core_->post(packet); }

RemoveStatus EmulatedPort::remove(Packet& out, Timeout timeout) {
  std::size_t filled = 0;
  return core_->remove(&out, 1, filled, timeout, Call::single);
}

RemoveStatus EmulatedPort::remove_batch(std::span<Packet> out, std::size_t& removed,
                                        Timeout timeout) {
  removed = 0;
  if (out.empty()) return RemoveStatus::invalid_parameter;
  return core_->remove(out.data(), out.size(), removed, timeout, Call::batch);
}

std::optional<std::size_t> EmulatedPort::depth() const { return core_->depth(); }
void EmulatedPort::close() { core_->close(); }
PortCounters EmulatedPort::counters() const { return core_->counters(); }

}  // namespace iocpbench::port
