#pragma once
// The Workload interface: what drives packets into a port, and what a worker does with them
// before and after the handler (CPU work + blocking, owned by the pool in harness/engine/).
//
// Life of a run: open() -> start() -> [warm-up, measured window] -> drain() -> (the pool takes
// its stop packets and exits) -> close(). on_packet()/after_handler() run on pool threads.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kinds.hpp"
#include "core/random.hpp"
#include "metrics/histogram.hpp"
#include "metrics/usage.hpp"
// What a workload may use of the port: packets and ports (completion_port.hpp), the guard a
// handler wraps a wait in so that the port releases a waiter meanwhile (blocking_region.hpp),
// and the pool's view of the workers' own I/O (worker_io.hpp).
// Workloads include the engine, not port/ (tests/layers/check_layers.py).
#include "port/blocking_region.hpp"
#include "port/completion_port.hpp"
#include "port/worker_io.hpp"
#include "engine/open_loop.hpp"
#include "engine/workload_params.hpp"

namespace iocpbench::workloads {

// The phase of a run: workloads count and record only while measuring, and stop issuing new
// work once stopping.
enum Phase : int { kWarmup = 0, kMeasuring = 1, kStopping = 2 };

// The completion key the pool reserves for its stop packets; workloads never use it.
inline constexpr std::uintptr_t kStopKey = ~std::uintptr_t{0};

struct RunEnv {
  port::CompletionPort* port = nullptr;
  metrics::RoleRegistry* roles = nullptr;
  const std::atomic<int>* phase = nullptr;
  unsigned pool_size = 0;
  // Per-thread dispatch: worker i's own port (size = pool_size); empty for a shared port. Each
  // worker's I/O completes into its own port.
  std::vector<port::CompletionPort*> worker_ports;
  bool metrics = true;  // false: no clock reads for latency (the pool records nothing)
  // Open-loop arrivals (engine/open_loop.hpp), or nullptr for the closed loop. When set, start()
  // issues nothing: the pacer calls issue(slot) at each intended time, and the workload
  // releases the slot once the request is done (after the pool has timed it).
  engine::OpenLoop* open_loop = nullptr;
  // --skip-on-success: what the file and socket transports ask of the OS (core/kinds.hpp).
  SkipOnSuccess skip_on_success = SkipOnSuccess::by_default;
  // Places the load generator's own threads (--load-affinity): each reserves its index on the
  // thread that starts it and pins itself first thing (engine/affinity.hpp). Null in tests.
  engine::ThreadPlacer* load_placer = nullptr;
};

// A completion that a worker's own issue reached at once with no packet queued (Windows'
// FILE_SKIP_COMPLETION_PORT_ON_SUCCESS): the pool handles it next on the same thread, through
// on_packet, the handler, the records and after_handler, as a packet taken from the port.
struct InlineCompletion {
  port::Packet packet;
  bool ready = false;
};

// Per pool thread, handed to every call a worker makes.
struct WorkerContext {
  unsigned index = 0;
  std::uint64_t rng = 0;  // xorshift state, never 0
  std::uint64_t tick = 0;  // the workload's own per-worker counter (the post workload's sampling)
  // Where after_handler may leave an InlineCompletion for the pool (set by the pool for a
  // workload that completes_inline()); nullptr: there is no such place now, so the transport
  // posts an immediate completion into the port itself.
  InlineCompletion* inline_completion = nullptr;
  std::uint64_t next_random() noexcept { return core::xorshift64(rng); }
};

// What a worker learns from one packet.
struct Completion {
  std::uint64_t t_start_ns = 0;   // start of the end-to-end latency; 0: the workload measures it
  std::uint64_t t_insert_ns = 0;  // when the packet entered the port; 0: unknown
  std::uint32_t bytes = 0;
  bool counted = true;  // one completion of the workload's work (false: end of stream, control)
  bool error = false;
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string_view name() const = 0;
  // Files, sockets, completion sources, load-generator threads (which enrol in env.roles). Throws
  // BadInput for parameters the machine refuses, std::runtime_error otherwise.
  virtual void open(const RunEnv& env) = 0;
  virtual void start() = 0;
  virtual Completion on_packet(const port::Packet& packet, WorkerContext& worker) = 0;
  // After the handler, on the same thread: resubmit / re-post. `t_done_ns` ended the handler.
  // Whether the pool times this packet (reads the clock when it takes it, records its latency
  // and queue delay): a workload that samples says no for the packets it did not stamp.
  virtual bool timed(const port::Packet& /*packet*/) const { return true; }
  virtual void after_handler(const port::Packet& packet, const Completion& completion,
                             std::uint64_t t_done_ns, WorkerContext& worker) = 0;
  // Called once the phase is kStopping: returns when every outstanding operation has been
  // handled (true) or at the deadline (false; close() then cancels what is left).
  virtual bool drain(std::chrono::steady_clock::time_point deadline) = 0;
  // After the pool has exited: joins the workload's threads, closes its handles.
  virtual void close() = 0;
  // Workload-specific counts for the results.
  virtual nlohmann::json stats(double window_s) const = 0;
  // Errors the workload saw outside the pool's handler (verification, generator, source).
  virtual std::uint64_t errors() const { return 0; }
  // Where the workload measures end-to-end latency itself (the socket load generator's round
  // trips), that histogram (valid after close()); else nullptr.
  virtual const metrics::Histogram* own_latency() const { return nullptr; }
  // Whether an I/O a worker issues in after_handler may complete inline, without a packet
  // (skip-on-success granted on some handle): the pool then gives each worker's context an
  // InlineCompletion and handles what is left there. Asked once per thread, after open().
  virtual bool completes_inline() const { return false; }
  // The I/O the workers own (port/worker_io.hpp): whether a worker fetches its own completions
  // and whether its exit could cancel I/O in flight; nullptr: they own none (the post workload).
  // Valid from open() until the workload is destroyed.
  virtual port::WorkerIo* worker_io() const { return nullptr; }
  // For the watchdog's report when a run stops making progress (any thread, while running):
  // what the workload has in flight, e.g. "32 file I/Os in flight in the completion source".
  virtual std::string stall_report() const { return {}; }
  // Packets posted into the port in total (the post workload's accounting), if it posts.
  virtual std::uint64_t packets_posted() const { return 0; }
  // Open loop: the in-flight bound this workload's parameters give (post: in_flight; file:
  // outstanding; socket: connections x messages in flight, at least 64), or 0 where it has no
  // open loop.
  // Called before open().
  virtual unsigned open_loop_slots() const { return 0; }
  // Open loop, on the pacer's thread: issue one request in `slot` now (its times are in
  // env.open_loop); false when it could not be issued.
  virtual bool issue(unsigned /*slot*/) { return false; }
};

// The factories: engine/workload_registry.hpp (workloads/ registers them from above).

}  // namespace iocpbench::workloads
