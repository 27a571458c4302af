// R7 on the file workload: the watchdog's report names the completion source's I/Os.

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "engine/run_point.hpp"
#include "stalling_workload.hpp"

namespace {

using iocpbench::test::Stall;
using iocpbench::test::stalling;

TEST(WatchdogRun, FileWorkloadReportNamesTheCompletionSource) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("iocpbench-watchdog-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  iocpbench::engine::PointSpec spec;
  spec.workload = iocpbench::WorkloadKind::file;
  spec.workload_params = iocpbench::workloads::parse_workload_params(spec.workload, {{"file", (dir / "data.bin").string()},
                                                                  {"file_size_mib", 4},
                                                                  {"direct", false},
                                                                  {"outstanding", 8}});
  spec.concurrency = {"2", 0, 2};
  spec.concurrency_value = 2;
  spec.pool = iocpbench::core::CountSpec{"4", 0, 4};
  spec.pool_value = 4;
  spec.duration_s = 60;
  spec.warmup_s = 0.05;
  spec.watchdog_s = 0.5;
  spec.wrap_workload = stalling(Stall::stop_resubmitting, 200);
  std::string message;
  try {
    iocpbench::engine::run_point(spec, nullptr);
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  std::filesystem::remove_all(dir);
  ASSERT_EQ(message.rfind("watchdog: no completion for ", 0), 0u) << message;
  EXPECT_NE(message.find("file workload: 0 file I/Os in flight in the completion source"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("stuck: the workload"), std::string::npos) << message;
}

}  // namespace
