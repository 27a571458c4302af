#include "engine/pool.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <system_error>

#include "metrics/clock.hpp"
#include "metrics/thread_sched.hpp"
#include "platform/platform.hpp"
#include "port/blocking_region.hpp"
#include "engine/affinity.hpp"
#include "engine/blocking_io.hpp"
#include "engine/working_set.hpp"

namespace iocpbench::engine {

using workloads::kMeasuring;
using workloads::kStopKey;

Pool::Pool(std::vector<port::CompletionPort*> ports, workloads::Workload& workload,
           const HandlerSpec& handler, unsigned threads, metrics::RoleRegistry& roles,
           const std::atomic<int>& phase, std::optional<PoolSizing> sizing,
           unsigned dequeue_batch, ThreadPlacer* placer)
    : ports_(std::move(ports)),
      workload_(workload),
      handler_(handler),
      work_(handler.work_us),
      sleep_overshoot_ns_(handler.blocks() && handler.kind == BlockingKind::sleep
                              ? sleep_overshoot_estimate_ns()
                              : 0.0),
      roles_(roles),
      phase_(phase),
      stats_(sizing ? sizing->max_threads : threads),
      sizing_(sizing),
      dequeue_batch_(dequeue_batch),
      placer_(placer),
      cpu_(platform::logical_cpus()),
      threads_(stats_.size()),
      occupied_(stats_.size(), false),
      generation_(stats_.size(), 0),
      ratio_now_(handler.blocking_ratio),
      handled_(std::make_unique<SlotCount[]>(stats_.size())) {
  timeline_.events.reserve(sizing ? PoolTimeline::kMaxEvents : 1);
  if (sizing && (ports_.size() != 1 || sizing->min_threads < 1 ||
                 sizing->min_threads > sizing->max_threads)) {
    throw std::invalid_argument("a self-sizing pool needs one shared port and 1 <= min <= max");
  }
  for (WorkerStats& s : stats_) {
    s.batches = BatchSizes(dequeue_batch);  // throws outside 1..1024
    s.handler_by_level.assign(handler_.profile_levels.size(), WorkerStats::LevelTimes{});
  }
}

Pool::~Pool() {
  stop();
}

void Pool::set_controller(std::unique_ptr<PoolController> controller) {
  if (!sizing_) throw std::invalid_argument("a controller needs a self-sizing pool");
  controller_ = std::move(controller);
  slot_control_ = std::make_unique<SlotControl[]>(size());
  target_.store(sizing_->min_threads, std::memory_order_relaxed);
}

void Pool::start() {
  const unsigned initial = sizing_ ? sizing_->min_threads : size();
  if (board_ != nullptr) {
    for (unsigned i = initial; i < size(); ++i) board_->at(i, ProgressBoard::kExited);
  }
  {
    std::lock_guard lock(sizing_mutex_);
    for (unsigned i = 0; i < initial; ++i) {
      if (!spawn_locked()) throw std::runtime_error("the pool could not start its threads");
    }
    const std::uint64_t now = metrics::now_ns();
    size_.start(now, current_.load(std::memory_order_relaxed));
    tick_size_.start(now, current_.load(std::memory_order_relaxed));
    record_size_locked(now);
  }
  while (enrolled_.load(std::memory_order_acquire) < initial) std::this_thread::yield();
  if (controller_) control_thread_ = std::thread([this] { control_loop(); });
}

void Pool::control_loop() {
  std::unique_lock lock(control_mutex_);
  for (;;) {
    const auto interval = std::chrono::nanoseconds(controller_->next_interval_ns());
    if (control_cv_.wait_for(lock, interval, [this] { return control_stop_; })) return;
    const ControlSample sample = control_sample();
    const unsigned want = std::clamp(controller_->target(sample), sizing_->min_threads,
                                     sizing_->max_threads);
    target_.store(want, std::memory_order_relaxed);
    grow_to(want, sample.t_ns);
  }
}

ControlSample Pool::control_sample() const {
  ControlSample s;
  s.t_ns = metrics::now_ns();
  const std::uint64_t limit_ns = controller_->stall_limit_ns();
  s.completions_total = handled_total();
  for (unsigned i = 0; i < size(); ++i) {
    const SlotControl& c = slot_control_[i];
    s.handler_cpu_ns_total += c.cpu_ns.load(std::memory_order_relaxed);
    s.handler_blocked_ns_total += c.blocked_ns.load(std::memory_order_relaxed);
    const std::uint64_t since = c.handler_since_ns.load(std::memory_order_relaxed);
    if (limit_ns != 0 && since != 0 && s.t_ns > since && s.t_ns - since > limit_ns) {
      ++s.stalled_workers;
    }
  }
  s.threads = current_.load(std::memory_order_relaxed);
  s.busy = std::min(busy_.load(std::memory_order_relaxed), s.threads);
  const std::optional<std::size_t> depth = ports_.front()->depth();
  if (depth) s.queued = *depth;
  return s;
}

void Pool::grow_to(unsigned target, std::uint64_t now_ns) {
  std::lock_guard lock(sizing_mutex_);
  while (current_.load(std::memory_order_relaxed) < target && spawn_locked()) {
    ++timeline_.grows;
    record_size_locked(now_ns);
  }
}

bool Pool::over_target() const {
  return current_.load(std::memory_order_relaxed) > target_.load(std::memory_order_relaxed);
}

void Pool::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (control_thread_.joinable()) {
    {
      std::lock_guard lock(control_mutex_);
      control_stop_ = true;
    }
    control_cv_.notify_all();
    control_thread_.join();  // no target changes from here on
  }
  unsigned in_pool = 0;
  {
    // From here on the pool neither grows nor shrinks: the threads counted now are the ones
    // that take the stop packets, one each.
    std::lock_guard lock(sizing_mutex_);
    stopping_ = true;
    in_pool = current_.load(std::memory_order_relaxed);
  }
  park_cv_.notify_all();  // the threads still parked end without a stop packet
  for (unsigned i = 0; i < in_pool; ++i) {
    port::Packet stop;
    stop.key = kStopKey;
    // false only if the port is closed, and then every remove fails
    ports_[ports_.size() == 1 ? 0 : i]->post(stop);
  }
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

PoolTimeline Pool::timeline() const {
  std::lock_guard lock(sizing_mutex_);
  return timeline_;
}

PoolWindowSummary Pool::mark_window(std::uint64_t t_ns) {
  std::lock_guard lock(sizing_mutex_);
  return size_.mark(t_ns);
}

PoolWindowSummary Pool::mark_tick(std::uint64_t t_ns) {
  std::lock_guard lock(sizing_mutex_);
  return tick_size_.mark(t_ns);
}

std::uint64_t Pool::handled_total() const {
  std::uint64_t sum = 0;
  for (unsigned i = 0; i < size(); ++i) sum += handled_[i].handled.load(std::memory_order_relaxed);
  return sum;
}

bool Pool::spawn_locked() {
  if (stopping_ || current_.load(std::memory_order_relaxed) >= size()) return false;
  if (parked_ > unparked_) {
    // A parked thread comes back before a new one starts (its slot is still its own), counted
    // now as a new thread is.
    ++unparked_;
    current_.fetch_add(1, std::memory_order_relaxed);
    busy_.fetch_add(1, std::memory_order_relaxed);
    park_cv_.notify_one();
    return true;
  }
  unsigned slot = 0;
  while (occupied_[slot]) ++slot;  // a free slot exists: fewer threads than slots
  // Its last thread has left the loop (it gave the slot up under this mutex) and only has
  // its exit left, which takes no lock of ours.
  if (threads_[slot].joinable()) threads_[slot].join();
  // Counted before it runs (Richter: a thread enters the pool busy and goes idle when it first
  // waits), undone if the OS refuses the thread: then the pool simply does not grow.
  occupied_[slot] = true;
  current_.fetch_add(1, std::memory_order_relaxed);
  busy_.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t generation = generation_[slot]++;
  try {
    threads_[slot] = std::thread([this, slot, generation] { worker(slot, generation); });
  } catch (const std::system_error&) {
    occupied_[slot] = false;
    current_.fetch_sub(1, std::memory_order_relaxed);
    busy_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void Pool::record_size_locked(std::uint64_t now_ns) {
  // Threads read the clock before taking the mutex, so keep the events in time order.
  if (!timeline_.events.empty()) now_ns = std::max(now_ns, timeline_.events.back().t_ns);
  const PoolTimeline::Event event{now_ns, current_.load(std::memory_order_relaxed)};
  size_.change(now_ns, event.threads);
  tick_size_.change(now_ns, event.threads);
  if (timeline_.events.size() < PoolTimeline::kMaxEvents) {
    timeline_.events.push_back(event);
  } else {
    timeline_.events.back() = event;  // full: the last entry stays the current size
    ++timeline_.dropped;
  }
}

void Pool::maybe_grow(std::uint64_t now_ns) {
  std::lock_guard lock(sizing_mutex_);
  if (busy_.load(std::memory_order_relaxed) < current_.load(std::memory_order_relaxed)) return;
  if (spawn_locked()) {
    ++timeline_.grows;
    record_size_locked(now_ns);
  }
}

bool Pool::try_leave(unsigned slot, std::uint64_t now_ns, bool park) {
  std::lock_guard lock(sizing_mutex_);
  const unsigned current = current_.load(std::memory_order_relaxed);
  if (stopping_ || current <= sizing_->min_threads) return false;
  if (controller_ && current <= target_.load(std::memory_order_relaxed)) return false;
  if (park) {
    ++parked_;
  } else {
    occupied_[slot] = false;
  }
  current_.fetch_sub(1, std::memory_order_relaxed);
  busy_.fetch_sub(1, std::memory_order_relaxed);
  ++timeline_.shrinks;
  record_size_locked(now_ns);
  return true;
}

std::uint64_t Pool::block(WorkerStats& stats, workloads::WorkerContext& context, void* buffer,
                          BlockSizer& sizer, std::uint64_t target_ns,
                          const metrics::ThreadSchedClock& sched) {
  port::BlockingRegion region;
  if (handler_.kind == BlockingKind::sleep) {
    const std::uint64_t request_ns = sizer.sleep_request_ns(target_ns);
    platform::precise_sleep(std::chrono::nanoseconds(request_ns));
    return request_ns;
  }
  // io: synchronous O_DIRECT reads of random blocks (at least one) while one more read is
  // expected to end nearer the target than stopping now, so the ratio can track b while every
  // wait really is the device. Progress is counted in blocked time: a read's own CPU (the
  // syscall, the copy) and any wait for a CPU after it are not blocking.
  const std::uint64_t blocks = handler_.io_file_bytes / handler_.io_block;
  std::uint64_t blocked_ns = 0;
  do {
    const std::uint64_t offset = (context.next_random() % blocks) * handler_.io_block;
    const std::uint64_t t0 = metrics::now_ns();  // each sample right after its clock read
    const metrics::SchedSample s0 = sched.sample();
    if (!blocking_read(handler_.io_fd, buffer, handler_.io_block, offset))
      ++stats.block_read_errors;
    const std::uint64_t t1 = metrics::now_ns();
    const HandlerSplit read = split_handler(sched.available(), t0, t0, t1, s0, s0, sched.sample());
    sizer.observe_read(read.blocked_ns);
    ++stats.block_reads;
    blocked_ns += read.blocked_ns;
  } while (sizer.read_again(blocked_ns, target_ns));
  sizer.observe_io_block(blocked_ns, target_ns);
  return 0;
}

// One pool thread's set-up, for as long as the thread runs (Pool::worker).
struct Pool::WorkerThread {
  WorkerThread(Pool& pool, unsigned slot, std::uint64_t generation)
      : index(slot),
        stats(pool.stats_[slot]),
        blocks(pool.handler_.blocks()),
        ratio(pool.ratio_now_.load(std::memory_order_relaxed)),
        sizer(ratio, pool.handler_.work_us, pool.sleep_overshoot_ns_, pool.late_debt_),
        works(pool.work_.iterations() != 0 || blocks),
        port(*pool.ports_[pool.ports_.size() == 1 ? 0 : slot]),
        sizes(pool.sizing_.has_value()),
        wait(sizes ? port::Timeout{pool.sizing_->idle_timeout_ms} : port::kInfinite),
        timed(pool.handler_.metrics),
        io(pool.workload_.worker_io()),
        fetches(pool.ports_.size() > 1 && io != nullptr && io->fetches(slot)),
        batch(pool.dequeue_batch_),
        inlines(pool.workload_.completes_inline()),
        control(pool.controller_ ? &pool.slot_control_[slot] : nullptr),
        tracks_stall(pool.controller_ && pool.controller_->stall_limit_ns() != 0) {
    context.index = slot;
    level = pool.level_of(ratio);
    if (inlines) context.inline_completion = &inline_done;
    // A thread that takes over a slot must not replay its predecessor's random offsets.
    context.rng = 0x9E3779B97F4A7C15ull * (slot + 1 + generation * (pool.size() + 1)) | 1;
  }

  const unsigned index;
  WorkerStats& stats;
  workloads::WorkerContext context;
  const bool blocks;
  double ratio;  // the ratio the sizer follows (a blocking profile changes it)
  std::size_t level = 0;  // its index in HandlerSpec::profile_levels
  BlockSizer sizer;
  const metrics::ThreadSchedClock sched;  // this thread's CPU time and run-queue wait
  const bool works;
  void* buffer = nullptr;  // the io kind's read buffer
  port::CompletionPort& port;
  const bool sizes;  // a self-sizing pool
  const port::Timeout wait;
  const bool timed;
  // The I/O the workers own (nullptr: none), and whether this one fetches its own completions:
  // per-thread ports with no completion thread, where it takes what its port holds and, when
  // that is empty, fetches what completed into this port, so no other thread is involved.
  port::WorkerIo* const io;
  const bool fetches;
  bool io_pending() const { return io != nullptr && io->io_pending(index); }
  DequeueBatch batch;  // the packets of the last remove
  // The workload may leave inline completions (Workload::completes_inline): checked after each
  // packet; false costs the hot path one branch on this constant.
  const bool inlines;
  workloads::InlineCompletion inline_done;
  // A controlled pool: this slot's counters for the control thread (null otherwise), and
  // whether it marks its time inside each handler (the stall rule).
  SlotControl* const control;
  const bool tracks_stall;
};

void Pool::worker(unsigned index, std::uint64_t generation) {
  // Before it enrols: start() returns with every first thread on its CPU.
  if (placer_ != nullptr) placer_->pin_current(index);
  if (board_ != nullptr) board_->at(index, ProgressBoard::kInPort);
  roles_.enrol(metrics::Role::workers);
  WorkerThread self(*this, index, generation);
  if (self.blocks && handler_.kind == BlockingKind::sleep) platform::set_fine_timer_slack();
  if (self.blocks && handler_.kind == BlockingKind::io) self.buffer = aligned_block(handler_.io_block);
  enrolled_.fetch_add(1, std::memory_order_release);

  bool left = false;  // left a self-sizing pool (rather than taking a stop packet)
  WorkingSet working_set(handler_.working_set_kib);
  for (;;) {
    const Next next = take_packets(self);
    if (next == Next::again) continue;
    if (next != Next::handle) {
      left = next == Next::leave;
      break;
    }
    // Its own stop packet ends the thread once the batch's other packets are handled: they
    // were taken from the port, so no other thread will see them.
    const bool stopped = self.batch.take_stop(self.port, kStopKey, self.stats.stop_packets_reposted);
    std::uint64_t t_done = 0;
    for (const port::Packet& packet : self.batch.packets()) {
      t_done = handle_packet(self, packet, working_set);
      if (self.inlines) t_done = handle_inline(self, working_set, t_done);
    }
    if (stopped) {
      ++self.stats.stop_packets;
      break;  // never remove again: each thread takes exactly one stop packet
    }
    const Next after = self.sizes ? after_batch(self, t_done) : Next::handle;
    if (after == Next::leave || after == Next::exit) {
      left = after == Next::leave;  // a parked thread that the stop ended did not leave mid-run
      break;
    }
  }
  if (board_ != nullptr) board_->at(index, ProgressBoard::kExited);
  free_block(self.buffer);
  // A thread leaving mid-run keeps its context switches in its role's sums.
  if (left) roles_.retire();
}

Pool::Next Pool::step_down(WorkerThread& self, std::uint64_t now_ns) {
  if (!over_target()) return Next::handle;  // the clock is read only past this (the hot path)
  const bool park = self.io_pending();
  if (!try_leave(self.index, now_ns != 0 ? now_ns : metrics::now_ns(), park)) return Next::handle;
  if (!park) return Next::leave;
  return wait_parked(self.index) ? Next::again : Next::exit;
}

bool Pool::wait_parked(unsigned slot) {
  if (board_ != nullptr) board_->at(slot, ProgressBoard::kParked);
  std::unique_lock lock(sizing_mutex_);
  park_cv_.wait(lock, [this] { return unparked_ > 0 || stopping_; });
  --parked_;
  // Counted back in (spawn_locked) comes first: stop() counted it, so it takes a stop packet.
  const bool back = unparked_ > 0;
  if (back) --unparked_;
  if (back && board_ != nullptr) board_->at(slot, ProgressBoard::kInPort);
  return back;
}

Pool::Next Pool::after_batch(WorkerThread& self, std::uint64_t t_done) {
  if (self.control != nullptr) return step_down(self, t_done);
  const std::uint64_t now = t_done != 0 ? t_done : metrics::now_ns();
  const bool leaves = cpu_.percent(now) > sizing_->shrink_above_cpu_pct &&
                      !self.io_pending() && try_leave(self.index, now);
  return leaves ? Next::leave : Next::handle;
}

port::RemoveStatus Pool::remove_counted(WorkerThread& self, port::Timeout timeout) {
  const port::RemoveStatus status = self.batch.remove(self.port, timeout);
  if (phase_.load(std::memory_order_relaxed) == kMeasuring) {
    self.stats.batches.record(self.batch.packets().size());
  }
  return status;
}

Pool::Next Pool::take_packets(WorkerThread& self) {
  if (self.sizes) busy_.fetch_sub(1, std::memory_order_relaxed);
  port::RemoveStatus status = remove_counted(self, self.fetches ? port::Timeout{0} : self.wait);
  if (self.control != nullptr) {
    // A controlled pool: the control thread grows it; a thread over the target leaves.
    busy_.fetch_add(1, std::memory_order_relaxed);
    if (status == port::RemoveStatus::timeout) {
      const Next next = step_down(self, 0);
      return next == Next::handle ? Next::again : next;
    }
  } else if (self.sizes) {
    // Richter's thread function, step by step: busy again; if every thread is busy, add one
    // (under the maximum and while CPU use is low); an idle timeout with no I/O of its own
    // outstanding leaves the pool (over the minimum).
    // One deviation from the letter of his loop: a thread whose wait timed out found nothing
    // to do, so it never adds a thread (in his loop it counts itself busy, and a lone idle
    // thread would start a replacement and then leave, every idle timeout).
    // The clock is read only when a rule may fire (not per packet: this is the hot path).
    const unsigned busy = busy_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (status != port::RemoveStatus::timeout &&
        busy >= current_.load(std::memory_order_relaxed) && busy < size()) {
      const std::uint64_t now = metrics::now_ns();
      if (cpu_.percent(now) < sizing_->grow_below_cpu_pct) maybe_grow(now);
    }
    if (status == port::RemoveStatus::timeout) {
      if (!self.io_pending() &&
          try_leave(self.index, metrics::now_ns())) {
        return Next::leave;
      }
      return Next::again;
    }
  }
  if (self.fetches && status == port::RemoveStatus::timeout) {
    const int posted = self.io->fetch(self.index, 2000);
    if (posted > 0) return Next::again;
    if (posted < 0) {
      // Nothing in flight (start-up, drain): wait on the port for a stop packet, briefly.
      status = remove_counted(self, port::Timeout{1});
    }
    if (status == port::RemoveStatus::timeout) return Next::again;
  }
  if (status != port::RemoveStatus::ok && status != port::RemoveStatus::io_failed) {
    ++self.stats.remove_failures;  // the port was closed under us: nothing more will come
    return Next::exit;
  }
  return Next::handle;  // stop packets among them: Pool::worker
}

std::uint64_t Pool::handle_inline(WorkerThread& self, WorkingSet& working_set,
                                  std::uint64_t t_done) {
  unsigned run = 0;
  while (self.inline_done.ready) {
    self.inline_done.ready = false;
    const port::Packet packet = self.inline_done.packet;  // after_handler may refill it
    // The last of a run: the next immediate completion goes to the port (pool.hpp).
    if (++run == kMaxInlineRun) self.context.inline_completion = nullptr;
    t_done = handle_packet(self, packet, working_set, false);
  }
  self.context.inline_completion = &self.inline_done;
  return t_done;
}

std::uint64_t Pool::handle_packet(WorkerThread& self, const port::Packet& packet,
                                  WorkingSet& working_set, bool queued) {
  WorkerStats& stats = self.stats;
  // Clock reads per completion: at most two (remove, handler end), none with metrics off
  // and no handler work, none for a packet the workload left out of its latency sample.
  const bool timed_packet = self.timed && workload_.timed(packet);
  // The packet's handling starts now: for a packet taken in a batch, after the handlers of the
  // ones before it, so its queue delay (insert -> here) includes its wait behind them in the
  // thread that took them (engine/dequeue_batch.hpp).
  const std::uint64_t t_remove =
      timed_packet || self.works || self.tracks_stall ? metrics::now_ns() : 0;
  if (self.tracks_stall) self.control->handler_since_ns.store(t_remove, std::memory_order_relaxed);
  // Each scheduler sample is taken right after the clock read it pairs with, so the CPU and
  // wait it counts cover the same interval as the wall time (the workload's on_packet and the
  // samples' own preads included), and nothing of them reads as blocked.
  const metrics::SchedSample s_start = self.blocks ? self.sched.sample() : metrics::SchedSample{};
  const bool measuring = phase_.load(std::memory_order_relaxed) == kMeasuring;
  ++(queued ? stats.packets_total : stats.inline_total);
  if (board_ != nullptr) {
    board_->took(self.index);
    board_->at(self.index, ProgressBoard::kInHandler);
  }
  const workloads::Completion c = workload_.on_packet(packet, self.context);
  working_set.touch();  // --working-set-kib (engine/working_set.hpp); nothing at 0

  std::uint64_t t_done = t_remove;  // no handler work: the remove time ends it (one read)
  if (self.works) t_done = run_handler(self, t_remove, s_start, measuring);

  if (c.counted) {
    ++stats.handled_total;  // one writer per slot: a relaxed store, no read-modify-write
    handled_[self.index].handled.store(stats.handled_total, std::memory_order_relaxed);
  }
  if (self.tracks_stall) self.control->handler_since_ns.store(0, std::memory_order_relaxed);
  if (measuring) {
    if (c.error) ++stats.errors;
    if (c.counted && !c.error) {
      ++stats.completions;
      stats.bytes += c.bytes;
      if (timed_packet && c.t_insert_ns != 0 && t_remove >= c.t_insert_ns) {
        stats.queue_delay.record(t_remove - c.t_insert_ns);
      }
      if (timed_packet && c.t_start_ns != 0 && t_done >= c.t_start_ns) {
        stats.latency.record(t_done - c.t_start_ns);
      }
    }
  }
  workload_.after_handler(packet, c, t_done, self.context);
  if (board_ != nullptr) board_->at(self.index, ProgressBoard::kInPort);
  return t_done;
}

std::uint64_t Pool::run_handler(WorkerThread& self, std::uint64_t t_remove,
                                const metrics::SchedSample& s_start, bool measuring) {
  work_();
  if (!self.blocks) return metrics::now_ns();
  const std::uint64_t t_block = metrics::now_ns();
  const metrics::SchedSample s_block = self.sched.sample();
  if (handler_.follows_profile()) {
    const double now_ratio = ratio_now_.load(std::memory_order_relaxed);
    if (now_ratio != self.ratio) {
      self.sizer.set_ratio(self.ratio = now_ratio);
      self.level = level_of(now_ratio);
    }
  }
  const std::uint64_t target_ns = self.sizer.target_ns();
  if (board_ != nullptr) board_->at(self.index, ProgressBoard::kBlocking);
  // A profile's segment at ratio 0 does not block at all (its handlers count as all CPU).
  const bool skip = handler_.follows_profile() && self.ratio == 0;
  const std::uint64_t request_ns =
      skip ? 0 : block(self.stats, self.context, self.buffer, self.sizer, target_ns, self.sched);
  if (board_ != nullptr) board_->at(self.index, ProgressBoard::kInHandler);
  const std::uint64_t t_done = metrics::now_ns();
  const HandlerSplit split = split_handler(self.sched.available(), t_remove, t_block, t_done,
                                           s_start, s_block, self.sched.sample());
  // The handler's whole blocked time teaches the sleep (what the ratio counts), unless the
  // sleep was woken late: that is the host's, counted apart and repaid by later sleeps.
  const bool late = late_wakeup(self.sched.available(), request_ns, split.block_blocked_ns);
  if (late) self.sizer.observe_late_wakeup(request_ns, split.block_blocked_ns);
  self.sizer.observe(split.cpu_ns, late ? 0 : request_ns, split.blocked_ns);
  if (self.control != nullptr) {  // one writer: a relaxed load and store, no read-modify-write
    SlotControl& c = *self.control;
    c.cpu_ns.store(c.cpu_ns.load(std::memory_order_relaxed) + split.cpu_ns, std::memory_order_relaxed);
    c.blocked_ns.store(c.blocked_ns.load(std::memory_order_relaxed) + split.blocked_ns,
                       std::memory_order_relaxed);
  }
  if (measuring) {
    HandlerTimes h;
    h.handlers = 1;
    h.late_wakeups = late ? 1 : 0;
    h.late_excess_ns = late ? split.block_blocked_ns - request_ns : 0;
    h.handler_ns = t_done - t_remove;
    h.cpu_ns = split.cpu_ns;
    h.blocked_ns = split.blocked_ns;
    h.runnable_wait_ns = split.runnable_wait_ns;
    h.target_block_ns = target_ns;
    self.stats.handler += h;
    if (!self.stats.handler_by_level.empty()) self.stats.handler_by_level[self.level].times += h;
  }
  return t_done;
}

std::size_t Pool::level_of(double ratio) const {
  const std::vector<double>& levels = handler_.profile_levels;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    if (levels[i] == ratio) return i;
  }
  return 0;  // a fixed ratio: no levels are kept (every ratio a profile sets is one of its levels)
}

}  // namespace iocpbench::engine
