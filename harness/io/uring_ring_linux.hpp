#pragma once
// Linux only: what both io_uring completion sources do to a ring the same way (the thread path,
// thread_source_linux.cpp; the port path, feed_source_linux.cpp): an operation's SQE, a free
// SQE at any cost, what a completed transfer asks for next, its packet, and the kernel facts
// the sources record.

#include <liburing.h>

#include <cstdint>
#include <string>

#include "io/completion_source_linux.hpp"
#include "port/packet.hpp"

namespace iocpbench::io::uring {

// The user_data of CQEs that are not operations, and the epoll tag of the ring's own fd.
constexpr std::uint64_t kDoorbellTag = 1;  // the doorbell's eventfd (its read, or its epoll entry)
constexpr std::uint64_t kCancelTag = 2;    // the cancel-all at stop
constexpr std::uint64_t kRingTag = 3;      // epoll: the ring's own fd (a CQE is ready)

unsigned round_up_pow2(unsigned v);

// One operation's SQE: the rest of the transfer (op.done bytes are already done) and the
// release bump of op.handoff that orders the submitter's writes before the reaper's reads.
void fill_sqe(io_uring_sqe* sqe, IoOp& op);

// A free SQE. With max_ops respected the ring never runs out; if it does, what it holds is
// submitted until one is free, so no operation is lost. `submits` counts those submits.
io_uring_sqe* sqe_or_submit(io_uring& ring, std::uint64_t* submits);

// What a completed operation asks for next. The source finishes a send itself
// (IoOp::to_port false): a full one submits its `then`, a short one without a link submits
// its rest. Everything else, a failure or a short linked send (its link was cancelled)
// included, becomes a packet.
struct AfterCompletion {
  bool post = true;
  IoOp* resubmit = nullptr;  // with post false: what to submit now (none: the send is done)
};
AfterCompletion after_completion(IoOp& op, std::int32_t res);

// The packet of a completion that AfterCompletion says to post.
port::Packet completion_packet(const IoOp& op, std::int32_t res);

// The running kernel's release ("6.1.0-18-amd64"), whether it is at least major.minor, and the
// names of io_uring's IORING_FEAT_* bits a ring reported.
std::string kernel_release();
bool kernel_at_least(int major, int minor);
std::string feature_names(unsigned features);

}  // namespace iocpbench::io::uring
