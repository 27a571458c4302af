// Pinning for real on Linux (platform/thread_affinity.hpp): a thread pinned to each CPU this
// process may use reads that CPU back, the trial pin takes every allowed CPU, and a CPU beyond
// the machine is refused with the OS's reason.

#include <sched.h>

#include <algorithm>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "platform/cpu_placement.hpp"
#include "platform/thread_affinity.hpp"

namespace {

using namespace iocpbench::platform;

CpuSet allowed_here() {
  std::string why;
  const auto allowed = allowed_cpus(why);
  EXPECT_TRUE(allowed) << why;
  return allowed.value_or(CpuSet{});
}

TEST(ThreadAffinityLinux, APinnedThreadReadsItsCpuBackAndRunsThere) {
  const CpuSet allowed = allowed_here();
  ASSERT_FALSE(allowed.empty());
  for (unsigned cpu : allowed) {
    std::string refused;
    std::optional<CpuSet> back;
    int running_on = -1;
    std::thread t([&] {
      refused = pin_current_thread(cpu);
      back = current_thread_cpus();
      running_on = sched_getcpu();  // a pinned thread runs nowhere else
    });
    t.join();
    EXPECT_EQ(refused, "") << "CPU " << cpu;
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, CpuSet{cpu});
    EXPECT_EQ(running_on, static_cast<int>(cpu));
  }
}

TEST(ThreadAffinityLinux, TheAllowedCpusAreOnlineAndPinnable) {
  const CpuSet allowed = allowed_here();
  const CpuSet online = online_cpus();
  for (unsigned cpu : allowed) {
    EXPECT_TRUE(std::binary_search(online.begin(), online.end(), cpu)) << cpu;
  }
  EXPECT_EQ(check_pinnable(allowed), "");
}

TEST(ThreadAffinityLinux, ACpuBeyondTheMachineIsRefusedWithTheReason) {
  const unsigned beyond = online_cpus().back() + 1;
  std::string refused;
  std::thread t([&] { refused = pin_current_thread(beyond); });
  t.join();
  EXPECT_NE(refused.find("pthread_setaffinity_np refused: Invalid argument"), std::string::npos) << refused;
  EXPECT_EQ(check_pinnable({beyond}).rfind("CPU " + std::to_string(beyond) + ": ", 0), 0u)
      << check_pinnable({beyond});
}

TEST(ThreadAffinityLinux, ThisProcessesMaskIsUntouchedByTheTrialPin) {
  const CpuSet before = allowed_here();
  EXPECT_EQ(check_pinnable({before.front()}), "");
  EXPECT_EQ(allowed_here(), before);
}

}  // namespace
