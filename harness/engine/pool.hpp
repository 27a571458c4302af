#pragma once
// The worker pool of one run and the per-completion handler.
//
// The pool is created up front; every thread associates itself with the port by calling
// remove(). Each completion: the workload inspects the packet, the handler computes for
// work_us (calibrated) and then, at b > 0, blocks inside port::BlockingRegion (a 1-ns-slack
// sleep, or synchronous O_DIRECT reads that reach the device) for b/(1-b) times the handler's
// CPU time, sized and measured by engine/block_control, then the workload resubmits. Shutdown: one stop packet per thread, and a thread that takes a stop packet never
// removes again, so each thread takes exactly one (with LIFO wake-ups a thread that looped back
// could otherwise take a second one meant for another, leaving that one blocked forever).
//
// A dequeue batch b > 1 (engine/dequeue_batch.hpp): each remove takes up to b packets, handled
// in order by the thread that took them, each as above. A stop packet inside a batch is the
// thread's own; it still handles the batch's other packets (those after the stop too), posts any
// further stop packet back for another thread, and then exits. A self-sizing pool's thread
// leaves only between batches.
//
// Inline completions (Workload::completes_inline, Windows' skip on success): an I/O that a
// worker's after_handler issued and that completed at once queues no packet; the workload
// leaves it in the worker's InlineCompletion and the pool handles it next on the same thread,
// exactly as a packet (the workload's part, the handler, the records, after_handler), in a loop.
// After kMaxInlineRun of them in a row the context offers no place, so the next immediate
// completion is posted into the port and the thread goes back to it: the packets queued there
// (other slots' I/O) are not starved by one thread's run of immediate completions.
//
// A self-sizing pool (PoolSizing, Richter's heuristic; the `auto` pool spec) moves between its
// minimum and maximum while it runs. Threads live in `max` slots; a slot's WorkerStats and
// progress-board entry carry on across the threads that occupy it in turn. Every change of size
// happens under one mutex, and once stop() has begun none happens: the threads counted then are
// exactly the ones that take the stop packets.
//
// A controlled pool (set_controller: the `hill`, `formula` and `stall` specs,
// engine/pool_control.hpp) is a self-sizing pool without Richter's per-thread rules: one control
// thread samples the pool every controller interval (completions, handler CPU and blocked time,
// busy threads, stalled workers, the port's depth), asks the controller for a target, and grows
// to it at once; a thread over the target leaves after its batch, or when its bounded wait in
// the port (the sizing's idle timeout) times out. A thread whose exit could cancel I/O it has
// in flight (port::WorkerIo::io_pending: where workers submit their own I/O and the OS ties it
// to the submitting thread)
// parks instead: it leaves the count as a leaving thread does, but sleeps, keeping its slot,
// until the pool grows again (a parked thread is counted back in before a new one starts) or
// stops. The control thread ends before stop() counts the threads, so the stop rule above holds
// unchanged: a thread counted back in takes a stop packet, one still parked at stop does not.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/kinds.hpp"
#include "metrics/cpu_meter.hpp"
#include "metrics/histogram.hpp"
#include "metrics/thread_sched.hpp"
#include "metrics/usage.hpp"
#include "port/completion_port.hpp"
#include "engine/block_control.hpp"
#include "engine/cpu_work.hpp"
#include "engine/dequeue_batch.hpp"
#include "engine/pool_control.hpp"
#include "engine/pool_timeline.hpp"
#include "engine/watchdog.hpp"
#include "engine/working_set.hpp"
#include "engine/workload.hpp"

namespace iocpbench::engine {

class ThreadPlacer;  // engine/affinity.hpp

using BlockingKind = iocpbench::BlockingKind;  // core/kinds.hpp

// Inline completions one thread handles in a row before it posts the next into the port.
inline constexpr unsigned kMaxInlineRun = 64;

struct HandlerSpec {
  double work_us = 0;
  double blocking_ratio = 0;  // b in [0, 1)
  BlockingKind kind = BlockingKind::sleep;
  // kind == io: an O_DIRECT file descriptor to read from, its size and the read size.
  int io_fd = -1;
  std::uint64_t io_file_bytes = 0;
  std::uint32_t io_block = 4096;
  // false: no per-completion clock reads (unless the handler works) and no histograms.
  bool metrics = true;
  std::uint32_t working_set_kib = 0;  // each worker's own buffer, touched on every packet
  // A blocking profile's distinct ratios (empty: the ratio is fixed). Each handler blocks at the
  // ratio in force (Pool::set_blocking_ratio), and its times are summed per ratio as well
  // (WorkerStats::handler_by_level), so that each is judged against its own request;
  // blocking_ratio is the profile's time-weighted mean over the window.
  std::vector<double> profile_levels;
  bool follows_profile() const { return !profile_levels.empty(); }

  // The nominal block, work_us*b/(1-b): the first target, before the handler's CPU time is
  // known (engine/block_control sizes every block after that).
  double block_us() const {
    return blocking_ratio <= 0 ? 0 : work_us * blocking_ratio / (1 - blocking_ratio);
  }
  bool blocks() const { return blocking_ratio > 0 && work_us > 0; }
};

struct alignas(64) WorkerStats {
  metrics::Histogram latency;      // end-to-end (measured window)
  metrics::Histogram queue_delay;  // insert -> its handler starts (measured window)
  std::uint64_t completions = 0;   // measured window
  std::uint64_t bytes = 0;
  std::uint64_t errors = 0;
  HandlerTimes handler;  // the blocking handlers' times (measured window)
  // The same per HandlerSpec::profile_levels, a cache line each: written on every handler, and
  // the workers' vectors lie side by side on the heap.
  struct alignas(64) LevelTimes {
    HandlerTimes times;
  };
  std::vector<LevelTimes> handler_by_level;
  std::uint64_t block_reads = 0;
  std::uint64_t block_read_errors = 0;
  std::uint64_t handled_total = 0;  // counted completions, every phase
  std::uint64_t packets_total = 0;  // every packet but stop packets, every phase
  std::uint64_t inline_total = 0;   // completions handled inline (no packet), every phase
  std::uint64_t stop_packets = 0;
  std::uint64_t stop_packets_reposted = 0;  // further stop packets in a batch, posted back
  std::uint64_t remove_failures = 0;  // remove() returned abandoned / invalid_handle
  BatchSizes batches;  // packets per remove (measured window)
};

class Pool {
 public:
  // `ports`: one port shared by the pool, or one per thread (the per-thread-port model: worker
  // i only ever removes from ports[i], and takes its stop packet there). `sizing`: a
  // self-sizing pool of up to sizing->max_threads (then `threads` is ignored; one shared port).
  // `dequeue_batch`: packets per remove, 1..kMaxDequeueBatch (1: remove(), one at a time).
  // `placer` (may be null): each thread pins itself to its slot's CPU before it enrols.
  Pool(std::vector<port::CompletionPort*> ports, workloads::Workload& workload,
       const HandlerSpec& handler, unsigned threads, metrics::RoleRegistry& roles,
       const std::atomic<int>& phase, std::optional<PoolSizing> sizing = std::nullopt,
       unsigned dequeue_batch = 1, ThreadPlacer* placer = nullptr);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Before start(), on a self-sizing pool: a controller sizes it instead of Richter's rules.
  void set_controller(std::unique_ptr<PoolController> controller);
  // The controller's target now (0 without one).
  unsigned target() const { return target_.load(std::memory_order_relaxed); }
  // Starts the threads (a self-sizing pool: its minimum) and returns once every one of them
  // has enrolled (and so can be sampled).
  void start();
  // Posts one stop packet per thread and joins them all. Idempotent.
  void stop();
  const std::vector<WorkerStats>& stats() const { return stats_; }
  // Before start(): each worker reports its packets and where it is (the watchdog's view).
  void set_progress_board(ProgressBoard* board) { board_ = board; }
  // Slots: the threads of a fixed pool, a self-sizing pool's maximum.
  unsigned size() const { return static_cast<unsigned>(stats_.size()); }
  // Threads in the pool now.
  unsigned threads() const { return current_.load(std::memory_order_relaxed); }
  // A copy of the size's history (a fixed pool: its one start entry).
  PoolTimeline timeline() const;
  // The size since the previous call (or start()) up to t_ns: call at the window's start and
  // end, and the second call summarises the window, however many changes it saw.
  PoolWindowSummary mark_window(std::uint64_t t_ns);
  // The same for the run's timeline (runs[].timeline), on its own span so that the window's
  // summary above is untouched.
  PoolWindowSummary mark_tick(std::uint64_t t_ns);
  // Completions counted so far, every phase, summed over the slots (any thread may call it).
  std::uint64_t handled_total() const;
  // A blocking profile's ratio in force (HandlerSpec::profile_levels): the handlers read it
  // before each block. Any thread; before start() it is the warm-up's.
  void set_blocking_ratio(double ratio) { ratio_now_.store(ratio, std::memory_order_relaxed); }

 private:
  struct WorkerThread;  // one thread's set-up (pool.cpp)
  // What a worker does after a remove.
  enum class Next { handle, again, leave, exit };
  void worker(unsigned index, std::uint64_t generation);
  // `ratio`'s index in HandlerSpec::profile_levels (0 where it has none: a fixed ratio).
  std::size_t level_of(double ratio) const;
  // One remove of up to a batch into self.batch (and a fetch of the worker's own completions,
  // and the self-sizing rules that follow it).
  Next take_packets(WorkerThread& self);
  // One remove, counted in the window's batch sizes.
  port::RemoveStatus remove_counted(WorkerThread& self, port::Timeout timeout);
  // A self-sizing pool's thread, between batches: leaves when CPU use is high (Richter), or
  // steps down over a controller's target (step_down). Next::handle: it carries on.
  Next after_batch(WorkerThread& self, std::uint64_t t_done);
  // The workload's part, the handler and the measurements; returns the handler's end (0 when
  // nothing read the clock). `queued`: taken from the port (false: an inline completion).
  std::uint64_t handle_packet(WorkerThread& self, const port::Packet& packet,
                              WorkingSet& working_set, bool queued = true);
  // The inline completions the last handling left, one after another; returns the last end.
  std::uint64_t handle_inline(WorkerThread& self, WorkingSet& working_set, std::uint64_t t_done);
  // The calibrated work, then the block (sized, split and learnt from); returns its end.
  std::uint64_t run_handler(WorkerThread& self, std::uint64_t t_remove,
                            const metrics::SchedSample& s_start, bool measuring);
  // Blocks for about `target_ns`; returns the sleep it asked the OS for (0 for io blocks).
  std::uint64_t block(WorkerStats& stats, workloads::WorkerContext& context, void* buffer,
                      BlockSizer& sizer, std::uint64_t target_ns,
                      const metrics::ThreadSchedClock& sched);
  // Under sizing_mutex_: occupies a free slot with a new thread. False when stopping or full.
  bool spawn_locked();
  // Richter's rules; each takes sizing_mutex_ and changes the size at most by one.
  void maybe_grow(std::uint64_t now_ns);
  // `park`: the thread keeps its slot and sleeps in wait_parked() instead of ending.
  bool try_leave(unsigned slot, std::uint64_t now_ns, bool park = false);
  // A parked thread's sleep: true when counted back in (it carries on), false at stop.
  bool wait_parked(unsigned slot);
  // A controlled pool's thread over the target: it leaves (Next::leave), parks and comes back
  // (Next::again), parks until the stop (Next::exit), or stays (Next::handle: not over the
  // target, or the pool is at its minimum). `now_ns` 0: read the clock if it is needed.
  Next step_down(WorkerThread& self, std::uint64_t now_ns);
  void record_size_locked(std::uint64_t now_ns);
  // The control thread: sample, ask, grow; until stop().
  void control_loop();
  ControlSample control_sample() const;
  void grow_to(unsigned target, std::uint64_t now_ns);
  // A controlled pool with more threads than the target.
  bool over_target() const;

  std::vector<port::CompletionPort*> ports_;
  workloads::Workload& workload_;
  HandlerSpec handler_;
  CpuWork work_;
  double sleep_overshoot_ns_ = 0;  // every thread's first estimate (block_control)
  LateDebt late_debt_;  // the sleeps woken late, repaid by any thread's later sleeps
  metrics::RoleRegistry& roles_;
  const std::atomic<int>& phase_;
  std::vector<WorkerStats> stats_;
  ProgressBoard* board_ = nullptr;
  std::optional<PoolSizing> sizing_;
  unsigned dequeue_batch_ = 1;
  ThreadPlacer* placer_ = nullptr;
  metrics::CpuMeter cpu_;

  // Guarded by sizing_mutex_: the slots' threads and which hold a thread still in the pool.
  mutable std::mutex sizing_mutex_;
  std::vector<std::thread> threads_;
  std::vector<bool> occupied_;
  bool stopping_ = false;
  unsigned parked_ = 0;    // threads asleep in wait_parked(), their slots kept
  unsigned unparked_ = 0;  // of those, counted back in and not yet awake
  std::condition_variable park_cv_;
  PoolTimeline timeline_;
  SizeTracker size_;
  SizeTracker tick_size_;  // the timeline's windows
  std::vector<std::uint64_t> generation_;  // threads each slot has had (seeds their RNG)
  // Written under sizing_mutex_, read without it on the hot path (Richter's interlocked counts).
  std::atomic<unsigned> current_{0};
  alignas(64) std::atomic<unsigned> busy_{0};

  std::atomic<unsigned> enrolled_{0};
  std::atomic<double> ratio_now_{0};  // a blocking profile's ratio in force

  // Each slot's counted completions (its thread's handled_total), for the timeline's sampler.
  struct alignas(64) SlotCount {
    std::atomic<std::uint64_t> handled{0};
  };
  std::unique_ptr<SlotCount[]> handled_;
  bool stopped_ = false;

  // A controlled pool: the controller and its thread, the target, and each slot's counters
  // (written by the slot's thread alone, read by the control thread).
  // (Completions come from handled_.)
  struct alignas(64) SlotControl {
    std::atomic<std::uint64_t> cpu_ns{0}, blocked_ns{0};
    std::atomic<std::uint64_t> handler_since_ns{0};  // 0: not inside a handler
  };
  std::unique_ptr<PoolController> controller_;
  std::unique_ptr<SlotControl[]> slot_control_;
  std::atomic<unsigned> target_{0};
  std::thread control_thread_;
  std::mutex control_mutex_;
  std::condition_variable control_cv_;
  bool control_stop_ = false;  // under control_mutex_
};

}  // namespace iocpbench::engine
