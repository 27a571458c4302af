#pragma once
// An I/O completion feed: where the NT kernel queues an I/O completion into the port from
// whatever context completes the I/O (KiInsertQueue), Linux leaves completions in a ring
// (io_uring) or a readiness list (epoll) that some thread must read. A port that takes a feed
// (the emulated port, CompletionPort::attach_feed) reads it itself, so no thread of the
// emulation's own stands between the kernel and the port:
// - every operation that would see a queued packet (a remove, a post, a block, depth(),
//   counters(), the batch remove's second take) first moves the feed's ready completions into
//   the port by the insert rule, whatever else is going on: a completed I/O is a queued packet;
// - while a completion would be handed to a waiter (C < M, W not empty, I/O in flight), one
//   waiter, the watcher, waits on the feed instead of its own futex, and turns what it finds
//   into packets through the same insert, so they go to the newest waiter (often itself).
// The port never makes a system call under its lock: poll() and flush() run before and after
// it, harvest() under it reads memory only. See harness/io/completion_source_linux.hpp (the Linux
// feed), tests/port/scripted_feed_test.cpp and docs/port-semantics.md.

#include <cstddef>

#include "platform/platform.hpp"
#include "port/packet.hpp"

namespace iocpbench::port {

class IoFeed {
 public:
  virtual ~IoFeed() = default;
  // Without the port's lock, before a harvest, from any thread (several at once): the system
  // calls that turn what the kernel has ready into harvestable completions (receives whose
  // socket became readable, issued now). Cheap when there is nothing to do.
  virtual void poll() {}
  // Under the port's lock (one caller at a time), memory only: the completions ready now, as
  // packets; at most `capacity` (call again while it fills them all). Any kernel entry it
  // needs (a resubmission) is left to flush().
  virtual std::size_t harvest(Packet* out, std::size_t capacity) = 0;
  // Without the port's lock, after a harvest: the kernel entries harvest() left.
  virtual void flush() {}
  // Whether operations whose completions become packets are in flight.
  virtual bool in_flight() const = 0;
  // Blocks the watcher (the port's lock not held) until a completion may be ready, interrupt()
  // is called, or `deadline` (nullptr: none). Other threads may harvest meanwhile, so a
  // completion may be gone when it returns; spurious returns are allowed: the port loops.
  virtual void wait(const platform::Clock::time_point* deadline) = 0;
  // Ends the watcher's current (or next) wait: a packet was handed to it, or the port closed
  // or detached the feed. Never under the port's lock.
  virtual void interrupt() = 0;
};

}  // namespace iocpbench::port
