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
#include "port/io_feed.hpp"
#include "port/list_timeline.hpp"
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

}  // namespace

// A thread in GQCS: lives on that thread's stack, linked into the port's LIFO stack W. Outside
// the anonymous namespace because EmulatedPortCore (declared in emulated_port.hpp) holds
// pointers to it; a named namespace of this file's own keeps the name from clashing.
namespace emulated_parts {
struct Waiter {
  Packet* out = nullptr;
  std::size_t capacity = 1;
  std::size_t filled = 0;
  RemoveStatus status = RemoveStatus::ok;
  // The futex word: 1 once `out`/`status` are written; 2: asked to watch the feed (io_feed.hpp).
  std::atomic<std::uint32_t> ready{0};
  bool watching = false;  // waits on the feed, not on `ready` (under the port's lock)
  std::uint64_t handoff_ns = 0;  // when it was handed its packet (a timed handoff, list timeline)
  std::uint32_t handoff_weight = 0;  // the handoffs that one stands for
  Waiter* below = nullptr;
  Waiter* above = nullptr;
};
}  // namespace emulated_parts
using emulated_parts::Waiter;

namespace {

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
  // The watcher waits on the feed, not on its word: it is woken through the feed. Under the
  // port's lock; `users` is the port's count of threads about to call the feed without it.
  void add_feed_interrupt(IoFeed* feed, std::atomic<unsigned>& users) {
    hold(users);
    interrupt_ = feed;
  }
  void drop_feed_interrupt() { interrupt_ = nullptr; }
  // A harvest may leave kernel entries (resubmissions) to make without the lock.
  void add_feed_flush(IoFeed* feed, std::atomic<unsigned>& users) {
    hold(users);
    flush_ = feed;
  }
  void wake_all() {
    for (std::size_t i = 0; i < inline_count_; ++i) platform::futex_wake_one(*inline_[i]);
    for (auto* word : overflow_) platform::futex_wake_one(*word);
    if (interrupt_ != nullptr) interrupt_->interrupt();
    if (flush_ != nullptr) flush_->flush();  // after the wake-ups: they are the latency
    interrupt_ = flush_ = nullptr;
    release();
  }
  ~WakeList() { release(); }

 private:
  // Counted under the lock, so a detach (which takes the lock, then waits for the count) waits
  // for this list's calls to the feed. Only lists that carry a feed count: the post workload's
  // hot path touches no shared counter.
  void hold(std::atomic<unsigned>& users) {
    if (users_ != nullptr) return;
    users_ = &users;
    users.fetch_add(1, std::memory_order_relaxed);
  }
  void release() {
    if (users_ == nullptr) return;
    users_->fetch_sub(1, std::memory_order_release);
    users_ = nullptr;
  }

  std::atomic<unsigned>* users_ = nullptr;
  IoFeed* interrupt_ = nullptr;
  IoFeed* flush_ = nullptr;
  std::array<std::atomic<std::uint32_t>*, 16> inline_{};
  std::size_t inline_count_ = 0;
  std::vector<std::atomic<std::uint32_t>*> overflow_;
};

enum class ThreadState { none, released, paused, waiting };

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

class EmulatedPortCore;

// The port's lock, which records the lists (list_timeline.hpp) as it is released when they
// changed while it was held: one clock read per critical section, not one per transition (a
// remove is a decrement, an increment and a pop under one hold).
class ListsLock {
 public:
  explicit ListsLock(EmulatedPortCore& core) : core_(core) {}
  void lock() noexcept { lock_.lock(); }
  bool try_lock() noexcept { return lock_.try_lock(); }
  inline void unlock() noexcept;

 private:
  EmulatedPortCore& core_;
  PortLock lock_;  // spins briefly before sleeping (port_lock.hpp)
};

class EmulatedPortCore : public std::enable_shared_from_this<EmulatedPortCore> {
 public:
  explicit EmulatedPortCore(const PortOptions& options)
      : concurrency_(options.concurrency == 0 ? platform::logical_cpus() : options.concurrency),
        gate_(options.rules.concurrency_cap ? concurrency_ : kNoLimit),
        block_gate_(options.rules.block_releases_within_cap ? gate_ : kNoLimit),
        check_invariants_(options.check_invariants),
        rules_(options.rules) {
    if (options.list_timeline) timeline_ = std::make_unique<ListTimeline>(concurrency_, &now_ns);
  }

  unsigned concurrency() const { return concurrency_; }
  bool releases_on_block() const { return rules_.release_on_block; }
  bool post(const Packet& packet);
  RemoveStatus remove(Packet* out, std::size_t capacity, std::size_t& filled, Timeout timeout,
                      Call call);
  std::size_t depth();
  void close();
  PortCounters counters();
  std::optional<ListTotals> list_totals() const;
  void record_list_events(std::size_t max);
  std::vector<ListEvent> list_events(bool& cut) const;
  bool attach_feed(IoFeed* feed);
  void feed_submitted();

  // Transition 5 for a thread that blocks, leaves for another port, or exits; `slots` is what
  // it holds (1, or more under the batch_slot_per_entry mutant).
  void thread_stops_counting(StopReason reason, unsigned slots);
  // Transition 6: counted again at once, with no check against M.
  void thread_resumes();

 private:
  // Calls to the feed without the port's lock are counted in feed_users_, so that detaching
  // the feed (attach_feed(nullptr): under the lock, then a wait for the count) waits until no
  // thread is inside one: the watcher's whole watch (FeedUse), a WakeList's interrupt and flush
  // (counted under the lock), and poll_feed(). Never across a futex sleep.
  class FeedUse {
   public:
    explicit FeedUse(EmulatedPortCore& core) : core_(core) {
      core_.feed_users_.fetch_add(1, std::memory_order_seq_cst);
    }
    ~FeedUse() { core_.feed_users_.fetch_sub(1, std::memory_order_release); }
    FeedUse(const FeedUse&) = delete;
    FeedUse& operator=(const FeedUse&) = delete;

   private:
    EmulatedPortCore& core_;
  };
  // Before the lock: what the kernel has ready becomes harvestable (IoFeed::poll). Without a
  // feed, one load and nothing more.
  void poll_feed() {
    if (feed_mirror_.load(std::memory_order_acquire) == nullptr) return;
    FeedUse use(*this);  // then the feed again: a detach stores null before it waits for users
    if (IoFeed* feed = feed_mirror_.load(std::memory_order_seq_cst)) feed->poll();
  }

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
  void release_extra_slots(Association& self);
  // The D2 mutant reads a batch of one as a single remove; the faithful port never does.
  // (Tested in the order that leaves a single remove one compare.)
  Call batch_of_one_as_single(Call call, std::size_t capacity) const {
    return call == Call::batch && capacity == 1 && !rules_.batch_entry_status ? Call::single : call;
  }
  void check_invariant();
  // The lists changed (under the lock): the timeline, when kept, records them as the lock is
  // released (ListsLock).
  void note_lists() { lists_changed_ = true; }
  void record_lists() const {
    if (timeline_ && lists_changed_) [[unlikely]] {
      lists_changed_ = false;
      timeline_->change({waiting_, active_, paused_, static_cast<std::uint32_t>(queue_.size())});
    }
  }
  void stamp_handoff(Waiter& waiter) const {
    if (timeline_) [[unlikely]] {
      waiter.handoff_weight = timeline_->handoff_sample();
      if (waiter.handoff_weight > 0) waiter.handoff_ns = now_ns();
    }
  }
  // The feed (io_feed.hpp), all under the lock: hand a waiter its wake-up (through the feed
  // for the watcher), move the feed's ready completions in by transition 1, and keep one
  // waiter watching wherever a completion would be handed out.
  void wake_waiter(Waiter& waiter, WakeList& wake);
  void insert_locked(const Packet& packet, WakeList& wake);
  void absorb(WakeList& wake);
  void rewatch(WakeList& wake);
  bool watch_wanted() const { return top_ != nullptr && active_ < gate_ && !closed_; }
  enum class Watch { watching, packet, resigned, timed_out };
  Watch watch(Waiter& waiter, Association& self, const Clock::time_point* deadline);
  // remove()'s steps. On entry, under the lock: the feed's ready completions come in, and the
  // thread's association moves here (3a) or gives back the slot its last release took. False
  // when the port was closed while the lock was dropped on the way.
  bool enter_remove(std::unique_lock<ListsLock>& lock, Association& self, WakeList& wake);
  // 3d, under the lock: the thread joins W; true when it is to watch the feed.
  bool begin_wait(Waiter& waiter, Association& self);
  // Without the lock: until the waiter is handed a packet (true) or its deadline passes and it
  // leaves W (false, transition 4), watching the feed whenever asked to.
  bool wait_for_packet(Waiter& waiter, Association& self, Timeout timeout, bool watching,
                       std::unique_lock<ListsLock>& lock);

  friend class ListsLock;
  mutable ListsLock mutex_{*this};
  const unsigned concurrency_;  // M
  // What C is compared against before a gated increment: M, or no limit without the cap rule
  // (so the faithful port's hot path does the one compare it always did).
  const unsigned gate_;
  const unsigned block_gate_;  // the same for the handoffs of a block
  const bool check_invariants_;
  const PortRules rules_;
  unsigned active_ = 0;
  std::uint32_t waiting_ = 0, paused_ = 0;  // |W|, and released threads now blocked
  std::unique_ptr<ListTimeline> timeline_;  // PortOptions::list_timeline
  mutable bool lists_changed_ = false;      // since the lock was taken
  bool closed_ = false;
  RingQueue<Packet> queue_;
  Waiter* top_ = nullptr;     // the newest waiter (LIFO wake-up takes this one)
  Waiter* bottom_ = nullptr;  // the oldest (the fifo_wakeup mutant takes this one)
  std::uint64_t over_limit_since_ns_ = 0;
  PortCounters counters_{.available = true};
  IoFeed* feed_ = nullptr;
  Waiter* watcher_ = nullptr;  // the waiter that waits on the feed, or asked to (ready == 2)
  // A thread is in (or about to enter) the feed's wait. No second watcher is appointed until it
  // has left: both would sleep in one kernel wait, whose wake-up (the doorbell of a handoff to
  // the first) the second could take, leaving the first asleep with its packet. The sleeper
  // appoints the successor itself as it leaves (watch()). Reading the feed is not held back.
  bool feed_sleeper_ = false;
  std::atomic<IoFeed*> feed_mirror_{nullptr};  // feed_, for poll_feed() before the lock
  std::atomic<unsigned> feed_users_{0};         // FeedUse, WakeList
  // A completion would find a waiter and nobody watches: the feed's next submit starts one
  // (written under the lock, read by feed_submitted() without it).
  std::atomic<bool> unwatched_{false};
};

void ListsLock::unlock() noexcept {
  core_.record_lists();
  lock_.unlock();
}

namespace {

// Which port the calling thread is associated with, and how it counts there. The thread's exit
// runs leave(): "a thread's exit runs activate".
struct Association {
  std::shared_ptr<EmulatedPortCore> core;
  ThreadState state = ThreadState::none;
  unsigned blocking_depth = 0;
  unsigned extra_slots = 0;  // slots held beyond one (only the batch_slot_per_entry mutant)
  // The wake-up delay of its last handoff, for the port's list timeline, not yet reported.
  std::uint64_t wake_delay_ns = 0;
  std::uint32_t wake_delay_weight = 0;
  bool wake_delay_pending = false;

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
  note_lists();
}

void EmulatedPortCore::decrement_active() {
  assert(active_ > 0);
  if (active_ == concurrency_ + 1) counters_.over_limit_ns += now_ns() - over_limit_since_ns_;
  --active_;
  note_lists();
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
  ++waiting_;
  note_lists();
}

Waiter* EmulatedPortCore::pop_waiter() {
  Waiter* waiter = rules_.lifo_wakeup ? top_ : bottom_;
  unlink_waiter(*waiter);
  return waiter;
}

void EmulatedPortCore::unlink_waiter(Waiter& waiter) {
  if (&waiter == watcher_) watcher_ = nullptr;
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
  --waiting_;
  note_lists();
}

std::size_t EmulatedPortCore::take_queued(Packet* out, std::size_t capacity) {
  std::size_t n = 0;
  while (n < capacity && !queue_.empty()) out[n++] = queue_.pop_front();
  if (n > 0) note_lists();
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
    wake_waiter(*waiter, wake);
  }
}

void EmulatedPortCore::wake_waiter(Waiter& waiter, WakeList& wake) {
  const bool watching = waiter.watching;  // read first: once `ready` is set the node may go
  waiter.watching = false;
  stamp_handoff(waiter);
  waiter.ready.store(1, std::memory_order_release);
  if (watching) {
    wake.add_feed_interrupt(feed_, feed_users_);
  } else {
    wake.add(&waiter.ready);
  }
}

void EmulatedPortCore::insert_locked(const Packet& packet, WakeList& wake) {
  if (top_ != nullptr && active_ < gate_) {
    Waiter* waiter = pop_waiter();
    waiter->out[0] = packet;
    waiter->filled = 1;
    waiter->status = RemoveStatus::ok;
    increment_active(Gate::checked);
    ++counters_.handoffs;
    wake_waiter(*waiter, wake);
    return;
  }
  queue_.push_back(packet);
  ++counters_.queued;
  if (queue_.size() > counters_.max_depth) counters_.max_depth = queue_.size();
  note_lists();
}

// The feed's completions are packets the kernel would have inserted already: insert them now,
// in the order they completed, before the caller's own transition. Whoever holds the lock
// reads the feed, the watcher asleep on it or not: it is woken only for what is left.
void EmulatedPortCore::absorb(WakeList& wake) {
  if (feed_ == nullptr || closed_) return;
  std::array<Packet, 32> batch;
  for (;;) {
    const std::size_t n = feed_->harvest(batch.data(), batch.size());
    for (std::size_t i = 0; i < n; ++i) insert_locked(batch[i], wake);
    if (n < batch.size()) break;
  }
  wake.add_feed_flush(feed_, feed_users_);
}

// One waiter watches the feed while a completion would be handed to a waiter. The newest is
// asked (its futex word set to 2): a completion goes to it first anyway. unwatched_ is set
// before in_flight() is read, and a submitter sets in_flight before reading unwatched_, so one
// of the two always sees the other (feed_submitted()).
void EmulatedPortCore::rewatch(WakeList& wake) {
  if (feed_ == nullptr || feed_sleeper_) return;
  if (!watch_wanted() || watcher_ != nullptr) {
    unwatched_.store(false, std::memory_order_relaxed);
    return;
  }
  unwatched_.store(true, std::memory_order_seq_cst);
  if (!feed_->in_flight()) return;
  unwatched_.store(false, std::memory_order_relaxed);
  watcher_ = top_;
  watcher_->ready.store(2, std::memory_order_release);
  wake.add(&watcher_->ready);
}

bool EmulatedPortCore::post(const Packet& packet) {
  poll_feed();
  std::unique_lock lock(mutex_);
  if (closed_) return false;
  if (feed_ != nullptr) {  // the watcher is woken through the feed, and may need a successor
    WakeList wake;
    absorb(wake);  // an I/O that completed before this post comes out before it
    insert_locked(packet, wake);
    rewatch(wake);
    check_invariant();
    lock.unlock();
    wake.wake_all();
    return true;
  }
  if (top_ != nullptr && active_ < gate_) {
    Waiter* waiter = pop_waiter();
    waiter->out[0] = packet;
    waiter->filled = 1;
    waiter->status = RemoveStatus::ok;
    increment_active(Gate::checked);
    ++counters_.handoffs;
    stamp_handoff(*waiter);
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
  note_lists();
  check_invariant();
  return true;
}

RemoveStatus EmulatedPortCore::remove(Packet* out, std::size_t capacity, std::size_t& filled,
                                      Timeout timeout, Call call) {
  filled = 0;
  Association& self = this_thread_association();
  if (self.core.get() != this && !rules_.closed_check_first) self.leave();  // the D1 mutant
  poll_feed();
  WakeList wake;  // woken at every return below, once the lock is dropped
  std::unique_lock lock(mutex_);
  if (closed_) return RemoveStatus::invalid_handle;  // D1: the old association stays as it was
  const auto done = [&](RemoveStatus status) {
    lock.unlock();
    wake.wake_all();
    return status;
  };
  if (!enter_remove(lock, self, wake)) return done(RemoveStatus::invalid_handle);

  if (!queue_.empty() && active_ < gate_) {  // 3b
    increment_active(Gate::checked);
    if (rules_.batch_one_slot) {
      filled = take_queued(out, capacity);
    } else {
      out[0] = queue_.pop_front();
      filled = 1 + take_queued_on_own_slots(out + 1, capacity - 1);
      self.extra_slots = static_cast<unsigned>(filled - 1);
    }
    note_lists();
    self.state = ThreadState::released;
    check_invariant();
    return done(status_of_call(batch_of_one_as_single(call, capacity), out));
  }
  if (timeout.count() == 0) {  // 3c: the thread keeps a slot until its next GQCS or block
    count_timed_out(self);
    check_invariant();
    return done(RemoveStatus::timeout);
  }

  Waiter waiter;  // 3d
  waiter.out = out;
  waiter.capacity = capacity;
  const bool watching = begin_wait(waiter, self);
  done(RemoveStatus::ok);
  if (!wait_for_packet(waiter, self, timeout, watching, lock)) return RemoveStatus::timeout;

  if (waiter.status == RemoveStatus::abandoned) {
    self.state = ThreadState::none;
    return RemoveStatus::abandoned;
  }
  if (timeline_ && waiter.handoff_ns != 0) {  // reported at this thread's next call (enter_remove)
    const std::uint64_t now = now_ns();
    self.wake_delay_ns = now > waiter.handoff_ns ? now - waiter.handoff_ns : 0;
    self.wake_delay_weight = waiter.handoff_weight;
    self.wake_delay_pending = true;
  }
  self.state = ThreadState::released;
  if (capacity > 1) {  // 7: a batch also takes what is already queued, on the same slot
    poll_feed();
    WakeList more_wake;
    lock.lock();
    absorb(more_wake);  // what completed meanwhile is queued, as the kernel would have it
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
    more_wake.wake_all();
  }
  filled = waiter.filled;
  return status_of_call(batch_of_one_as_single(call, capacity), out);
}

bool EmulatedPortCore::enter_remove(std::unique_lock<ListsLock>& lock, Association& self,
                                    WakeList& wake) {
  if (self.wake_delay_pending && self.core.get() == this && timeline_) {
    timeline_->woke(self.wake_delay_ns, self.wake_delay_weight);
    self.wake_delay_pending = false;
  }
  // Completions the kernel would have queued while this thread ran (it still holds its slot,
  // so they queue here too, unless they find a waiter).
  absorb(wake);
  rewatch(wake);
  if (self.core.get() != this) {
    // 3a: leaving another port activates it. Its lock is taken with ours dropped (one lock at
    // a time, no lock order); a close meanwhile fails this call after the move, as a close
    // racing the kernel's reference would.
    lock.unlock();
    self.leave();
    lock.lock();
    if (closed_) return false;
    self.core = shared_from_this();
  } else if (self.state == ThreadState::released) {
    decrement_active();
    if (self.extra_slots > 0) [[unlikely]] release_extra_slots(self);
  }
  return true;
}

bool EmulatedPortCore::begin_wait(Waiter& waiter, Association& self) {
  push_waiter(waiter);
  self.state = ThreadState::waiting;
  // With a feed, the newest waiter watches it while a completion would come to a waiter.
  bool watching = false;
  if (feed_ != nullptr && watcher_ == nullptr && !feed_sleeper_ && watch_wanted()) {
    unwatched_.store(true, std::memory_order_seq_cst);  // see rewatch()
    if (feed_->in_flight()) {
      unwatched_.store(false, std::memory_order_relaxed);
      watcher_ = &waiter;
      waiter.watching = watching = true;
    }
  }
  return watching;
}

bool EmulatedPortCore::wait_for_packet(Waiter& waiter, Association& self, Timeout timeout,
                                       bool watching, std::unique_lock<ListsLock>& lock) {
  Clock::time_point deadline{};
  const Clock::time_point* deadline_ptr = nullptr;
  if (timeout != kInfinite) {
    deadline = Clock::now() + timeout;
    deadline_ptr = &deadline;
  }
  for (;;) {
    if (watching) {
      if (watch(waiter, self, deadline_ptr) == Watch::timed_out) return false;
      watching = false;  // handed a packet (below), or resigned: back to the futex
      continue;
    }
    const std::uint32_t word = waiter.ready.load(std::memory_order_acquire);
    if (word == 1) return true;
    if (word == 2) {  // asked to watch the feed (rewatch)
      lock.lock();
      if (waiter.ready.load(std::memory_order_relaxed) == 2) {
        waiter.ready.store(0, std::memory_order_relaxed);
        // Still asked (not detached meanwhile): watch. Otherwise just wait again.
        if (watcher_ == &waiter && feed_ != nullptr) waiter.watching = watching = true;
      }
      lock.unlock();
      continue;
    }
    if (platform::futex_wait(waiter.ready, 0, deadline_ptr)) continue;
    lock.lock();  // deadline: unless a packet arrived meanwhile, leave W (transition 4)
    if (waiter.ready.load(std::memory_order_relaxed) == 0) {
      unlink_waiter(waiter);
      count_timed_out(self);
      WakeList wake;
      rewatch(wake);
      check_invariant();
      lock.unlock();
      wake.wake_all();
      return false;
    }
    lock.unlock();
  }
}

// The batch_slot_per_entry mutant's thread gives back the slots its last batch took.
void EmulatedPortCore::release_extra_slots(Association& self) {
  for (; self.extra_slots > 0; --self.extra_slots) decrement_active();
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
    note_lists();
    while (rules_.close_wakes_waiters && top_ != nullptr) {
      Waiter* waiter = pop_waiter();
      waiter->filled = 0;
      waiter->status = RemoveStatus::abandoned;
      wake_waiter(*waiter, wake);
    }
  }
  wake.wake_all();
}

// The watcher's wait: on the feed, moving in what it finds (transition 1: the newest waiter,
// maybe itself, gets it), until a packet is handed to it (through the feed's interrupt), the
// deadline, or no completion could be handed out any more (C reached M, nothing is in flight,
// or the feed was detached): then it resigns and waits on its futex like any waiter. Other
// threads read the feed meanwhile; the watcher only sleeps through what they take.
EmulatedPortCore::Watch EmulatedPortCore::watch(Waiter& waiter, Association& self,
                                                const Clock::time_point* deadline) {
  FeedUse use(*this);  // attach_feed(nullptr) waits until this thread has left the feed
  for (;;) {
    IoFeed* feed = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (waiter.ready.load(std::memory_order_relaxed) != 0) return Watch::packet;
      if (closed_ || feed_ == nullptr || watcher_ != &waiter) {
        waiter.watching = false;
        if (watcher_ == &waiter) watcher_ = nullptr;
        return Watch::resigned;
      }
      feed = feed_;
      feed_sleeper_ = true;
    }
    feed->wait(deadline);
    feed->poll();
    WakeList wake;
    Watch outcome = Watch::watching;
    {
      std::lock_guard lock(mutex_);
      feed_sleeper_ = false;
      absorb(wake);
      if (waiter.ready.load(std::memory_order_relaxed) != 0) {
        // Handed a packet (or abandoned), maybe by this very absorb: the feed's interrupt in
        // `wake` can only be for this thread, which is awake.
        outcome = Watch::packet;
        wake.drop_feed_interrupt();
      } else if (deadline != nullptr && Clock::now() >= *deadline) {
        unlink_waiter(waiter);
        count_timed_out(self);
        outcome = Watch::timed_out;
      } else if (closed_ || feed_ != feed || watcher_ != &waiter || !watch_wanted() ||
                 !feed->in_flight()) {
        waiter.watching = false;
        if (watcher_ == &waiter) watcher_ = nullptr;
        outcome = Watch::resigned;
      }
      rewatch(wake);
      check_invariant();
    }
    wake.wake_all();
    if (outcome != Watch::watching) return outcome;
  }
}

// Attaching with waiters already in W appoints a watcher at once. Detaching takes the watcher
// off the feed (it goes back to its futex) and returns only once no thread is inside a call
// to the old feed, so its owner may destroy it.
bool EmulatedPortCore::attach_feed(IoFeed* feed) {
  IoFeed* old = nullptr;
  WakeList wake;
  {
    std::lock_guard lock(mutex_);
    old = feed_;
    if (watcher_ != nullptr) {
      watcher_->watching = false;  // a handoff to it now goes through its futex
      watcher_ = nullptr;
    }
    feed_ = feed;
    feed_mirror_.store(feed, std::memory_order_seq_cst);
    unwatched_.store(false, std::memory_order_relaxed);
    rewatch(wake);
  }
  wake.wake_all();
  if (old != nullptr && old != feed) {
    old->interrupt();  // a watcher asleep on it wakes, finds itself resigned, and leaves
    while (feed_users_.load(std::memory_order_acquire) > 0) std::this_thread::yield();
  }
  return true;
}

void EmulatedPortCore::feed_submitted() {
  if (!unwatched_.load(std::memory_order_seq_cst)) return;
  WakeList wake;
  {
    std::lock_guard lock(mutex_);
    rewatch(wake);
  }
  wake.wake_all();
}

// depth() and counters() see a completed I/O as the queued packet it is: the feed is read first.
std::size_t EmulatedPortCore::depth() {
  poll_feed();
  WakeList wake;
  std::size_t queued = 0;
  {
    std::lock_guard lock(mutex_);
    absorb(wake);
    rewatch(wake);
    queued = queue_.size();
  }
  wake.wake_all();
  return queued;
}

PortCounters EmulatedPortCore::counters() {
  poll_feed();
  WakeList wake;
  PortCounters snapshot;
  {
    std::lock_guard lock(mutex_);
    absorb(wake);
    rewatch(wake);
    snapshot = counters_;
    if (active_ > concurrency_) snapshot.over_limit_ns += now_ns() - over_limit_since_ns_;
  }
  wake.wake_all();
  return snapshot;
}

std::optional<ListTotals> EmulatedPortCore::list_totals() const {
  if (!timeline_) return std::nullopt;
  std::lock_guard lock(mutex_);
  return timeline_->totals();
}

void EmulatedPortCore::record_list_events(std::size_t max) {
  if (!timeline_) return;
  std::lock_guard lock(mutex_);
  timeline_->record_events(max);
}

std::vector<ListEvent> EmulatedPortCore::list_events(bool& cut) const {
  cut = false;
  if (!timeline_) return {};
  std::lock_guard lock(mutex_);
  cut = timeline_->events_cut();
  return timeline_->events();
}

void EmulatedPortCore::thread_stops_counting(StopReason reason, unsigned slots) {
  poll_feed();
  WakeList wake;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    // Before the slot is given up: what completed meanwhile is queued behind E, and the slot
    // goes to a waiter for it whatever the watcher is doing.
    absorb(wake);
    if (reason == StopReason::block) ++paused_;
    for (unsigned i = 0; i < slots; ++i) decrement_active();
    if (reason == StopReason::leave) {
      activate(wake, gate_);
    } else if (rules_.block_activates) {
      activate(wake, block_gate_);
    }
    rewatch(wake);
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
  if (paused_ > 0) --paused_;
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
std::optional<ListTotals> EmulatedPort::list_totals() const { return core_->list_totals(); }
void EmulatedPort::record_list_events(std::size_t max) { core_->record_list_events(max); }
std::vector<ListEvent> EmulatedPort::list_events(bool& cut) const { return core_->list_events(cut); }
bool EmulatedPort::attach_feed(IoFeed* feed) { return core_->attach_feed(feed); }
void EmulatedPort::feed_submitted() { core_->feed_submitted(); }

}  // namespace iocpbench::port
