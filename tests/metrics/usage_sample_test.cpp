// metrics::sample_threads: a whole sample at one moment (on Windows one NtQuerySystemInformation
// snapshot for every thread). Each live thread gets its own counts in its own slot, a thread
// that has exited gets nothing, and the counts agree with the one-thread sample_thread.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "metrics/usage.hpp"

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

}  // namespace

TEST(SampleThreads, EveryLiveThreadInItsSlotAndNothingForAnExitedOne) {
  LiveThread a, b, gone;
  const ThreadHandle gone_handle = gone.handle();
  gone.join();  // exited: no OS snapshot lists it any more

  const ThreadHandle self = iocpbench::metrics::current_thread_handle();
  const std::vector<ThreadHandle> handles{a.handle(), gone_handle, self, b.handle()};
  const auto usages = sample_threads(handles);
  ASSERT_EQ(usages.size(), handles.size());
  EXPECT_TRUE(usages[0].has_value());
  EXPECT_FALSE(usages[1].has_value()) << "an exited thread was sampled";
  EXPECT_TRUE(usages[2].has_value());
  EXPECT_TRUE(usages[3].has_value());
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
