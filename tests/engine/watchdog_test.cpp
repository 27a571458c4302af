// R7: a run that stops making progress ends with an error naming the stuck part (the watchdog,
// harness/engine/watchdog.hpp) instead of hanging. The stalls are injected through run_point's
// test seam (PointSpec::wrap_workload): a wrapper around the real workload that stops
// resubmitting, or a handler that does not return. No timing asserts: the limits are short and
// the test's own bound is ctest's TIMEOUT.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "platform/platform.hpp"
#include "engine/run_point.hpp"
#include "engine/watchdog.hpp"
#include "engine/workload.hpp"
#include "stalling_workload.hpp"

namespace {

using iocpbench::engine::PointSpec;
using iocpbench::engine::ProgressBoard;
using iocpbench::engine::Watchdog;
using iocpbench::engine::watchdog_limit_s;
using iocpbench::test::Stall;
using iocpbench::test::stalling;

TEST(WatchdogLimit, FiveSecondsOrTenServiceTimes) {
  EXPECT_DOUBLE_EQ(watchdog_limit_s(0, 0), 5.0);
  EXPECT_DOUBLE_EQ(watchdog_limit_s(20, 20), 5.0);
  EXPECT_DOUBLE_EQ(watchdog_limit_s(1e6, 0), 10.0);      // 1 s of work per completion
  EXPECT_DOUBLE_EQ(watchdog_limit_s(1e5, 9e5), 10.0);    // 0.1 s work + 0.9 s blocked
  EXPECT_DOUBLE_EQ(watchdog_limit_s(20, 20, 0.25), 0.25);  // the override
}

TEST(Watchdog, FiresWhenProgressStopsAndNamesWhatDescribeSays) {
  std::atomic<std::uint64_t> progress{0};
  Watchdog dog(0.2, [&] { return progress.load(); }, [](double) { return "the stuck part"; });
  for (int i = 0; i < 600 && !dog.fired(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(dog.fired()) << "no stall found in 30 s";
  EXPECT_EQ(dog.message().rfind("watchdog: no completion for ", 0), 0u) << dog.message();
  EXPECT_NE(dog.message().find("the stuck part"), std::string::npos) << dog.message();
  dog.disarm();
}

TEST(Watchdog, QuietWhileProgressIsMade) {
  std::atomic<std::uint64_t> progress{0};
  Watchdog dog(2.0, [&] { return progress.load(); }, [](double) { return "x"; });
  for (int i = 0; i < 40; ++i) {  // 0.4 s of steady progress, well inside the 2 s limit
    progress.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(dog.fired());
  dog.teardown();
  dog.disarm();  // a disarmed watchdog never fires and its thread is gone
  EXPECT_FALSE(dog.fired());
}

TEST(ProgressBoard, CountsPacketsAndWhereThreadsAre) {
  ProgressBoard board(4);
  board.took(0);
  board.took(0);
  board.took(3);
  board.at(1, ProgressBoard::kInHandler);
  board.at(2, ProgressBoard::kBlocking);
  board.at(3, ProgressBoard::kExited);
  EXPECT_EQ(board.packets(), 3u);
  const auto c = board.census();
  EXPECT_EQ(c.in_port, 1u);
  EXPECT_EQ(c.in_handler, 1u);
  EXPECT_EQ(c.blocking, 1u);
  EXPECT_EQ(c.exited, 1u);
}

PointSpec post_spec() {
  PointSpec spec;
  spec.workload = iocpbench::WorkloadKind::post;
  spec.workload_params = iocpbench::workloads::parse_workload_params(spec.workload, {{"posters", 0}, {"in_flight", 8}});  // closed loop: the pool re-posts
  spec.concurrency = {"2", 0, 2};
  spec.concurrency_value = 2;
  spec.pool = iocpbench::core::CountSpec{"4", 0, 4};
  spec.pool_value = 4;
  spec.duration_s = 60;  // the stall ends the run long before
  spec.warmup_s = 0.05;
  spec.watchdog_s = 0.5;
  return spec;
}

std::string run_expecting_watchdog(PointSpec spec) {
  try {
    iocpbench::engine::run_point(spec, nullptr);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "the run ended without a watchdog error";
  return {};
}

// The workload stops resubmitting: every thread waits in an empty port.
TEST(WatchdogRun, WorkloadThatStopsResubmittingIsNamed) {
  PointSpec spec = post_spec();
  spec.wrap_workload = stalling(Stall::stop_resubmitting, 500);
  const std::string message = run_expecting_watchdog(spec);
  EXPECT_EQ(message.rfind("watchdog: no completion for ", 0), 0u) << message;
  EXPECT_NE(message.find("pool threads: 4 waiting in the port"), std::string::npos) << message;
  EXPECT_NE(message.find("port: 0 packets queued"), std::string::npos) << message;
  EXPECT_NE(message.find("stuck: the workload (nothing reaches the port)"), std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line";
}

// A handler that never returns (until the run is torn down): the threads inside it are named.
TEST(WatchdogRun, HandlerThatDoesNotReturnIsNamed) {
  PointSpec spec = post_spec();
  spec.wrap_workload = stalling(Stall::hang_in_handler, 500);
  const std::string message = run_expecting_watchdog(spec);
  EXPECT_EQ(message.rfind("watchdog: no completion for ", 0), 0u) << message;
  EXPECT_NE(message.find("stuck: the handler ("), std::string::npos) << message;
}

// The real limit leaves a healthy run alone.
TEST(WatchdogRun, HealthyRunIsNotStopped) {
  PointSpec spec = post_spec();
  spec.duration_s = 0.3;
  spec.watchdog_s = 0;  // the real limit (5 s)
  const auto result = iocpbench::engine::run_point(spec, nullptr);
  EXPECT_GT(result.ops, 0u);
  EXPECT_FALSE(result.interrupted);
}

}  // namespace
