#pragma once
// CPU placement of a run's threads: the pool's workers (--affinity) and the load generator's
// threads (--load-affinity: the post workload's posters, the socket workload's client thread,
// the open loop's pacer). A placement (platform/cpu_placement.hpp) is checked on this machine
// before any run starts; during a run each thread pins itself as it starts and records the CPU
// the OS reads back. With `none` nothing is called: the OS places the threads as it likes.

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "platform/cpu_placement.hpp"

namespace iocpbench::engine {

// --affinity / --load-affinity's text, parsed and placed on this machine, with every CPU it uses
// tried once on a scratch thread: BadInput{flag, reason} for an unknown spec, a malformed list, a
// CPU that does not exist or is not allowed to this process, or one the OS refuses.
platform::PlacementSpec parse_affinity_flag(const std::string& text, const std::string& flag);
// The placement of a parsed spec on this machine (BadInput{flag, reason} as above).
platform::Placement affinity_placement(const platform::PlacementSpec& spec, const std::string& flag);

// What one placement did in a run.
struct PlacementRecord {
  std::string spec = "none";
  std::string order;  // platform::Placement::order; "" for none
  // Per thread, the CPU the OS read back after pinning (nullopt: it read back none or several);
  // the whole vector nullopt for none.
  std::optional<std::vector<std::optional<unsigned>>> cpus;
  std::vector<std::string> threads;  // each thread's name (load threads; empty for workers)
};

struct AffinityRecord {
  PlacementRecord workers;
  PlacementRecord load;
};

// Hands threads their CPUs: thread i (a worker's slot, or a load thread in the order reserved)
// goes to placement.cpu_for(i). Thread-safe; a placement of none does nothing at all.
class ThreadPlacer {
 public:
  // `slots`: threads known up front (the pool's slots); load threads are reserved one by one.
  ThreadPlacer(platform::Placement placement, std::string flag, unsigned slots = 0);

  bool pins() const { return placement_.spec.pins(); }
  // A load thread's index, taken by the thread that starts it (so the order is the start
  // order, not the order the threads happen to run in).
  unsigned reserve(const std::string& name);
  // On the thread itself: pins it to its CPU and records what the OS reads back. A refusal is
  // kept (failure()), not thrown: a worker thread has no one to throw to.
  void pin_current(unsigned index);

  PlacementRecord record() const;
  // "" or the first refusal: "--affinity: worker 3 could not be pinned to CPU 5: ...".
  std::string failure() const;

 private:
  const platform::Placement placement_;
  const std::string flag_;
  mutable std::mutex mutex_;
  std::vector<std::optional<unsigned>> cpus_;
  std::vector<std::string> threads_;
  std::string failure_;
};

}  // namespace iocpbench::engine
