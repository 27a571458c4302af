// metrics::sample_threads: a whole sample at one moment (on Windows one NtQuerySystemInformation
// snapshot for every thread). Each live thread gets its own counts in its own slot, a thread
// that has exited gets nothing once the OS has let it go, and the counts agree with the
// one-thread sample_thread.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "metrics/usage.hpp"
#include "platform/platform.hpp"

using iocpbench::metrics::sample_thread;
using iocpbench::metrics::sample_threads;
using iocpbench::metrics::ThreadHandle;
using iocpbench::metrics::Usage;

namespace {

// A thread that publishes its handle and stays alive until released.
class LiveThread {
 public:
  LiveThread()
      : thread_([this] {
          handle_ = iocpbench::metrics::current_thread_handle();
          ready_.store(true);
          while (!release_.load()) std::this_thread::yield();
        }) {
    while (!ready_.load()) std::this_thread::yield();
  }
  ~LiveThread() { join(); }
  void join() {
    release_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  ThreadHandle handle() const { return handle_; }

 private:
  std::atomic<bool> ready_{false}, release_{false};
  ThreadHandle handle_;
  std::thread thread_;
};

// A Windows kernel, not Wine (which runs the same binary on Linux) and not Linux.
bool real_windows_kernel() {
#ifdef _WIN32
  return !iocpbench::platform::wine_version().has_value();
#else
  return false;
#endif
}

}  // namespace

TEST(SampleThreads, EveryLiveThreadInItsSlotAndNothingForAnExitedOne) {
  LiveThread a, b, gone;
  const ThreadHandle gone_handle = gone.handle();
  gone.join();

  const ThreadHandle self = iocpbench::metrics::current_thread_handle();
  const std::vector<ThreadHandle> handles{a.handle(), gone_handle, self, b.handle()};
  // An exited thread leaves the OS's list once the OS lets it go, which need not be by the time
  // join returns: Linux may still show a reaped thread's /proc/self/task entry for a moment, and
  // a Windows kernel lists a terminated thread in every NtQuerySystemInformation snapshot as
  // long as anything holds a handle to it (the C++ runtime closes its own in join; a debugger,
  // an antivirus scanner or a process monitor may hold another). So the sample is taken again,
  // for up to 5 s, until the exited thread is gone; every sample has each live thread.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::vector<std::optional<Usage>> usages;
  for (;;) {
    usages = sample_threads(handles);
    ASSERT_EQ(usages.size(), handles.size());
    ASSERT_TRUE(usages[0].has_value()) << "a live thread was not sampled";
    ASSERT_TRUE(usages[2].has_value()) << "the calling thread was not sampled";
    ASSERT_TRUE(usages[3].has_value()) << "a live thread was not sampled";
    if (!usages[1].has_value() || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (usages[1].has_value() && real_windows_kernel()) {
    GTEST_SKIP() << "needs the exited thread's object released, which this Windows kernel had "
                    "not done 5 s after join: a terminated thread stays in the "
                    "NtQuerySystemInformation snapshot while any process holds a handle to it "
                    "(or its id was reused by a new thread), so whether an exited thread is "
                    "left out cannot be judged here";
  }
  EXPECT_FALSE(usages[1].has_value()) << "an exited thread was still sampled 5 s after join";
}

TEST(SampleThreads, AgreesWithTheOneThreadSampleAndCountsOnlyGoUp) {
  LiveThread a;
  Usage before;
  ASSERT_TRUE(sample_thread(a.handle(), before));
  const auto batch = sample_threads({a.handle()});
  ASSERT_EQ(batch.size(), 1u);
  ASSERT_TRUE(batch[0].has_value());
  EXPECT_GE(batch[0]->voluntary, before.voluntary);
  EXPECT_GE(batch[0]->involuntary, before.involuntary);
  EXPECT_GE(batch[0]->cpu_s, before.cpu_s);
  Usage after;
  ASSERT_TRUE(sample_thread(a.handle(), after));
  EXPECT_GE(after.voluntary, batch[0]->voluntary);
  EXPECT_GE(after.cpu_s, batch[0]->cpu_s);
}

TEST(SampleThreads, AnEmptySampleIsEmpty) { EXPECT_TRUE(sample_threads({}).empty()); }
