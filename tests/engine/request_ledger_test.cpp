// The open loop's ledger and stall meter on scripted times (harness/engine/request_ledger.hpp,
// harness/engine/stall_meter.hpp): no clock, no threads, no pool.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "engine/request_ledger.hpp"
#include "engine/self_checks.hpp"
#include "engine/stall_meter.hpp"

namespace {

using iocpbench::engine::BacklogSample;
using iocpbench::engine::RequestLedger;
using iocpbench::engine::StallLog;

constexpr std::uint64_t kMs = 1'000'000;

// A window of [100 ms, 200 ms) with four slots.
RequestLedger window_ledger() {
  RequestLedger ledger(4);
  ledger.set_window(100 * kMs, 200 * kMs);
  return ledger;
}

TEST(RequestLedger, WarmUpArrivalsAreNotTheWindowsWhereverTheyComplete) {
  RequestLedger ledger = window_ledger();
  ledger.issued(0, 99 * kMs, 99 * kMs);  // intended in the warm-up
  ledger.done(0, 150 * kMs);             // done in the window
  ledger.issued(1, 100 * kMs, 100 * kMs);
  ledger.done(1, 101 * kMs);
  ledger.close(300 * kMs);
  EXPECT_EQ(ledger.totals().due, 1u);
  EXPECT_EQ(ledger.totals().timed, 1u);
  EXPECT_EQ(ledger.response().max(), 1 * kMs);
}

TEST(RequestLedger, WindowArrivalsDoneAfterTheWindowAreTimed) {
  RequestLedger ledger = window_ledger();
  ledger.issued(2, 199 * kMs, 199 * kMs + 10);
  ledger.done(2, 260 * kMs);  // during the drain
  ledger.issued(3, 200 * kMs, 200 * kMs);  // after the window: not the window's
  ledger.done(3, 201 * kMs);
  ledger.close(300 * kMs);
  EXPECT_EQ(ledger.totals().timed, 1u);
  EXPECT_EQ(ledger.response().max(), 61 * kMs);
  EXPECT_EQ(ledger.service().max(), 61 * kMs - 10);
}

TEST(RequestLedger, TheServiceTimeStartsWhenTheIssueCallReturns) {
  RequestLedger ledger = window_ledger();
  ledger.issued(0, 150 * kMs, 151 * kMs);
  ledger.issue_returned(0, 153 * kMs);  // a 2 ms call: the generator's
  ledger.done(0, 160 * kMs);
  ledger.issued(1, 170 * kMs, 170 * kMs);
  ledger.done(1, 171 * kMs);             // done before its call returned:
  ledger.issue_returned(1, 172 * kMs);   // its service runs from the issue
  ledger.close(300 * kMs);
  EXPECT_EQ(ledger.response().max(), 10 * kMs) << "the response time still runs from the intended time";
  EXPECT_EQ(ledger.service().max(), 7 * kMs);
  EXPECT_EQ(ledger.service().min(), 1 * kMs);
}

TEST(RequestLedger, InFlightAndUnissuedAtTheCloseAreUnfinishedWithLowerBounds) {
  RequestLedger ledger = window_ledger();
  ledger.issued(0, 110 * kMs, 111 * kMs);  // still in flight at the close
  ledger.issued(1, 120 * kMs, 120 * kMs);
  ledger.done(1, 125 * kMs);
  ledger.issued(2, 130 * kMs, 130 * kMs);
  ledger.failed(2);
  ledger.close(250 * kMs);
  ledger.unissued(190 * kMs);
  ledger.unissued(210 * kMs);  // after the window: not due
  ledger.done(0, 260 * kMs);   // after the close: counted already, not again
  const auto t = ledger.totals();
  EXPECT_EQ(t.timed, 1u);
  EXPECT_EQ(t.unfinished, 2u);
  EXPECT_EQ(t.failed, 1u);
  EXPECT_EQ(t.due, 4u) << "the four requests intended in the window, each ended once";
  EXPECT_EQ(ledger.unfinished().max(), 140 * kMs) << "the close minus the intended time";
  EXPECT_EQ(ledger.unfinished().min(), 60 * kMs);
  // The halves (stationarity) hold the unfinished at their bounds too: 110 and 120 ms in the
  // first half, 190 ms in the second.
  EXPECT_EQ(ledger.response_half(0).count(), 2u);
  EXPECT_EQ(ledger.response_half(1).count(), 1u);
}

TEST(RequestLedger, APercentileInTheUnfinishedMassIsALowerBound) {
  RequestLedger ledger(200);
  ledger.set_window(0 + 1, 1000 * kMs);
  // 97 requests timed at 1 ms, 3 unfinished at >= 50 ms: p99 falls among the unfinished.
  for (unsigned s = 0; s < 100; ++s) ledger.issued(s, 1 + s * kMs, 1 + s * kMs);
  for (unsigned s = 0; s < 97; ++s) ledger.done(s, 1 + s * kMs + kMs);
  ledger.close(1 + 149 * kMs);
  const auto due = iocpbench::engine::due_percentiles(ledger.response(), ledger.unfinished());
  EXPECT_EQ(due.us.count, 100u);
  EXPECT_GE(due.us.p99, 50'000.0 * 0.98);
  EXPECT_TRUE(due.lower_bound.p99);
  EXPECT_TRUE(due.lower_bound.max);
  EXPECT_FALSE(due.lower_bound.p50) << "every unfinished request lies above the median";
  EXPECT_NEAR(due.us.p50, 1000.0, 20.0);
}

TEST(RequestLedger, WithNothingUnfinishedNoFigureIsABound) {
  RequestLedger ledger = window_ledger();
  ledger.issued(0, 150 * kMs, 150 * kMs);
  ledger.done(0, 152 * kMs);
  ledger.close(300 * kMs);
  const auto due = iocpbench::engine::due_percentiles(ledger.response(), ledger.unfinished());
  EXPECT_FALSE(due.lower_bound.any());
  EXPECT_EQ(due.us.count, 1u);
}

TEST(RequestLedger, AShortenedWindowLeavesOutLaterArrivals) {
  RequestLedger ledger = window_ledger();
  ledger.shorten_window(150 * kMs);
  ledger.issued(0, 160 * kMs, 160 * kMs);
  ledger.done(0, 161 * kMs);
  ledger.shorten_window(190 * kMs);  // never later than set
  ledger.close(300 * kMs);
  EXPECT_EQ(ledger.window_end_ns(), 150 * kMs);
  EXPECT_EQ(ledger.totals().due, 0u);
}

TEST(StallLog, OnlyOversleepsOfTheThresholdAreStallsClippedToTheWindow) {
  StallLog log;
  log.observe(10 * kMs, 10 * kMs + StallLog::kStallNs - 1);  // late, but not a stall
  log.observe(20 * kMs, 320 * kMs);                          // 300 ms
  log.observe(900 * kMs, 1100 * kMs);                        // across the window's end
  const auto s = log.in_window(100 * kMs, 1000 * kMs);
  EXPECT_EQ(log.all().size(), 2u);
  EXPECT_EQ(s.count, 2u);
  EXPECT_EQ(s.longest_ns, 220 * kMs) << "20..320 ms clipped to start at 100 ms";
  EXPECT_EQ(s.total_ns, 320 * kMs);
  ASSERT_EQ(s.first.size(), 2u);
  EXPECT_EQ(s.first[0].start_ns, 0u) << "from the window's start";
  EXPECT_EQ(s.first[1].start_ns, 800 * kMs);
  EXPECT_EQ(s.first[1].length_ns, 100 * kMs);
}

// A backlog sampled every 10 ms over a 1 s window.
std::vector<BacklogSample> backlog(std::uint64_t (*at)(std::uint64_t ms)) {
  std::vector<BacklogSample> out;
  for (std::uint64_t ms = 0; ms < 1000; ms += 10) out.push_back({ms * kMs, at(ms)});
  return out;
}

TEST(BacklogVerdict, AGrowingBacklogIsOverCapacity) {
  const auto v = iocpbench::engine::backlog_grows(backlog([](std::uint64_t ms) { return ms / 2; }),
                                                  0, 1000 * kMs, 10'000);
  EXPECT_TRUE(v.judged);
  EXPECT_TRUE(v.grows);
  EXPECT_EQ(v.least_by_quarter[0], 0u);
  EXPECT_EQ(v.least_by_quarter[3], 375u);
}

TEST(BacklogVerdict, OneStallThatClearsIsNotOverCapacity) {
  // Steady at 3, a 300 ms stall mid-window raises the backlog to 900, then it clears.
  const auto stall = [](std::uint64_t ms) -> std::uint64_t {
    return ms >= 400 && ms < 700 ? 3 + 3 * (ms - 400) : ms >= 700 && ms < 720 ? 500 : 3;
  };
  const auto v = iocpbench::engine::backlog_grows(backlog(stall), 0, 1000 * kMs, 10'000);
  EXPECT_TRUE(v.judged);
  EXPECT_FALSE(v.grows);
}

TEST(BacklogVerdict, AStallAcrossTheWindowsEndIsNotOverCapacity) {
  const auto end_stall = [](std::uint64_t ms) -> std::uint64_t { return ms < 800 ? 2 : 2 + 3 * (ms - 800); };
  const auto v = iocpbench::engine::backlog_grows(backlog(end_stall), 0, 1000 * kMs, 10'000);
  EXPECT_FALSE(v.grows) << "only the last quarter rose";
}

TEST(BacklogVerdict, SmallNoiseIsNotGrowthAndNoSamplesIsUnjudged) {
  const auto noise = [](std::uint64_t ms) -> std::uint64_t { return ms / 250 + (ms % 30 == 0 ? 5 : 0); };
  EXPECT_FALSE(iocpbench::engine::backlog_grows(backlog(noise), 0, 1000 * kMs, 10'000).grows)
      << "a rise of 3 is under the least growth";
  const auto v = iocpbench::engine::backlog_grows({}, 0, 1000 * kMs, 10'000);
  EXPECT_FALSE(v.judged);
  EXPECT_FALSE(v.grows);
}

// Seeded uniform draws in (0, 1), the same on every standard library (mt19937_64 is specified).
class Draws {
 public:
  double next() { return (static_cast<double>(rng_() >> 11) + 0.5) * 0x1.0p-53; }

 private:
  std::mt19937_64 rng_{42};
};

std::vector<std::uint64_t> exponential_gaps(std::size_t n, double mean_ns, Draws& d) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<std::uint64_t>(-mean_ns * std::log(d.next())));
  return out;
}

TEST(SelfChecks, PoissonGapsPassAndOtherLawsFail) {
  using iocpbench::core::ArrivalProcess;
  using iocpbench::engine::check_arrivals;
  Draws d;
  // 5,000 per second: gaps of mean 200 us.
  const auto poisson = check_arrivals(exponential_gaps(5000, 200'000, d), 5000, ArrivalProcess::poisson);
  EXPECT_TRUE(poisson.judged);
  EXPECT_TRUE(poisson.passed) << poisson.failed_because;
  const auto slow = check_arrivals(exponential_gaps(5000, 300'000, d), 5000, ArrivalProcess::poisson);
  EXPECT_FALSE(slow.passed) << "a rate 2/3 of the one asked";
  std::vector<std::uint64_t> uniform;
  for (int i = 0; i < 5000; ++i) uniform.push_back(static_cast<std::uint64_t>(400'000 * d.next()));
  EXPECT_FALSE(check_arrivals(uniform, 5000, ArrivalProcess::poisson).passed) << "the right mean, the wrong law";
  EXPECT_FALSE(check_arrivals({1, 2, 3}, 5000, ArrivalProcess::poisson).judged) << "too few gaps";
  EXPECT_TRUE(check_arrivals({1, 2, 3}, 5000, ArrivalProcess::poisson).passed);
}

TEST(SelfChecks, ConstantGapsPassWithinTheTolerance) {
  using iocpbench::core::ArrivalProcess;
  using iocpbench::engine::check_arrivals;
  std::vector<std::uint64_t> even(1000, 200'000);
  for (std::size_t i = 0; i < even.size(); i += 3) even[i] = 215'000;  // jitter within 10%
  EXPECT_TRUE(check_arrivals(even, 5000, ArrivalProcess::constant).passed);
  std::vector<std::uint64_t> late(1000, 250'000);
  const auto c = check_arrivals(late, 5000, ArrivalProcess::constant);
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.failed_because.find("250.0 us"), std::string::npos) << c.failed_because;
}

TEST(SelfChecks, AShiftBetweenTheHalvesIsNotStationaryAndNoiseIs) {
  using iocpbench::engine::check_stationarity;
  using iocpbench::metrics::Histogram;
  Draws d;
  Histogram first, same, tripled, slightly;
  for (std::uint64_t g : exponential_gaps(5000, 100'000, d)) first.record(g);
  for (std::uint64_t g : exponential_gaps(5000, 100'000, d)) same.record(g);
  for (std::uint64_t g : exponential_gaps(5000, 300'000, d)) tripled.record(g);
  for (std::uint64_t g : exponential_gaps(5000, 120'000, d)) slightly.record(g);
  EXPECT_TRUE(check_stationarity(first, same).passed);
  const auto shifted = check_stationarity(first, tripled);
  EXPECT_TRUE(shifted.judged);
  EXPECT_FALSE(shifted.passed);
  EXPECT_NE(shifted.failed_because.find("not stationary"), std::string::npos);
  const auto small = check_stationarity(first, slightly);
  EXPECT_TRUE(small.passed) << "KS may reject a 20% drift, but the medians are within 1.5x";
  EXPECT_FALSE(check_stationarity(Histogram{}, same).judged);
}

}  // namespace
