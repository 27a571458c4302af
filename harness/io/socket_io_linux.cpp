// The socket transport on Linux (socket_io.hpp).
//
// Server, per connection: a recv is kept armed through the io_uring completion source; its
// completion is a port packet. The echo goes out with a plain non-blocking send, as a WSASend
// with skip-on-success completes inline, so the reply never waits for the completion thread;
// only the next receive is handed to the ring. Whatever the socket does not take at once goes
// through the ring as a send the source finishes itself (IoOp::to_port false) with the next
// receive linked behind it (IOSQE_IO_LINK), so one io_uring_enter serves both and each message
// still costs one packet. IOCPBENCH_RING_SENDS set: every echo goes through the ring.
// Per-thread dispatch: connection i goes to worker i mod S's ring, pumped by that worker.
//
// Client (the load generator): its own ring, set up on its thread with the first flags the
// kernel accepts; a CQE's user data is (conn << 1 | recv) + 2, 0 being the cancel's.

#include "io/socket_io.hpp"

#include <arpa/inet.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "io/completion_source_linux.hpp"
#include "io/skip_on_success.hpp"
#include "io/source_set_linux.hpp"
#include "metrics/clock.hpp"

namespace iocpbench::io {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

void set_nodelay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Two fds per connection: lift the soft limit toward the hard one when that is not enough.
void raise_fd_limit(std::uint64_t needed) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= needed + 64) return;
  limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, needed + 64);
  ::setrlimit(RLIMIT_NOFILE, &limit);
}

struct ServerConn {
  int fd = -1;
  IoOp recv;
  IoOp send;
  std::unique_ptr<char[]> buffer;
};

constexpr std::uint64_t kRecvTag = 1;

class RingSocketIo final : public RingTransport<SocketIo> {
 public:
  ~RingSocketIo() override { close(); }

  void open(const SocketIoOptions& o, const TransportEnv& env) override {
    options_ = o;
    const unsigned n = options_.connections;
    skip_.requested = env.skip_requested;
    skip_.handles = n;
    raise_fd_limit(2 * std::uint64_t{n} + 64);
    const sockaddr_in addr = listen_on_loopback(n);
    server_ = std::vector<ServerConn>(n);
    clients_.assign(n, -1);
    for (unsigned i = 0; i < n; ++i) connect_pair(i, addr);
    // Per-thread ports: one ring per worker that owns a connection (workers beyond the
    // connection count get no ring and only ever take their stop packet).
    SourceSetOptions set;
    set.port = env.port;
    set.worker_ports = env.worker_ports;
    set.roles = env.roles;
    set.units = n;
    set.ops_per_unit = 2;  // a receive and an echo each
    set.port_reads = env.port_reads;
    // IOCPBENCH_RING_RECV=1 arms the receives in the ring, as before, for comparison.
    set.readiness_receives = std::getenv("IOCPBENCH_RING_RECV") == nullptr;
    set.unit_name = "connection";
    open_sources(set);
  }

  bool arm_recv(std::uint32_t conn) override {
    IoOp& recv = server_[conn].recv;
    recv.done = 0;
    sources_.submit(recv);
    return true;  // queued: a failure completes as a packet
  }

  Echo echo(std::uint32_t conn, std::uint32_t bytes) override {
    ServerConn& s = server_[conn];
    s.recv.done = 0;
    ssize_t sent = 0;
    if (direct_send_) {
      do {
        sent = ::send(s.fd, s.buffer.get(), bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
      } while (sent < 0 && errno == EINTR);
      if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return Echo::error;
      if (sent == static_cast<ssize_t>(bytes)) {
        direct_sends_.fetch_add(1, std::memory_order_relaxed);
        return Echo::sent;
      }
    }
    s.send.len = bytes;
    s.send.done = sent > 0 ? static_cast<std::uint32_t>(sent) : 0;
    sources_.submit(s.send);
    return Echo::pending;
  }

  SocketDone done(const port::Packet& packet) override {
    const auto* op = static_cast<const IoOp*>(packet.context);
    SocketDone d;
    d.conn = static_cast<std::uint32_t>(packet.key);
    d.send = op->kind != IoOp::Kind::recv;  // only a failed send is posted
    d.bytes = packet.bytes;
    d.status = packet.status;
    d.t_insert_ns = op->t_insert_ns;
    return d;
  }

  bool send_complete(std::uint32_t, std::uint32_t) override { return true; }

  void shutdown_server() override {
    for (auto& s : server_) ::shutdown(s.fd, SHUT_RDWR);
  }

  // The generator's ring, with the first setup flags the kernel accepts (recorded in
  // client_description()).
  std::string start_client() override {
    unsigned entries = 1;
    while (entries < 2 * options_.connections + 8) entries <<= 1;
    const unsigned attempts[] = {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
                                 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN,
                                 IORING_SETUP_COOP_TASKRUN, 0};
    const char* names[] = {"SINGLE_ISSUER|DEFER_TASKRUN", "SINGLE_ISSUER|COOP_TASKRUN",
                           "COOP_TASKRUN", "none"};
    int rc = -EINVAL;
    for (std::size_t i = 0; i < std::size(attempts); ++i) {
      rc = io_uring_queue_init(entries, &ring_, attempts[i]);
      if (rc == 0) {
        client_design_ = std::string("own thread, own io_uring (setup ") + names[i] +
                         "), one clock read per completion batch";
        ring_live_ = true;
        return {};
      }
      if (rc != -EINVAL) break;
    }
    return std::string("load generator io_uring_queue_init: ") + std::strerror(-rc);
  }

  bool client_recv(std::uint32_t conn, void* buf, std::size_t len) override {
    io_uring_sqe* e = sqe();
    io_uring_prep_recv(e, clients_[conn], buf, len, 0);
    io_uring_sqe_set_data64(e, (std::uint64_t{conn} << 1 | kRecvTag) + 2);
    ++in_flight_;
    return true;
  }

  bool client_send(std::uint32_t conn, const void* buf, std::size_t len) override {
    io_uring_sqe* e = sqe();
    io_uring_prep_send(e, clients_[conn], buf, len, MSG_NOSIGNAL);
    io_uring_sqe_set_data64(e, (std::uint64_t{conn} << 1) + 2);
    ++in_flight_;
    return true;
  }

  bool client_send_now(std::uint32_t conn, const void* buf, std::size_t len) override {
    const char* p = static_cast<const char*>(buf);
    while (len > 0) {
      const ssize_t n = ::send(clients_[conn], p, len, MSG_NOSIGNAL);  // a blocking socket
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      p += n;
      len -= static_cast<std::size_t>(n);
    }
    return true;
  }

  bool client_wait(unsigned timeout_ms, std::vector<ClientDone>& out) override {
    out.clear();
    io_uring_cqe* cqe = nullptr;
    __kernel_timespec ts{0, static_cast<long long>(timeout_ms) * 1'000'000};
    const int rc = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &ts, nullptr);
    if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) return false;
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      const std::uint64_t tag = io_uring_cqe_get_data64(cqe);
      if (tag == 0) continue;  // a cancel
      --in_flight_;
      ClientDone d;
      d.conn = static_cast<std::uint32_t>((tag - 2) >> 1);
      d.recv = ((tag - 2) & kRecvTag) != 0;
      d.bytes = cqe->res > 0 ? static_cast<std::uint32_t>(cqe->res) : 0;
      d.failed = cqe->res < 0;
      d.cancelled = cqe->res == -ECANCELED;
      out.push_back(d);
    }
    io_uring_cq_advance(&ring_, seen);
    return true;
  }

  void client_shutdown_send(std::uint32_t conn) override { ::shutdown(clients_[conn], SHUT_WR); }

  // Cancels the armed receives and waits (bounded) so no buffer is written after we return.
  void stop_client() override {
    if (!ring_live_) return;
    if (io_uring_sqe* sqe = io_uring_get_sqe(&ring_)) {
      io_uring_prep_cancel(sqe, nullptr, IORING_ASYNC_CANCEL_ANY);
      io_uring_sqe_set_data64(sqe, 0);
      io_uring_submit(&ring_);
    }
    const std::uint64_t deadline = metrics::now_ns() + 1'000'000'000ull;
    while (in_flight_ > 0 && metrics::now_ns() < deadline) {
      io_uring_cqe* cqe = nullptr;
      __kernel_timespec ts{0, 10'000'000};
      io_uring_wait_cqe_timeout(&ring_, &cqe, &ts);
      unsigned head = 0;
      unsigned seen = 0;
      io_uring_for_each_cqe(&ring_, head, cqe) {
        ++seen;
        if (io_uring_cqe_get_data64(cqe) != 0) --in_flight_;
      }
      io_uring_cq_advance(&ring_, seen);
    }
    io_uring_queue_exit(&ring_);
    ring_live_ = false;
  }

  std::string client_description() const override { return client_design_; }

  void close() override {
    sources_.close();  // stops the completion threads; cancels anything left in flight
    for (auto& s : server_) {
      if (s.fd >= 0) ::close(s.fd);
      s.fd = -1;
    }
    for (int& c : clients_) {
      if (c >= 0) ::close(c);
      c = -1;
    }
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
  }

  nlohmann::json stats() const override {
    return {{"echoes_sent_inline", direct_sends_.load()},
            {"completion_source", sources_.to_json()},
            {"skip_on_success",
             to_json(skip_, "Linux has no skip-on-success mode: every completion is a packet")}};
  }

 private:
  SocketIoOptions options_;
  SkipOnSuccessCounts skip_;  // nothing to ask: io_uring queues every completion
  int listen_fd_ = -1;
  std::vector<ServerConn> server_;
  std::vector<int> clients_;
  bool direct_send_ = std::getenv("IOCPBENCH_RING_SENDS") == nullptr;
  // Every worker bumps it on every echo: on a cache line of its own, away from the generator's
  // ring (which its thread touches on every operation), so the two never share a line.
  alignas(64) std::atomic<std::uint64_t> direct_sends_{0};
  // The load generator's ring (its thread only).
  alignas(64) io_uring ring_{};
  bool ring_live_ = false;
  std::uint64_t in_flight_ = 0;
  std::string client_design_;

  sockaddr_in listen_on_loopback(unsigned n) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) fail("socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only: nothing reaches a network
    addr.sin_port = 0;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("bind");
    if (::listen(listen_fd_, static_cast<int>(n)) != 0) fail("listen");
    socklen_t len = sizeof addr;
    if (::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      fail("getsockname");
    }
    return addr;
  }

  void connect_pair(unsigned i, const sockaddr_in& addr) {
    int& c = clients_[i];
    c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c < 0) fail("socket");
    if (::connect(c, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) fail("connect");
    set_nodelay(c);
    ServerConn& s = server_[i];
    s.fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (s.fd < 0) fail("accept");
    set_nodelay(s.fd);
    s.buffer = std::make_unique<char[]>(options_.buffer_bytes);
    s.recv.kind = IoOp::Kind::recv;
    s.recv.fd = s.fd;
    s.recv.buf = s.buffer.get();
    s.recv.len = static_cast<std::uint32_t>(options_.buffer_bytes);
    s.recv.key = i;
    s.recv.index = i;
    s.send.kind = IoOp::Kind::send;
    s.send.to_port = false;
    s.send.fd = s.fd;
    s.send.buf = s.buffer.get();
    s.send.key = i;
    s.send.index = i;
    s.send.linked = &s.recv;  // one enter submits the echo and re-arms the receive
  }

  io_uring_sqe* sqe() {
    io_uring_sqe* e = io_uring_get_sqe(&ring_);
    while (e == nullptr) {
      io_uring_submit(&ring_);
      e = io_uring_get_sqe(&ring_);
    }
    return e;
  }
};

}  // namespace

std::unique_ptr<SocketIo> make_socket_io() {
  return std::make_unique<RingSocketIo>();
}

}  // namespace iocpbench::io
