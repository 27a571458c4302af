// Microbenchmarks of the port primitives against their peers, every backend through the same
// CompletionPort interface (docs/targets.md P1..P3; bench/anchors.py turns them into ratios):
//
//   stream/<backend>/pool:<spec>          P1 streaming: one poster thread outside the pool keeps
//                                         at most 1024 packets outstanding; the pool removes.
//   closed/<backend>/pool:<spec>/K:2M     P1 closed loop: K packets in flight, each re-posted by
//   closed/<backend>/pool:<spec>/K:M-1    the worker that removed it (K >= M, and K < M).
//   handoff/<backend>, handoff/futex      P2: A posts to port 1 where B waits, B posts back to
//                                         port 2 where A waits; against two threads
//                                         ping-ponging on two futex words.
//   handoff_vs_futex/<backend>            P2 in one process: blocks of each alternate, so both
//                                         see the same load; counter cost_ratio = port/futex.
//   efficient/<backend>                   P3, "the most efficient scenario": packets queued,
//                                         the port at its concurrency limit, the running
//                                         threads drain them (closed loop, K = 64M, pool 2N+2).
//   poster_alone/<backend>                The physical limits beside P1: one thread
//   pingpong/atomic                       posting with no consumer (the streaming poster's
//   pause                                 ceiling), two threads passing one cache line back
//                                         and forth (the host's line round trip), and what
//                                         one spin-wait PAUSE costs (PortLock counts in them).
//
// N = logical CPUs, M = the port's concurrency value = N. Throughput is items_per_second (real
// time); cs_per_item is the process's context switches (voluntary + involuntary, getrusage)
// per completion, where the OS can tell. Pool benchmarks run the pool continuously: one
// iteration is a slice of kSlice during which the main thread sleeps, and the items are the
// completions counted between the first and last slice. Every wait is bounded: a dispatcher
// that stops delivering makes the benchmark report an error instead of hanging.

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "metrics/usage.hpp"
#include "platform/platform.hpp"
#include "port/blocking_region.hpp"
#include "port/completion_port.hpp"
#include "port/port_lock.hpp"

namespace iocpbench::bench {
namespace {

using namespace std::chrono_literals;
using platform::Clock;
using port::Backend;
using port::CompletionPort;
using port::Packet;
using port::RemoveStatus;

constexpr port::Timeout kWorkerTimeout = 200ms;  // workers re-check `stop` at least this often
constexpr port::Timeout kReplyBound = 2000ms;    // a round trip slower than this is a failure
constexpr auto kSlice = 5ms;                      // one iteration of a pool benchmark
constexpr auto kWarmUp = 10ms;
constexpr auto kStallLimit = 2s;  // no completion for this long: the dispatcher is stuck

constexpr Backend kBackends[] = {Backend::emulated, Backend::condvar, Backend::asio};

struct PoolSpec {
  const char* name;
  unsigned per_cpu;
  unsigned plus;
};
constexpr PoolSpec kPools[] = {{"N", 1, 0}, {"2N", 2, 0}, {"2N+2", 2, 2}};

unsigned pool_size(const PoolSpec& spec) { return spec.per_cpu * platform::logical_cpus() + spec.plus; }

struct alignas(64) PaddedCount {
  std::atomic<std::uint64_t> value{0};
};

// Streaming flow control: the poster sleeps once kHigh packets are outstanding and is woken
// when the pool has brought it down to kLow. Workers report completions every kFlush, so the
// shared counter costs one atomic add per kFlush completions.
class Window {
 public:
  static constexpr std::uint64_t kHigh = 1024, kLow = 512, kFlush = 32;

  void consumed(std::uint64_t n) {
    const std::uint64_t total = consumed_.fetch_add(n) + n;
    if (sleeping_.load() == 1 && total >= wake_at_.load() && sleeping_.exchange(0) == 1) {
      platform::futex_wake_one(sleeping_);
    }
  }

  // The poster, having posted `posted` packets in all.
  void throttle(std::uint64_t posted, const std::atomic<bool>& stop) {
    if (posted - consumed_.load() < kHigh) return;
    wake_at_.store(posted - kLow);
    sleeping_.store(1);
    while (sleeping_.load() == 1 && !stop.load() && consumed_.load() < posted - kLow) {
      const Clock::time_point deadline = Clock::now() + 20ms;  // bounded even if a wake is lost
      platform::futex_wait(sleeping_, 1, &deadline);
    }
    sleeping_.store(0);
  }

  void release() {
    sleeping_.store(0);
    platform::futex_wake_one(sleeping_);
  }

 private:
  alignas(64) std::atomic<std::uint64_t> consumed_{0};
  alignas(64) std::atomic<std::uint64_t> wake_at_{0};
  alignas(64) std::atomic<std::uint32_t> sleeping_{0};
};

// A pool of workers looping on remove(); each counts its completions in its own cache line.
// consume: the packet is done (streaming). repost: the worker posts it back (closed loop).
class Pool {
 public:
  enum class Mode { consume, repost };

  Pool(CompletionPort& port, unsigned threads, Mode mode, Window* window)
      : port_(port), mode_(mode), window_(window), counts_(threads) {
    workers_.reserve(threads);
    for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this, i] { work(i); });
  }
  ~Pool() { stop(); }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  std::uint64_t completed() const {
    std::uint64_t sum = 0;
    for (const auto& c : counts_) sum += c.value.load(std::memory_order_relaxed);
    return sum;
  }

  // Closes the port (waiters return at once) and joins the workers.
  void stop() {
    if (workers_.empty()) return;
    stop_.store(true);
    port_.close();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  const std::atomic<bool>& stopping() const { return stop_; }

 private:
  void work(unsigned index) {
    std::atomic<std::uint64_t>& mine = counts_[index].value;
    std::uint64_t unflushed = 0;
    Packet packet;
    for (;;) {
      const RemoveStatus status = port_.remove(packet, kWorkerTimeout);
      if (status == RemoveStatus::ok || status == RemoveStatus::io_failed) {
        mine.store(mine.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        if (mode_ == Mode::repost) {
          if (!port_.post(packet)) break;
        } else if (window_ != nullptr && ++unflushed == Window::kFlush) {
          window_->consumed(unflushed);
          unflushed = 0;
        }
        continue;
      }
      if (status != RemoveStatus::timeout) break;  // abandoned / invalid_handle: closed
      if (window_ != nullptr && unflushed > 0) {
        window_->consumed(unflushed);
        unflushed = 0;
      }
      if (stop_.load()) break;
    }
    port::detach_current_thread();
  }

  CompletionPort& port_;
  const Mode mode_;
  Window* const window_;
  std::vector<PaddedCount> counts_;
  std::vector<std::thread> workers_;
  std::atomic<bool> stop_{false};
};

// Context switches of the whole process so far (voluntary + involuntary, exited threads
// included), where the OS counts them that way (metrics::process_usage); nothing elsewhere, and
// the counter is then left out of the benchmark's output.
std::optional<std::uint64_t> process_context_switches() {
  if (!metrics::process_switches_include_exited_threads() ||
      metrics::context_switches_unavailable()) {
    return std::nullopt;
  }
  const metrics::Usage usage = metrics::process_usage();
  return usage.voluntary + usage.involuntary;
}

// Context switches per item between two readings, where the OS can tell.
class SwitchMeter {
 public:
  SwitchMeter() : start_(process_context_switches()) {}
  void report(benchmark::State& state, std::uint64_t items) const {
    const auto end = process_context_switches();
    if (!start_ || !end || items == 0) return;
    state.counters["cs_per_item"] =
        benchmark::Counter(static_cast<double>(*end - *start_) / static_cast<double>(items));
  }

 private:
  std::optional<std::uint64_t> start_;
};

// Runs the state loop over a running pool: each iteration sleeps one slice; the items are the
// completions counted from the first slice to the last. A pool that stalls is an error.
void measure_pool(benchmark::State& state, const Pool& pool, const CompletionPort& port) {
  std::this_thread::sleep_for(kWarmUp);
  const std::uint64_t first = pool.completed();
  const port::PortCounters counters_before = port.counters();
  const SwitchMeter switches;
  std::uint64_t last = first;
  Clock::time_point last_progress = Clock::now();
  for (auto _ : state) {
    platform::precise_sleep(kSlice);
    const std::uint64_t now = pool.completed();
    if (now != last) {
      last = now;
      last_progress = Clock::now();
    } else if (Clock::now() - last_progress > kStallLimit) {
      state.SkipWithError("no completion for 2 s: the dispatcher stalled");
      break;
    }
  }
  const std::uint64_t items = last - first;
  state.SetItemsProcessed(static_cast<std::int64_t>(items));
  switches.report(state, items);
  const port::PortCounters counters_after = port.counters();
  if (counters_after.available && items > 0) {
    const double handoffs = static_cast<double>(counters_after.handoffs - counters_before.handoffs);
    state.counters["handoffs_per_item"] = benchmark::Counter(handoffs / static_cast<double>(items));
  }
}

std::string label(const CompletionPort& port, unsigned threads, std::uint64_t in_flight) {
  std::string text = "M=" + std::to_string(port.concurrency()) + " pool=" + std::to_string(threads);
  if (in_flight > 0) text += " K=" + std::to_string(in_flight);
  return text;
}

// ---- P1 streaming ----

void bm_stream(benchmark::State& state, Backend backend, PoolSpec spec) {
  auto port = port::make_port(backend, {});
  if (!port) {
    state.SkipWithError("backend not built on this OS");
    return;
  }
  const unsigned threads = pool_size(spec);
  Window window;
  Pool pool(*port, threads, Pool::Mode::consume, &window);
  std::thread poster([&] {
    std::uint64_t posted = 0;
    while (!pool.stopping().load()) {
      for (int i = 0; i < 64; ++i) {
        if (!port->post({.key = posted})) return;
        ++posted;
      }
      window.throttle(posted, pool.stopping());
    }
  });
  measure_pool(state, pool, *port);
  pool.stop();
  window.release();
  poster.join();
  state.SetLabel(label(*port, threads, 0) + " posters=1 window=1024");
}

// ---- P1 closed loop, and P3 ----

void run_closed(benchmark::State& state, Backend backend, unsigned threads, std::uint64_t in_flight) {
  auto port = port::make_port(backend, {});
  if (!port) {
    state.SkipWithError("backend not built on this OS");
    return;
  }
  Pool pool(*port, threads, Pool::Mode::repost, nullptr);
  for (std::uint64_t k = 0; k < in_flight; ++k) port->post({.key = k});
  measure_pool(state, pool, *port);
  pool.stop();
  state.SetLabel(label(*port, threads, in_flight));
}

void bm_closed(benchmark::State& state, Backend backend, PoolSpec spec, bool below_m) {
  const unsigned m = platform::logical_cpus();
  if (below_m && m < 2) {
    state.SkipWithError("K < M needs M >= 2");
    return;
  }
  run_closed(state, backend, pool_size(spec), below_m ? m - 1 : 2 * std::uint64_t{m});
}

void bm_efficient(benchmark::State& state, Backend backend) {
  const unsigned n = platform::logical_cpus();
  run_closed(state, backend, 2 * n + 2, 64 * std::uint64_t{n});
}

// ---- P2: handoff round trip vs a raw futex round trip ----

// B's side of the port round trip: waits on `there`, posts each packet back to `back`.
class PortEcho {
 public:
  explicit PortEcho(Backend backend)
      : there_(port::make_port(backend, {.concurrency = 1})),
        back_(port::make_port(backend, {.concurrency = 1})) {
    if (!there_ || !back_) return;
    thread_ = std::thread([this] {
      Packet packet;
      for (;;) {
        const RemoveStatus status = there_->remove(packet, kWorkerTimeout);
        if (status == RemoveStatus::ok) {
          if (!back_->post(packet)) break;
        } else if (status != RemoveStatus::timeout || stop_.load()) {
          break;
        }
      }
      port::detach_current_thread();
    });
  }
  ~PortEcho() {
    stop_.store(true);
    if (there_) there_->close();
    if (back_) back_->close();
    if (thread_.joinable()) thread_.join();
    port::detach_current_thread();
  }
  PortEcho(const PortEcho&) = delete;
  PortEcho& operator=(const PortEcho&) = delete;

  bool usable() const { return thread_.joinable(); }
  // A's side: post to B's port, wait on ours. False when no reply came within the bound.
  bool round_trip() {
    there_->post({.key = 1});
    Packet reply;
    return back_->remove(reply, kReplyBound) == RemoveStatus::ok;
  }

 private:
  std::unique_ptr<CompletionPort> there_, back_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The anchor: two threads ping-ponging on two futex words, nothing else.
class FutexEcho {
 public:
  FutexEcho()
      : thread_([this] {
          for (;;) {
            while (ping_.load(std::memory_order_acquire) == 0) {
              const Clock::time_point deadline = Clock::now() + kWorkerTimeout;
              if (!platform::futex_wait(ping_, 0, &deadline) && stop_.load()) return;
            }
            if (stop_.load()) return;
            ping_.store(0, std::memory_order_relaxed);
            pong_.store(1, std::memory_order_release);
            platform::futex_wake_one(pong_);
          }
        }) {}
  ~FutexEcho() {
    stop_.store(true);
    ping_.store(1, std::memory_order_release);
    platform::futex_wake_one(ping_);
    thread_.join();
  }
  FutexEcho(const FutexEcho&) = delete;
  FutexEcho& operator=(const FutexEcho&) = delete;

  bool round_trip() {
    ping_.store(1, std::memory_order_release);
    platform::futex_wake_one(ping_);
    const Clock::time_point deadline = Clock::now() + kReplyBound;
    while (pong_.load(std::memory_order_acquire) == 0) {
      if (!platform::futex_wait(pong_, 0, &deadline)) return false;
    }
    pong_.store(0, std::memory_order_relaxed);
    return true;
  }

 private:
  std::atomic<std::uint32_t> ping_{0}, pong_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

template <typename Echo>
void run_round_trips(benchmark::State& state, Echo& echo) {
  for (int i = 0; i < 1000; ++i) {  // warm-up
    if (!echo.round_trip()) {
      state.SkipWithError("no reply within 2 s");
      return;
    }
  }
  const SwitchMeter switches;
  for (auto _ : state) {
    if (!echo.round_trip()) {
      state.SkipWithError("no reply within 2 s");
      break;
    }
  }
  switches.report(state, static_cast<std::uint64_t>(state.iterations()));
  state.SetItemsProcessed(state.iterations());
}

void bm_handoff(benchmark::State& state, Backend backend) {
  PortEcho echo(backend);
  if (!echo.usable()) {
    state.SkipWithError("backend not built on this OS");
    return;
  }
  run_round_trips(state, echo);
}

void bm_futex_round_trip(benchmark::State& state) {
  FutexEcho echo;
  run_round_trips(state, echo);
}

// P2 in one process: blocks of kBlock port round trips and kBlock futex round trips alternate
// (a few hundred microseconds each), so both see the same load; one iteration is one block of
// each. Counters: microseconds per round trip of each, and their ratio (port / futex).
void bm_handoff_vs_futex(benchmark::State& state, Backend backend) {
  constexpr int kBlock = 64;
  PortEcho port_echo(backend);
  FutexEcho futex_echo;
  if (!port_echo.usable()) {
    state.SkipWithError("backend not built on this OS");
    return;
  }
  const auto block = [](auto& echo) -> std::optional<Clock::duration> {
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < kBlock; ++i) {
      if (!echo.round_trip()) return std::nullopt;
    }
    return Clock::now() - start;
  };
  for (int i = 0; i < 10; ++i) {  // warm-up
    if (!block(port_echo) || !block(futex_echo)) {
      state.SkipWithError("no reply within 2 s");
      return;
    }
  }
  Clock::duration port_time{}, futex_time{};
  bool port_first = true;
  for (auto _ : state) {
    std::optional<Clock::duration> a, b;
    if (port_first) {
      a = block(port_echo);
      b = block(futex_echo);
    } else {
      b = block(futex_echo);
      a = block(port_echo);
    }
    port_first = !port_first;
    if (!a || !b) {
      state.SkipWithError("no reply within 2 s");
      break;
    }
    port_time += *a;
    futex_time += *b;
  }
  const double trips = static_cast<double>(state.iterations()) * kBlock;
  if (trips > 0 && futex_time.count() > 0) {
    const double port_us = std::chrono::duration<double, std::micro>(port_time).count() / trips;
    const double futex_us = std::chrono::duration<double, std::micro>(futex_time).count() / trips;
    state.counters["port_us_per_round_trip"] = benchmark::Counter(port_us);
    state.counters["futex_us_per_round_trip"] = benchmark::Counter(futex_us);
    state.counters["cost_ratio"] = benchmark::Counter(port_us / futex_us);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(2 * trips));
}

// ---- the physical limits beside P1 ----

// One thread posts into a port nobody removes from: the streaming poster's ceiling. Each
// iteration times 1024 posts (manual time); the port is then drained by the same thread,
// untimed, so it never grows past 1024 packets.
void bm_poster_alone(benchmark::State& state, Backend backend) {
  constexpr int kBurst = 1024;
  auto port = port::make_port(backend, {});
  if (!port) {
    state.SkipWithError("backend not built on this OS");
    return;
  }
  Packet packet;
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < kBurst; ++i) {
      if (!port->post({.key = static_cast<std::uintptr_t>(i)})) {
        state.SkipWithError("post failed");
        return;
      }
    }
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - start).count());
    for (int i = 0; i < kBurst; ++i) {
      if (port->remove(packet, port::Timeout{0}) != RemoveStatus::ok) {
        state.SkipWithError("a posted packet was not there to remove");
        return;
      }
    }
  }
  port->close();
  port::detach_current_thread();
  state.SetItemsProcessed(state.iterations() * kBurst);
}

// Two threads pass one cache line back and forth: A writes an odd value, B answers with the
// next even one. One iteration is one round trip (two line transfers between the CPUs the two
// threads run on). A partner that is not running (both on one CPU under load) makes the spin
// yield after a while; one that never answers within kReplyBound is an error.
void bm_pingpong_atomic(benchmark::State& state) {
  struct alignas(64) Line {
    std::atomic<std::uint64_t> value{0};
  };
  Line line;
  std::atomic<bool> stop{false};
  const auto await = [&](std::uint64_t want) {
    const Clock::time_point deadline = Clock::now() + kReplyBound;
    for (std::uint32_t spins = 1;; ++spins) {
      if (line.value.load(std::memory_order_acquire) == want) return true;
      if (stop.load(std::memory_order_relaxed)) return false;
      if (spins % 4096 == 0) {
        std::this_thread::yield();
        if (Clock::now() > deadline) return false;
      }
    }
  };
  std::thread partner([&] {
    for (std::uint64_t odd = 1;; odd += 2) {
      if (!await(odd)) return;
      line.value.store(odd + 1, std::memory_order_release);
    }
  });
  std::uint64_t next = 1;
  const Clock::time_point start = Clock::now();
  for (auto _ : state) {
    line.value.store(next, std::memory_order_release);
    if (!await(next + 1)) {
      state.SkipWithError("no answer within 2 s");
      break;
    }
    next += 2;
  }
  const double elapsed_ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  stop.store(true);
  partner.join();
  state.SetItemsProcessed(state.iterations());
  if (state.iterations() > 0) {
    state.counters["ns_per_round_trip"] =
        benchmark::Counter(elapsed_ns / static_cast<double>(state.iterations()));
  }
}

// One spin-wait hint (x86 PAUSE) after another: PortLock bounds its spin in these, and their
// cost varies about tenfold between x86 generations. seconds_per_pause is the CPU time of one
// (an inverted rate: the console prints it scaled, e.g. "29ns").
void bm_pause(benchmark::State& state) {
  constexpr int kPauses = 1000;
  for (auto _ : state) {
    for (int i = 0; i < kPauses; ++i) port::cpu_relax();
  }
  state.SetItemsProcessed(state.iterations() * kPauses);
  state.counters["seconds_per_pause"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kPauses,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void register_all() {
  for (Backend backend : kBackends) {
    if (!port::backend_available(backend)) continue;
    const std::string name(port::to_string(backend));
    for (const PoolSpec& spec : kPools) {
      benchmark::RegisterBenchmark(("stream/" + name + "/pool:" + spec.name).c_str(), bm_stream,
                                   backend, spec)
          ->UseRealTime();
    }
    for (const PoolSpec& spec : kPools) {
      for (bool below_m : {false, true}) {
        const std::string bench = "closed/" + name + "/pool:" + spec.name + (below_m ? "/K:M-1" : "/K:2M");
        benchmark::RegisterBenchmark(bench.c_str(), bm_closed, backend, spec, below_m)->UseRealTime();
      }
    }
    benchmark::RegisterBenchmark(("handoff/" + name).c_str(), bm_handoff, backend)->UseRealTime();
    benchmark::RegisterBenchmark(("handoff_vs_futex/" + name).c_str(), bm_handoff_vs_futex, backend)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("efficient/" + name).c_str(), bm_efficient, backend)->UseRealTime();
    benchmark::RegisterBenchmark(("poster_alone/" + name).c_str(), bm_poster_alone, backend)
        ->UseManualTime();
  }
  benchmark::RegisterBenchmark("handoff/futex", bm_futex_round_trip)->UseRealTime();
  benchmark::RegisterBenchmark("pingpong/atomic", bm_pingpong_atomic)->UseRealTime();
  benchmark::RegisterBenchmark("pause", bm_pause);  // CPU time: a preempted loop is not slower
}

}  // namespace
}  // namespace iocpbench::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const unsigned n = iocpbench::platform::logical_cpus();
  benchmark::AddCustomContext("logical_cpus_N", std::to_string(n));
  benchmark::AddCustomContext("concurrency_M", std::to_string(n));
  iocpbench::bench::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
