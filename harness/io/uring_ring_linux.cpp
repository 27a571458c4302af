// Linux only: see uring_ring_linux.hpp.

#include "io/uring_ring_linux.hpp"

#include <sys/socket.h>
#include <sys/utsname.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

namespace iocpbench::io::uring {

unsigned round_up_pow2(unsigned v) {
  unsigned p = 1;
  while (p < v) p <<= 1;
  return p;
}

void fill_sqe(io_uring_sqe* sqe, IoOp& op) {
  auto* buf = static_cast<char*>(op.buf) + op.done;
  const unsigned len = op.len - op.done;
  switch (op.kind) {
    case IoOp::Kind::read:
      io_uring_prep_read(sqe, op.fd, buf, len, op.offset + op.done);
      break;
    case IoOp::Kind::write:
      io_uring_prep_write(sqe, op.fd, buf, len, op.offset + op.done);
      break;
    case IoOp::Kind::recv:
      io_uring_prep_recv(sqe, op.fd, buf, len, 0);
      break;
    case IoOp::Kind::send:
      io_uring_prep_send(sqe, op.fd, buf, len, MSG_NOSIGNAL | MSG_WAITALL);
      break;
  }
  std::atomic_ref<std::uint32_t>(op.handoff).fetch_add(1, std::memory_order_release);
  io_uring_sqe_set_data(sqe, &op);
}

io_uring_sqe* sqe_or_submit(io_uring& ring, std::uint64_t* submits) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring);
  while (sqe == nullptr) {
    io_uring_submit(&ring);
    if (submits != nullptr) ++*submits;
    sqe = io_uring_get_sqe(&ring);
  }
  return sqe;
}

AfterCompletion after_completion(IoOp& op, std::int32_t res) {
  if (op.to_port || res <= 0) return {};
  op.done += static_cast<std::uint32_t>(res);
  if (op.done >= op.len) return {false, op.then};
  if (op.linked == nullptr) return {false, &op};  // a short send: the rest
  return {};  // short with a link: the linked operation was cancelled; posted as failed
}

port::Packet completion_packet(const IoOp& op, std::int32_t res) {
  port::Packet packet;
  packet.bytes = res > 0 ? static_cast<std::uint32_t>(res) : 0;
  packet.status = res < 0 ? static_cast<std::uint32_t>(-res) : (!op.to_port ? EPIPE : 0);
  if (!op.to_port) packet.bytes = op.done;
  packet.key = op.key;
  packet.context = const_cast<IoOp*>(&op);  // the owner's: it finds its operation by it
  return packet;
}

std::string kernel_release() {
  utsname u{};
  return ::uname(&u) == 0 ? std::string(u.release) : std::string("unknown");
}

bool kernel_at_least(int major, int minor) {
  int have_major = 0;
  int have_minor = 0;
  if (std::sscanf(kernel_release().c_str(), "%d.%d", &have_major, &have_minor) != 2) return false;
  return have_major > major || (have_major == major && have_minor >= minor);
}

std::string feature_names(unsigned features) {
  struct Name {
    unsigned bit;
    const char* name;
  };
  const Name names[] = {{IORING_FEAT_SINGLE_MMAP, "SINGLE_MMAP"}, {IORING_FEAT_NODROP, "NODROP"},
                        {IORING_FEAT_SUBMIT_STABLE, "SUBMIT_STABLE"},
                        {IORING_FEAT_FAST_POLL, "FAST_POLL"}, {IORING_FEAT_EXT_ARG, "EXT_ARG"},
                        {IORING_FEAT_NATIVE_WORKERS, "NATIVE_WORKERS"}};
  std::string text;
  for (const auto& n : names) {
    if ((features & n.bit) == 0) continue;
    if (!text.empty()) text += '|';
    text += n.name;
  }
  return text.empty() ? "none" : text;
}

}  // namespace iocpbench::io::uring
