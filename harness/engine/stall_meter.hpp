#pragma once
// The stall meter beside every open-loop run (jHiccup's idea): a thread at a real-time priority
// sleeps kTickNs at a time and records how much longer than asked it slept. An oversleep of
// kStallNs or more is a *stall*: the process, or the whole machine (a host pausing the guest),
// did not run, and every request due meanwhile waited for that, not for the server. The same
// thread samples the open loop's backlog (requests due and not yet done), from which over
// capacity is judged: a backlog that grows through the window, not one held arrival.
//
// StallLog and backlog_grows are pure (times are arguments) for the scripted tests; StallMeter
// is the thread.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace iocpbench::engine {

struct Stall {
  std::uint64_t start_ns = 0;   // when the meter should have woken (absolute, monotonic)
  std::uint64_t length_ns = 0;  // how much longer it slept than asked
};

// The stalls of a window: count, total and longest, and the first few, each from the window's
// start (runs[].open_loop.stalls).
struct StallSummary {
  std::uint64_t count = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t longest_ns = 0;
  std::vector<Stall> first;  // start_ns from the window's start; at most kKept
  static constexpr std::size_t kKept = 16;
};

class StallLog {
 public:
  static constexpr std::uint64_t kStallNs = 2'000'000;  // an oversleep this long is a stall
  // The meter asked to wake at asked_ns and woke at woke_ns.
  void observe(std::uint64_t asked_ns, std::uint64_t woke_ns);
  // The stalls overlapping [t0, t1), each clipped to it.
  StallSummary in_window(std::uint64_t t0_ns, std::uint64_t t1_ns) const;
  const std::vector<Stall>& all() const { return stalls_; }

 private:
  std::vector<Stall> stalls_;
};

struct BacklogSample {
  std::uint64_t t_ns = 0;
  std::uint64_t backlog = 0;  // requests due and not yet done
};

// Over capacity: the backlog grows through the window. The window is cut in quarters and each
// quarter's *least* backlog taken (a stall's backlog clears within its quarter, so it does not
// raise the least); the backlog grows when each quarter's least is above the one before and
// the last is above the first by at least kMinGrowth requests and 1% of the window's due
// requests. Unjudged (judged false) when a quarter has no sample.
struct BacklogVerdict {
  bool judged = false;
  bool grows = false;
  std::uint64_t least_by_quarter[4] = {};
};
inline constexpr std::uint64_t kMinBacklogGrowth = 4;
BacklogVerdict backlog_grows(const std::vector<BacklogSample>& samples, std::uint64_t t0_ns,
                             std::uint64_t t1_ns, std::uint64_t due);

class StallMeter {
 public:
  static constexpr std::uint64_t kTickNs = 1'000'000;      // the meter's sleep
  static constexpr std::uint64_t kBacklogEveryNs = 5'000'000;  // a backlog sample this often
  using Backlog = std::function<std::uint64_t()>;

  StallMeter() = default;
  ~StallMeter() { stop(); }
  StallMeter(const StallMeter&) = delete;
  StallMeter& operator=(const StallMeter&) = delete;

  // Starts the thread; `realtime`: ask for a real-time priority (what was granted: priority()).
  void start(Backlog backlog, bool realtime);
  void stop();  // joins; the logs are complete after it
  const StallLog& stalls() const { return log_; }
  const std::vector<BacklogSample>& backlog() const { return backlog_samples_; }
  // The meter thread's priority in words, and why a real-time one was refused ("" if it was not).
  const std::string& priority() const { return priority_; }
  const std::string& priority_refused_because() const { return refused_; }

 private:
  void loop(Backlog backlog, bool realtime);

  std::atomic<bool> stop_{false};
  StallLog log_;
  std::vector<BacklogSample> backlog_samples_;
  std::string priority_ = "normal";
  std::string refused_;
  std::thread thread_;
};

}  // namespace iocpbench::engine
