#pragma once
// The I/O a pool's workers own, as the pool sees it: work to do besides taking packets.
//
// Two things about a worker's own I/O change what a pool thread may do:
// - Whether anything but the worker moves its completions into its port. Where nothing does
//   (per-thread ports with no completion thread), a worker whose port is empty fetches its own
//   completions, waiting for them there, instead of sleeping on the port.
// - Whether its exit could cancel I/O in flight (Richter's ThreadHasIoPending): a self-sizing
//   pool then keeps the thread, or parks it, rather than letting it leave.
// The I/O layer implements this (io::Transport); the pool reads only these answers, so it knows
// nothing of what carries the I/O (rings, readiness lists, overlapped handles). The defaults
// are those of a worker that owns no I/O.

#include <cstdint>

namespace iocpbench::port {

class WorkerIo {
 public:
  virtual ~WorkerIo() = default;
  // Whether worker `worker` must fetch its own completions (fetch()) when its port is empty.
  virtual bool fetches(unsigned /*worker*/) const { return false; }
  // Submits what the worker queued, waits up to `wait_us` for a first completion where I/O is
  // in flight, and queues what completed into the worker's port as packets. Returns the
  // packets queued, or -1 at once when the worker has nothing in flight. Only on the worker's
  // own thread, and only where fetches(worker).
  virtual int fetch(unsigned /*worker*/, unsigned /*wait_us*/) { return -1; }
  // Whether I/O the worker may have issued is in flight, so that its exit could cancel it.
  // Conservative: true where it cannot tell whose I/O is in flight.
  virtual bool io_pending(unsigned /*worker*/) const { return false; }
  // How many fetch() calls slept waiting for a completion, summed over the workers (the
  // per-thread model's sleeps on its own port). Valid after the I/O is closed.
  virtual std::uint64_t fetch_waits() const { return 0; }
};

}  // namespace iocpbench::port
