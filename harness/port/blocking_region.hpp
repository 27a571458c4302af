#pragma once
// The blocking-region guard: every blocking call the harness makes inside a packet handler is
// wrapped in one, so that the emulated port sees what the NT kernel sees inside every wait.
// begin = "activate" (the thread stops counting against the concurrency value and a waiter may
// be released), end = "resume" (counted again at once, never waiting for a slot, so C may
// briefly exceed M as it does on Windows). On the kernel's IOCP the kernel does this itself and
// the guard is free.

namespace iocpbench::port {

void blocking_region_begin() noexcept;
void blocking_region_end() noexcept;

class BlockingRegion {
 public:
  BlockingRegion() noexcept { blocking_region_begin(); }
  ~BlockingRegion() { blocking_region_end(); }
  BlockingRegion(const BlockingRegion&) = delete;
  BlockingRegion& operator=(const BlockingRegion&) = delete;
};

// Detach the calling thread from its port as its exit would (runs "activate"). Thread exit does
// this by itself; this is for threads that outlive their use of a port.
void detach_current_thread() noexcept;

}  // namespace iocpbench::port
