#pragma once
// An I/O completion feed: where the NT kernel queues an I/O completion into the port from
// whatever context completes the I/O (KiInsertQueue), Linux leaves completions in a ring
// (io_uring) that some thread must read. A port that takes a feed (the emulated port,
// CompletionPort::attach_feed) reads it itself, so no thread of the emulation's own stands
// between the kernel and the port:
// - every remove first moves the feed's ready completions into the port by the insert rule
//   (a running thread that enters GQCS takes them without sleeping);
// - while a completion would be handed to a waiter (C < M, W not empty, I/O in flight), one
//   waiter, the watcher, waits on the feed instead of its own futex, and turns what it finds
//   into packets through the same insert, so they go to the newest waiter (often itself).
// See harness/io/completion_source.hpp (the Linux feed) and docs/port-semantics.md.

#include <cstddef>

#include "platform/platform.hpp"
#include "port/packet.hpp"

namespace iocpbench::port {

class IoFeed {
 public:
  virtual ~IoFeed() = default;
  // The completions ready now, as packets, without waiting; at most `capacity` (call again
  // while it fills them all). The port calls it under its lock: one caller at a time.
  virtual std::size_t harvest(Packet* out, std::size_t capacity) = 0;
  // Whether operations whose completions become packets are in flight.
  virtual bool in_flight() const = 0;
  // Blocks the watcher (the port's lock not held) until a completion may be ready, interrupt()
  // is called, or `deadline` (nullptr: none). Spurious returns are allowed: the port loops.
  virtual void wait(const platform::Clock::time_point* deadline) = 0;
  // Ends the watcher's current (or next) wait: a packet was handed to it, or the port closed.
  virtual void interrupt() = 0;
};

}  // namespace iocpbench::port
