// The pool controllers (harness/engine/pool_control.hpp) on scripted measurements, no clock: the
// hill climber finds the optimum of a synthetic throughput curve from below and from above, and
// adds a thread when starved; formula follows a changed blocking ratio; stall lets one thread in
// per stalled worker and lets them go when none is. The pool specs that name them, good and bad.
// Then a real controlled pool (emulated port, real threads, a scripted controller): it starts,
// grows and shrinks to its targets, and stops with every thread taking one stop packet; and a
// run through run_point records the controller in runs[].pool_sizing. Waits are bounded.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <string>

#include "../support/counting_workload.hpp"
#include "../support/wait_for.hpp"
#include "core/pool_spec.hpp"
#include "engine/pool.hpp"
#include "engine/pool_control.hpp"
#include "engine/run_point.hpp"
#include "platform/platform.hpp"
#include "port/completion_port.hpp"
#include "results/run_blocks.hpp"

namespace {

using namespace iocpbench;
using namespace std::chrono_literals;
using test_support::wait_for;

// Throughput (ops/s) of n threads: n e^(-n/12), largest at n = 12, rising below and falling
// above it (its elasticity is 1 - n/12).
double synthetic_ops_per_s(unsigned threads) {
  const double n = threads;
  return 1000.0 * n * std::exp(-n / 12.0);
}

// Drives `c` for `samples` samples of the synthetic curve, each throughput times (1 + noise) with
// normal noise of the given relative size (seeded); returns its setting at the end.
double climb(engine::PoolController& c, unsigned samples, double noise = 0) {
  std::mt19937 rng(1);
  std::normal_distribution<double> relative(0, noise > 0 ? noise : 1);
  engine::ControlSample s;
  s.threads = static_cast<unsigned>(c.control_setting());
  s.queued = 0;
  unsigned threads = c.target(s);
  double done = 0;
  for (unsigned i = 0; i < samples; ++i) {
    const std::uint64_t dt_ns = c.next_interval_ns();
    s.t_ns += dt_ns;
    const double factor = noise > 0 ? 1 + relative(rng) : 1;
    done += synthetic_ops_per_s(threads) * factor * static_cast<double>(dt_ns) / 1e9;
    s.completions_total = static_cast<std::uint64_t>(done);
    s.threads = threads;
    s.busy = threads / 2;
    threads = c.target(s);
  }
  return c.control_setting();
}

TEST(HillClimb, MovesUpToTheOptimumOfAConcaveCurve) {
  const engine::ControlBounds bounds{1, 48, 4};
  auto c = engine::make_hill_climb(bounds, core::HillSettings{}, 7, 4);
  EXPECT_DOUBLE_EQ(c->control_setting(), 4);
  const double setting = climb(*c, 400);
  EXPECT_NEAR(setting, 12, 1) << "from 4 toward the optimum at 12";
}

TEST(HillClimb, FindsTheOptimumThroughNoise) {
  const engine::ControlBounds bounds{1, 48, 4};
  for (unsigned start : {4u, 30u}) {
    auto c = engine::make_hill_climb(bounds, core::HillSettings{}, 5, start);
    EXPECT_NEAR(climb(*c, 800, 0.05), 12, 3) << "5% noise, from " << start;
  }
}

TEST(HillClimb, MovesDownToTheOptimumFromAbove) {
  const engine::ControlBounds bounds{1, 48, 4};
  auto c = engine::make_hill_climb(bounds, core::HillSettings{}, 11, 30);
  EXPECT_DOUBLE_EQ(c->control_setting(), 30);
  const double setting = climb(*c, 400);
  EXPECT_NEAR(setting, 12, 1) << "from 30 toward the optimum at 12";
}

TEST(HillClimb, StaysInsideItsBounds) {
  const engine::ControlBounds bounds{2, 8, 4};  // the optimum (12) is past the maximum
  auto c = engine::make_hill_climb(bounds, core::HillSettings{}, 3, 2);
  const double setting = climb(*c, 400);
  EXPECT_GE(setting, 2);
  EXPECT_LE(setting, 8);
  EXPECT_GT(setting, 6) << "pressed against the maximum, the side the optimum is on";
}

TEST(HillClimb, StarvationAddsAThreadWhenNoCompletionHappensWithWorkQueued) {
  const engine::ControlBounds bounds{4, 16, 4};
  core::HillSettings h;
  h.starvation_ms = 500;
  auto c = engine::make_hill_climb(bounds, h, 1);
  engine::ControlSample s;
  s.threads = 4;
  s.busy = 4;
  s.queued = 10;
  s.completions_total = 100;
  c->target(s);  // the first sample: the last completion is "now"
  for (int i = 1; i <= 4; ++i) {  // 400 ms with no completion: not yet
    s.t_ns = i * 100'000'000ull;
    c->target(s);
    EXPECT_DOUBLE_EQ(c->control_setting(), 4) << "at " << i * 100 << " ms";
  }
  s.t_ns = 500'000'000ull;
  c->target(s);
  EXPECT_DOUBLE_EQ(c->control_setting(), 5) << "500 ms without a completion adds one";
  s.t_ns = 600'000'000ull;
  c->target(s);
  EXPECT_DOUBLE_EQ(c->control_setting(), 5) << "the next one waits another 500 ms";
  s.t_ns = 1'000'000'000ull;
  c->target(s);
  EXPECT_DOUBLE_EQ(c->control_setting(), 6);
}

TEST(HillClimb, NoStarvationWithoutWorkWaiting) {
  const engine::ControlBounds bounds{4, 16, 4};
  auto c = engine::make_hill_climb(bounds, core::HillSettings{}, 1);
  engine::ControlSample s;
  s.threads = 4;
  s.busy = 0;
  s.queued = 0;  // idle: nothing to starve
  for (int i = 0; i <= 20; ++i) {
    s.t_ns = i * 100'000'000ull;
    c->target(s);
  }
  EXPECT_DOUBLE_EQ(c->control_setting(), 4);
}

TEST(HillClimb, SampleIntervalsAreRandomInTheirRangeAndFollowTheSeed) {
  core::HillSettings h;
  h.sample_low_ms = 10;
  h.sample_high_ms = 200;
  auto a = engine::make_hill_climb({1, 8, 4}, h, 42);
  auto b = engine::make_hill_climb({1, 8, 4}, h, 42);
  auto other = engine::make_hill_climb({1, 8, 4}, h, 43);
  bool differs = false, varies = false;
  std::uint64_t first = 0;
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t x = a->next_interval_ns();
    EXPECT_EQ(x, b->next_interval_ns()) << "same seed, same intervals";
    if (other->next_interval_ns() != x) differs = true;
    if (i == 0) first = x;
    if (x != first) varies = true;
    EXPECT_GE(x, 10'000'000u);
    EXPECT_LE(x, 200'000'000u);
  }
  EXPECT_TRUE(differs);
  EXPECT_TRUE(varies);
}

// Cumulative handler times with blocking ratio b over `period_ns` of handler time.
void add_handler_time(engine::ControlSample& s, double b, std::uint64_t period_ns) {
  s.handler_cpu_ns_total += static_cast<std::uint64_t>((1 - b) * static_cast<double>(period_ns));
  s.handler_blocked_ns_total += static_cast<std::uint64_t>(b * static_cast<double>(period_ns));
}

TEST(FormulaControl, FollowsAChangedBlockingRatio) {
  const unsigned n = 4;
  auto c = engine::make_formula_control({n, 3 * n, n}, 500);
  EXPECT_EQ(c->next_interval_ns(), 500'000'000u);
  engine::ControlSample s;
  EXPECT_EQ(c->target(s), n) << "nothing measured yet: the minimum";
  add_handler_time(s, 0.5, 1'000'000'000);
  EXPECT_EQ(c->target(s), 2 * n) << "b = 0.5: N / (1 - b) = 2N";
  add_handler_time(s, 0.75, 1'000'000'000);
  EXPECT_EQ(c->target(s), 3 * n) << "b = 0.75: 4N, clamped to the maximum 3N";
  EXPECT_EQ(c->target(s), 3 * n) << "a period with no handler time keeps the target";
  add_handler_time(s, 0, 1'000'000'000);
  EXPECT_EQ(c->target(s), n) << "b = 0: N";
}

TEST(StallControl, StalledWorkersRaiseTheTargetAndNoneLowersIt) {
  auto c = engine::make_stall_control({4, 6, 4}, 100);
  EXPECT_EQ(c->stall_limit_ns(), 100'000'000u);
  EXPECT_EQ(c->next_interval_ns(), 50'000'000u) << "a tick every half limit";
  engine::ControlSample s;
  EXPECT_EQ(c->target(s), 4u);
  s.stalled_workers = 1;
  EXPECT_EQ(c->target(s), 5u);
  s.stalled_workers = 2;
  EXPECT_EQ(c->target(s), 6u);
  s.stalled_workers = 5;
  EXPECT_EQ(c->target(s), 6u) << "never past the maximum";
  s.stalled_workers = 0;
  EXPECT_EQ(c->target(s), 4u) << "none stalled: back to N";
}

// ---- the pool specs ----

std::string normalised(const std::string& text) {
  std::string why;
  const auto spec = core::parse_pool_spec(text, &why);
  return spec ? spec->text : "bad: " + why;
}

TEST(ControlledPoolSpec, ParsesAndNormalisesWithDefaultsDroppedFromTheRight) {
  EXPECT_EQ(normalised("hill"), "hill");
  EXPECT_EQ(normalised("hill:N:4N"), "hill");
  EXPECT_EQ(normalised("hill:2:8"), "hill:2:8");
  EXPECT_EQ(normalised("formula"), "formula");
  EXPECT_EQ(normalised("formula:N:4N:500"), "formula");
  EXPECT_EQ(normalised("formula:N:4N:250"), "formula:N:4N:250");
  EXPECT_EQ(normalised("formula:1:2N"), "formula:1:2N");
  EXPECT_EQ(normalised("stall:100:4N"), "stall:100");
  EXPECT_EQ(normalised("stall:100:2N+2"), "stall:100:2N+2");
  const auto stall = core::parse_pool_spec("stall:20:8", nullptr);
  ASSERT_TRUE(stall && stall->is_controlled());
  EXPECT_EQ(stall->controlled->kind, core::ControllerKind::stall);
  EXPECT_EQ(stall->controlled->stall_limit_ms, 20u);
  EXPECT_EQ(stall->resolve_min(4), 4u) << "MIN is N";
  EXPECT_EQ(stall->resolve(4), 8u);
  const auto hill = core::parse_pool_spec("hill:2:3N", nullptr);
  ASSERT_TRUE(hill && hill->self_sizing() && !hill->is_auto());
  EXPECT_EQ(hill->resolve_min(4), 2u);
  EXPECT_EQ(hill->resolve(4), 12u);
  const auto formula = core::parse_pool_spec("formula:N:4N:250", nullptr);
  ASSERT_TRUE(formula);
  EXPECT_EQ(formula->controlled->period_ms, 250u);
}

TEST(ControlledPoolSpec, RefusesBadSpecsWithAReason) {
  for (const char* bad : {"hil", "hills", "stall:0:4N", "stall", "stall:x:4", "stall:10:0",
                          "formula:8:4", "formula:1:2:5", "formula:1:2:x", "hill:1",
                          "hill:1:2:3", "formula:N", "hill:0:4"}) {
    std::string why;
    EXPECT_FALSE(core::parse_pool_spec(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
  std::string why;
  core::parse_pool_spec("hil", &why);
  EXPECT_NE(why.find("unknown pool spec"), std::string::npos) << why;
}

// ---- a real controlled pool ----

using test_support::CountingWorkload;  // tests/support/counting_workload.hpp

// A controller whose target the test sets; it counts its samples.
class ScriptedController final : public engine::PoolController {
 public:
  explicit ScriptedController(std::atomic<unsigned>& want, std::atomic<unsigned>& samples)
      : want_(want), samples_(samples) {}
  const char* name() const override { return "scripted"; }
  unsigned target(const engine::ControlSample&) override {
    samples_.fetch_add(1);
    return want_.load();
  }
  std::uint64_t next_interval_ns() override { return 2'000'000; }
  double control_setting() const override { return want_.load(); }
  std::vector<std::pair<std::string, double>> settings() const override { return {}; }

 private:
  std::atomic<unsigned>& want_;
  std::atomic<unsigned>& samples_;
};

// A controlled pool of 1..6 threads on the emulated port, sized by a ScriptedController from
// `want`; `io_pending`: its workers say they have I/O of their own in flight.
class ScriptedPool {
 public:
  explicit ScriptedPool(bool io_pending)
      : port_(port::make_port(port::Backend::emulated, {.concurrency = 2})),
        workload_(true, io_pending),
        pool_({port_.get()}, workload_, handler(), 0, roles_, phase_, engine::controlled_sizing(1, 6)) {
    pool_.set_controller(std::make_unique<ScriptedController>(want_, samples_));
    pool_.start();
  }
  struct Parts {
    std::unique_ptr<port::CompletionPort>& port;
    CountingWorkload& workload;
    metrics::RoleRegistry& roles;
    std::atomic<unsigned>& want;
    std::atomic<unsigned>& samples;
    engine::Pool& pool;
  };
  Parts& parts() { return parts_; }

 private:
  static engine::HandlerSpec handler() {
    engine::HandlerSpec h;
    h.work_us = 20;
    return h;
  }
  std::unique_ptr<port::CompletionPort> port_;
  CountingWorkload workload_;
  metrics::RoleRegistry roles_;
  std::atomic<int> phase_{workloads::kMeasuring};
  std::atomic<unsigned> want_{1}, samples_{0};
  engine::Pool pool_;
  Parts parts_{port_, workload_, roles_, want_, samples_, pool_};
};

TEST(ControlledPool, StartsChangesSizeAndStopsWithOneStopPacketPerThread) {
  ScriptedPool scripted(false);
  // Named references, not a structured binding: the lambdas below use them (clang before 16
  // cannot capture a binding).
  ScriptedPool::Parts& parts = scripted.parts();
  auto& port = parts.port;
  auto& workload = parts.workload;
  auto& want = parts.want;
  auto& samples = parts.samples;
  auto& pool = parts.pool;
  EXPECT_EQ(pool.threads(), 1u);
  want = 5;
  ASSERT_TRUE(wait_for([&] { return pool.threads() == 5; })) << "stuck at " << pool.threads();
  for (int i = 0; i < 200; ++i) {
    port::Packet p;
    p.key = 1;
    ASSERT_TRUE(port->post(p));
  }
  ASSERT_TRUE(wait_for([&] { return workload.handled.load() == 200; }));
  want = 2;  // idle threads over the target leave on their bounded wait
  ASSERT_TRUE(wait_for([&] { return pool.threads() == 2; })) << "stuck at " << pool.threads();
  want = 6;
  ASSERT_TRUE(wait_for([&] { return pool.threads() == 6; })) << "stuck at " << pool.threads();
  EXPECT_GT(samples.load(), 0u);
  pool.stop();
  const unsigned at_stop = pool.threads();
  EXPECT_EQ(at_stop, 6u) << "no size change once stop() began";
  std::uint64_t stops = 0, failures = 0;
  for (const auto& s : pool.stats()) {
    stops += s.stop_packets;
    failures += s.remove_failures;
    EXPECT_LE(s.stop_packets, 1u);
  }
  EXPECT_EQ(stops, at_stop) << "each counted thread took exactly one stop packet";
  EXPECT_EQ(failures, 0u);
  EXPECT_EQ(port->depth().value_or(99), 0u) << "no stop packet left behind";
  const engine::PoolTimeline t = pool.timeline();
  EXPECT_EQ(t.grows, 8u) << "1 -> 5, then 2 -> 6";
  EXPECT_EQ(t.shrinks, 3u) << "5 -> 2";
  EXPECT_EQ(t.events.back().threads, 6u);
}

// Workers whose exit could cancel their I/O (Linux's port path) park over the target instead of
// leaving: they stay enrolled (no retire), come back before a new thread starts, and those still
// parked at stop end without a stop packet while every counted thread takes exactly one.
TEST(ControlledPool, ThreadsWithIoPendingParkAndComeBackBeforeNewOnesStart) {
  ScriptedPool scripted(true);
  ScriptedPool::Parts& parts = scripted.parts();  // named references, as above
  auto& port = parts.port;
  auto& workload = parts.workload;
  auto& roles = parts.roles;
  auto& want = parts.want;
  auto& pool = parts.pool;
  want = 5;
  ASSERT_TRUE(wait_for([&] { return pool.threads() == 5; })) << "stuck at " << pool.threads();
  ASSERT_TRUE(wait_for([&] { return roles.size() == 5; }));
  want = 2;
  ASSERT_TRUE(wait_for([&] { return pool.threads() == 2; })) << "stuck at " << pool.threads();
  EXPECT_EQ(roles.size(), 5u) << "the three over the target parked: none ended";
  want = 4;
  ASSERT_TRUE(wait_for([&] { return pool.threads() == 4; })) << "stuck at " << pool.threads();
  EXPECT_EQ(roles.size(), 5u) << "two parked threads came back, no new one started";
  want = 6;
  ASSERT_TRUE(wait_for([&] { return pool.threads() == 6; })) << "stuck at " << pool.threads();
  ASSERT_TRUE(wait_for([&] { return roles.size() == 6; })) << "the last parked one, then one new";
  for (int i = 0; i < 100; ++i) {
    port::Packet p;
    p.key = 1;
    ASSERT_TRUE(port->post(p));
  }
  ASSERT_TRUE(wait_for([&] { return workload.handled.load() == 100; }));
  want = 3;
  ASSERT_TRUE(wait_for([&] { return pool.threads() == 3; })) << "stuck at " << pool.threads();
  pool.stop();  // joins every thread: the parked ones too
  std::uint64_t stops = 0, failures = 0;
  for (const auto& s : pool.stats()) {
    stops += s.stop_packets;
    failures += s.remove_failures;
    EXPECT_LE(s.stop_packets, 1u);
  }
  EXPECT_EQ(stops, 3u) << "the counted threads took one stop packet each; the parked took none";
  EXPECT_EQ(failures, 0u);
  EXPECT_EQ(port->depth().value_or(99), 0u) << "no stop packet left behind";
  const engine::PoolTimeline t = pool.timeline();
  EXPECT_EQ(t.grows, 8u) << "1 -> 5, 2 -> 4, 4 -> 6";
  EXPECT_EQ(t.shrinks, 6u) << "5 -> 2, 6 -> 3";
}

TEST(ControlledPool, ThroughRunPointTheResultsNameTheController) {
  for (const char* text : {"hill:1:2N", "formula:1:2N:50", "stall:5:2N"}) {
    engine::PointSpec spec;
    spec.workload = iocpbench::WorkloadKind::post;
    spec.port = port::Backend::emulated;
    spec.concurrency = core::CountSpec{"N", 1, 0};
    spec.concurrency_value = platform::logical_cpus();
    spec.pool = *core::parse_pool_spec(text, nullptr);
    spec.pool_value = spec.pool.resolve(platform::logical_cpus());
    spec.work_us = 20;
    spec.blocking_ratio = 0.5;
    spec.duration_s = 0.3;
    spec.warmup_s = 0.1;
    const engine::RunResult r = engine::run_point(spec, nullptr);
    ASSERT_TRUE(r.pool_sizing.has_value()) << text;
    const nlohmann::json s = results::pool_sizing_json(*r.pool_sizing);
    const std::string name = std::string(text).substr(0, std::string(text).find(':'));
    EXPECT_EQ(s["controller"], name);
    EXPECT_EQ(s["settings"]["max_threads"], 2 * platform::logical_cpus()) << text;
    EXPECT_FALSE(s["settings"].contains("grow_below_cpu_pct")) << "not Richter's settings";
    EXPECT_GE(s["timeline_ms_threads"].size(), 1u);
    // One stop packet per thread alive at the stop: at least those alive at the window's end
    // (a controller may still add one between the window's end and the stop, as a slow
    // sanitizer build showed), at most the controller's maximum.
    EXPECT_GE(r.stop_packets_taken, s["window"]["threads_at_end"].get<unsigned>()) << text;
    EXPECT_LE(r.stop_packets_taken, s["settings"]["max_threads"].get<unsigned>()) << text;
    EXPECT_EQ(r.packets_posted_total, r.packets_handled_total) << "none lost: " << text;
  }
}

}  // namespace
