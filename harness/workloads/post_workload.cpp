// The post workload: packets only, no I/O, so the port itself is measured.
// Streaming: --posters P threads outside the pool post packets, each keeping at most
// ceil(K/P) of its own outstanding; a poster that reaches its bound sleeps until the workers
// have handled half of them (one wake-up per K/2P packets, not one per packet).
// Closed loop (--posters 0): K packets posted once, re-posted by the worker that handled them.
// One packet in --latency-sample-every carries its insert time in `context` (no allocation;
// one clock read per sampled post); the pool times only those (timed()), so what the metrics
// cost is divided by K.
// Open loop (env.open_loop set): the pacer posts each packet at its intended time (issue());
// the packet's context names its slot, every packet is timed, and the handled packet's slot is
// released instead of re-posted. The in-flight bound is --in-flight.

#include <string>
#include <thread>
#include <vector>

#include "metrics/clock.hpp"
#include "platform/platform.hpp"
#include "engine/affinity.hpp"
#include "engine/workload.hpp"
#include "workloads/workloads.hpp"

namespace iocpbench::workloads {
namespace {

constexpr std::uintptr_t kClosedLoopKey = ~std::uintptr_t{0} - 1;
constexpr std::uintptr_t kOpenLoopKey = ~std::uintptr_t{0} - 2;

struct alignas(64) Poster {
  std::atomic<std::uint64_t> outstanding{0};
  std::atomic<std::uint32_t> sleeping{0};  // the futex word: 1 while the poster waits
  std::uint64_t posted = 0;                // written by the poster thread only
  std::uint64_t sleeps = 0;
  std::uint64_t post_failures = 0;
  std::uint64_t ticks = 0;  // posts, for the latency sample
  std::thread thread;
};

class PostWorkload final : public Workload {
 public:
  explicit PostWorkload(const PostParams& p) : params_(p) {}
  ~PostWorkload() override { join_posters(); }

  std::string_view name() const override { return "post"; }

  void open(const RunEnv& env) override {
    env_ = env;
    if (params_.posters > 0) {
      posters_ = std::vector<Poster>(params_.posters);
      bound_ = (params_.in_flight + params_.posters - 1) / params_.posters;
      low_ = bound_ / 2;
    }
  }

  void start() override {
    if (env_.open_loop != nullptr) return;  // the pacer issues
    if (params_.posters == 0) {
      closed_outstanding_.store(params_.in_flight);
      for (unsigned i = 0; i < params_.in_flight; ++i) {
        post_one(kClosedLoopKey, stamp(), closed_post_failures_, port_for(i));
      }
      closed_posted_.fetch_add(params_.in_flight);
      return;
    }
    for (std::size_t i = 0; i < posters_.size(); ++i) {
      const unsigned slot = env_.load_placer != nullptr
                                ? env_.load_placer->reserve("poster " + std::to_string(i))
                                : 0;
      posters_[i].thread = std::thread([this, i, slot] {
        if (env_.load_placer != nullptr) env_.load_placer->pin_current(slot);
        poster_loop(posters_[i], i);
      });
    }
  }

  bool timed(const port::Packet& packet) const override {
    return packet.key == kOpenLoopKey || packet.context != nullptr;
  }

  unsigned open_loop_slots() const override { return params_.in_flight; }

  bool issue(unsigned slot) override {
    open_outstanding_.fetch_add(1, std::memory_order_relaxed);
    port::Packet packet;
    packet.key = kOpenLoopKey;
    packet.context = reinterpret_cast<void*>(static_cast<std::uintptr_t>(slot));
    if (env_.port->post(packet)) {
      open_posted_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    open_outstanding_.fetch_sub(1, std::memory_order_seq_cst);
    return false;  // the pacer counts the failure
  }

  Completion on_packet(const port::Packet& packet, WorkerContext&) override {
    Completion c;
    if (packet.key == kOpenLoopKey) {
      const auto slot = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(packet.context));
      // Its response and service times are the open loop's (engine/request_ledger.hpp), taken
      // when the slot is released; the pool times only its wait in the port.
      c.t_insert_ns = env_.open_loop->issue_ns(slot);
      return c;
    }
    c.t_insert_ns = reinterpret_cast<std::uintptr_t>(packet.context);
    c.t_start_ns = c.t_insert_ns;
    return c;
  }

  void after_handler(const port::Packet& packet, const Completion&, std::uint64_t t_done_ns,
                     WorkerContext& worker) override {
    if (packet.key == kOpenLoopKey) {
      env_.open_loop->release(static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(packet.context)),
                              t_done_ns != 0 ? t_done_ns : metrics::now_ns());
      open_outstanding_.fetch_sub(1, std::memory_order_seq_cst);
      return;
    }
    if (packet.key == kClosedLoopKey) {
      if (env_.phase->load(std::memory_order_relaxed) != kStopping) {
        // A sampled re-post's insert time is the handler's end when the pool read it (no
        // extra clock read). Per-thread ports: back to the worker's own port (DiskSpd: the
        // issuing thread reaps).
        std::uint64_t t_insert = 0;
        if (env_.metrics && sample(worker.tick)) {
          t_insert = t_done_ns != 0 ? t_done_ns : metrics::now_ns();
        }
        if (post_one(kClosedLoopKey, t_insert, closed_post_failures_, port_for(worker.index))) {
          closed_posted_.fetch_add(1, std::memory_order_relaxed);
          return;
        }
      }
      closed_outstanding_.fetch_sub(1, std::memory_order_seq_cst);
      return;
    }
    Poster& poster = posters_[packet.key];
    const std::uint64_t left = poster.outstanding.fetch_sub(1, std::memory_order_seq_cst) - 1;
    if (left <= low_ && poster.sleeping.load(std::memory_order_seq_cst) == 1 &&
        poster.sleeping.exchange(0) == 1) {
      platform::futex_wake_one(poster.sleeping);
    }
  }

  bool drain(std::chrono::steady_clock::time_point deadline) override {
    for (auto& poster : posters_) {
      poster.sleeping.store(0, std::memory_order_seq_cst);
      platform::futex_wake_one(poster.sleeping);
    }
    join_posters();
    for (;;) {
      std::uint64_t left = closed_outstanding_.load() + open_outstanding_.load();
      for (const auto& poster : posters_) left += poster.outstanding.load();
      if (left == 0) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  void close() override { join_posters(); }

  nlohmann::json stats(double) const override {
    std::uint64_t sleeps = 0;
    for (const auto& poster : posters_) sleeps += poster.sleeps;
    const char* mode = env_.open_loop != nullptr ? "open_loop"
                       : params_.posters == 0     ? "closed_loop"
                                                  : "streaming";
    return {{"mode", mode},
            {"packets_posted", packets_posted()},
            {"outstanding_bound_per_poster", bound_},
            {"poster_sleeps", sleeps},
            {"inflight_depth", nullptr},
            {"inflight_depth_unavailable_because",
             "the post workload issues no I/O: its packets are posted straight into the port"}};
  }

  std::uint64_t errors() const override {
    std::uint64_t failures = closed_post_failures_.load();
    for (const auto& poster : posters_) failures += poster.post_failures;
    return failures;
  }

  std::uint64_t packets_posted() const override {
    std::uint64_t posted = closed_posted_.load() + open_posted_.load();
    for (const auto& poster : posters_) posted += poster.posted;
    return posted;
  }

 private:
  // The shared port, or per-thread port i (mod the pool).
  port::CompletionPort* port_for(std::size_t i) const {
    return env_.worker_ports.empty() ? env_.port : env_.worker_ports[i % env_.worker_ports.size()];
  }
  std::uint64_t stamp() const { return env_.metrics ? metrics::now_ns() : 0; }
  // True once every latency_sample_every calls (a compare, not a division: this is per packet).
  bool sample(std::uint64_t& tick) const {
    if (++tick < params_.latency_sample_every) return false;
    tick = 0;
    return true;
  }

  template <typename Counter>
  bool post_one(std::uintptr_t key, std::uint64_t t_insert, Counter& failures,
                port::CompletionPort* port) {
    port::Packet packet;
    packet.key = key;
    packet.context = reinterpret_cast<void*>(static_cast<std::uintptr_t>(t_insert));
    if (port->post(packet)) return true;
    ++failures;
    return false;
  }

  void poster_loop(Poster& self, std::size_t index) {
    env_.roles->enrol(metrics::Role::load_generator);
    std::size_t next_port = index;  // per-thread ports: round-robin, posters staggered
    while (env_.phase->load(std::memory_order_acquire) != kStopping) {
      const std::uint64_t outstanding = self.outstanding.load(std::memory_order_relaxed);
      if (outstanding < bound_) {
        const std::uint64_t n = bound_ - outstanding;
        self.outstanding.fetch_add(n, std::memory_order_relaxed);
        for (std::uint64_t i = 0; i < n; ++i) {
          const bool sampled = sample(self.ticks);
          if (post_one(index, sampled ? stamp() : 0, self.post_failures, port_for(next_port++))) {
            ++self.posted;
          } else {
            self.outstanding.fetch_sub(1);
          }
        }
        continue;
      }
      // Full: sleep until the workers bring the count down to the low-water mark (Dekker with
      // after_handler: each side writes its own word, then reads the other's).
      self.sleeping.store(1, std::memory_order_seq_cst);
      if (self.outstanding.load(std::memory_order_seq_cst) > low_ &&
          env_.phase->load(std::memory_order_seq_cst) != kStopping) {
        ++self.sleeps;
        while (self.sleeping.load(std::memory_order_acquire) == 1 &&
               env_.phase->load(std::memory_order_acquire) != kStopping) {
          const auto deadline = platform::Clock::now() + std::chrono::milliseconds(100);
          platform::futex_wait(self.sleeping, 1, &deadline);
        }
      }
      self.sleeping.store(0, std::memory_order_relaxed);
    }
  }

  void join_posters() {
    for (auto& poster : posters_) {
      if (poster.thread.joinable()) poster.thread.join();
    }
  }

  PostParams params_;
  RunEnv env_;
  std::vector<Poster> posters_;
  std::uint64_t bound_ = 0;
  std::uint64_t low_ = 0;
  std::atomic<std::uint64_t> closed_outstanding_{0};
  std::atomic<std::uint64_t> closed_posted_{0};
  std::atomic<std::uint64_t> closed_post_failures_{0};
  std::atomic<std::uint64_t> open_outstanding_{0};
  std::atomic<std::uint64_t> open_posted_{0};
};

}  // namespace

std::unique_ptr<Workload> make_post_workload(const PostParams& params) {
  return std::make_unique<PostWorkload>(params);
}

}  // namespace iocpbench::workloads
