// The socket workload on Linux: a loopback TCP echo server whose I/O runs through the io_uring
// completion source into the port, and a load generator on its own thread with its own ring.
//
// Server, per connection: a recv is kept armed; its completion is a port packet; the worker
// runs the handler and submits a send of the same bytes whose completion the source finishes
// itself, with the next recv linked behind it (IoOp::linked). So each message costs
// one packet, as an IOCP echo server with skip-on-success sends would. The send and the next
// receive are submitted together (IOSQE_IO_LINK), so one io_uring_enter serves both.
// Load generator: `messages_in_flight` messages per connection; each message's bytes are a
// function of (connection, stream position), so every echoed byte is verified; the round trip
// (send -> whole echo received) is the end-to-end latency. One clock read per CQE batch.
// Per-thread dispatch (DiskSpd's model, as the file workload): connection i belongs to worker
// i mod S; each of those workers has its own ring with no completion thread, submitted and
// reaped by the worker itself into its own port (Pool: pump when the port is empty), so a
// connection's receives and echoes never leave the thread that handles them.

#include <arpa/inet.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "io/completion_source.hpp"
#include "io/source_set.hpp"
#include "metrics/clock.hpp"
#include "workloads/echo_pattern.hpp"
#include "engine/workload.hpp"
#include "workloads/workloads.hpp"

namespace iocpbench::workloads {
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
  io::IoOp recv;
  io::IoOp send;
  std::unique_ptr<char[]> buffer;
  std::atomic<bool> closed{false};  // a failed send and its cancelled recv may both report
};

struct alignas(8) ClientConn {
  int fd = -1;
  std::unique_ptr<std::uint8_t[]> tx, rx;
  std::vector<std::uint64_t> t_sent;  // send time of message m at [m % K]
  std::uint64_t sent_msgs = 0, done_msgs = 0, rx_bytes = 0;
  std::uint32_t pending = 0;  // messages due to be sent
  std::uint32_t send_len = 0, send_done = 0;
  bool send_busy = false, recv_armed = false, dead = false;
};

class SocketWorkload final : public Workload {
 public:
  explicit SocketWorkload(const SocketParams& p) : params_(p) {}
  ~SocketWorkload() override { close(); }

  std::string_view name() const override { return "socket"; }

  void open(const RunEnv& env) override {
    env_ = env;
    const unsigned n = params_.connections;
    raise_fd_limit(2 * std::uint64_t{n} + 64);
    const std::size_t capacity = std::size_t{params_.message_size} * params_.in_flight;
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) fail("socket");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only: nothing reaches a network
    addr.sin_port = 0;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("bind");
    if (::listen(listen_fd_, static_cast<int>(n)) != 0) fail("listen");
    socklen_t len = sizeof addr;
    if (::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      fail("getsockname");

    server_ = std::vector<ServerConn>(n);
    clients_ = std::vector<ClientConn>(n);
    for (unsigned i = 0; i < n; ++i) {
      ClientConn& c = clients_[i];
      c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (c.fd < 0) fail("socket");
      if (::connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("connect");
      set_nodelay(c.fd);
      c.tx = std::make_unique<std::uint8_t[]>(capacity);
      c.rx = std::make_unique<std::uint8_t[]>(capacity);
      c.t_sent.assign(params_.in_flight, 0);
      ServerConn& s = server_[i];
      s.fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (s.fd < 0) fail("accept");
      set_nodelay(s.fd);
      s.buffer = std::make_unique<char[]>(capacity);
      s.recv.kind = io::IoOp::Kind::recv;
      s.recv.fd = s.fd;
      s.recv.buf = s.buffer.get();
      s.recv.len = static_cast<std::uint32_t>(capacity);
      s.recv.key = i;
      s.recv.index = i;
      s.send.kind = io::IoOp::Kind::send;
      s.send.to_port = false;
      s.send.fd = s.fd;
      s.send.buf = s.buffer.get();
      s.send.key = i;
      s.send.index = i;
      s.send.linked = &s.recv;  // one enter submits the echo and re-arms the receive
    }
    open_conns_.store(n);
    // Per-thread ports: one ring per worker that owns a connection (workers beyond the
    // connection count get no ring and only ever take their stop packet).
    io::SourceSetOptions options;
    options.port = env.port;
    options.worker_ports = env.worker_ports;
    options.roles = env.roles;
    options.units = n;
    options.ops_per_unit = 2;  // a receive and an echo each
    options.port_reads = params_.completion_path == CompletionPath::port;
    options.unit_name = "connection";
    sources_.open(options);
  }

  void start() override {
    for (auto& s : server_) sources_.submit(s.recv);
    std::promise<std::string> ready;
    auto started = ready.get_future();
    generator_ = std::thread([this, &ready] { generator(ready); });
    const std::string problem = started.get();
    if (!problem.empty()) {
      generator_.join();
      throw std::runtime_error(problem);
    }
  }

  Completion on_packet(const port::Packet& packet, WorkerContext&) override {
    const auto* op = static_cast<const io::IoOp*>(packet.context);
    Completion c;
    c.t_insert_ns = op->t_insert_ns;  // latency: the generator's round trips
    c.bytes = packet.bytes;
    c.error = packet.status != 0;
    c.counted = !c.error && op->kind == io::IoOp::Kind::recv && packet.bytes > 0;
    if (c.error) server_errors_.fetch_add(1, std::memory_order_relaxed);
    return c;
  }

  void after_handler(const port::Packet& packet, const Completion& c, std::uint64_t,
                     WorkerContext&) override {
    ServerConn& s = server_[packet.key];
    if (!c.counted) {  // end of stream, or a failed recv/send: the connection is done
      if (!s.closed.exchange(true)) open_conns_.fetch_sub(1, std::memory_order_seq_cst);
      return;
    }
    // Echo what arrived (always, even when stopping: the generator waits for its in-flight
    // messages). A small echo goes out with a plain non-blocking send, as a WSASend with
    // skip-on-success completes inline, so the reply never waits for the completion thread;
    // only the next receive is handed to it. Whatever the socket does not take at once goes
    // through the ring (the send with the receive linked behind it).
    s.recv.done = 0;
    ssize_t sent = 0;
    if (direct_send_) {
      do {
        sent = ::send(s.fd, s.buffer.get(), packet.bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
      } while (sent < 0 && errno == EINTR);
      if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        server_errors_.fetch_add(1, std::memory_order_relaxed);
        if (!s.closed.exchange(true)) open_conns_.fetch_sub(1, std::memory_order_seq_cst);
        return;
      }
      if (sent == static_cast<ssize_t>(packet.bytes)) {
        direct_sends_.fetch_add(1, std::memory_order_relaxed);
        sources_.submit(s.recv);
        return;
      }
    }
    s.send.len = packet.bytes;
    s.send.done = sent > 0 ? static_cast<std::uint32_t>(sent) : 0;
    sources_.submit(s.send);
  }

  bool drain(std::chrono::steady_clock::time_point deadline) override {
    // The generator stops sending, collects its in-flight echoes and half-closes; each server
    // connection then sees end of stream.
    while (!generator_done_.load() || open_conns_.load() != 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        force_exit_.store(true);
        for (auto& s : server_) ::shutdown(s.fd, SHUT_RDWR);
        drain_timeouts_.fetch_add(1);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    return true;
  }

  void close() override {
    force_exit_.store(true);
    if (generator_.joinable()) generator_.join();
    sources_.close();  // stops the completion threads; cancels anything left in flight
    for (auto& s : server_) {
      if (s.fd >= 0) ::close(s.fd);
      s.fd = -1;
    }
    for (auto& c : clients_) {
      if (c.fd >= 0) ::close(c.fd);
      c.fd = -1;
    }
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
  }

  nlohmann::json stats(double window_s) const override {
    return {{"connections", params_.connections},
            {"messages_sent", messages_sent_},
            {"messages_verified", messages_verified_},
            {"bytes_verified", bytes_verified_},
            {"round_trips_in_window", window_round_trips_},
            {"round_trips_per_s",
             window_s > 0 ? static_cast<double>(window_round_trips_) / window_s : 0.0},
            {"mismatched_bytes", mismatched_bytes_},
            {"generator_errors", generator_errors_},
            {"unexpected_eof", unexpected_eof_},
            {"server_errors", server_errors_.load()},
            {"drain_timeouts", drain_timeouts_.load()},
            {"echoes_sent_inline", direct_sends_.load()},
            {"completion_source", sources_.to_json()},
            {"load_generator", {{"design", generator_description_}}}};
  }

  // The port path: workers submit the echoes and receives, which io_uring ties to the
  // submitting thread; conservatively no worker of a self-sizing pool leaves while any is armed.
  bool worker_has_io_pending(unsigned) const override {
    return params_.completion_path == CompletionPath::port && env_.worker_ports.empty();
  }

  // Per-thread ports: worker w reaps its own ring (connections w, w+R, ...).
  bool pumps(unsigned worker) const override { return sources_.pumps(worker); }
  int pump(unsigned worker, unsigned wait_us) override { return sources_.pump(worker, wait_us); }

  std::string stall_report() const override {
    if (!sources_.live()) return {};
    const io::SourceStats s = sources_.stats();
    return std::to_string(open_conns_.load()) + " of " + std::to_string(server_.size()) +
           " server connections open; completion source: " + std::to_string(s.completions) +
           " completed, " + std::to_string(s.posted) + " posted to the port" +
           (generator_done_.load() ? "; load generator finished" : "; load generator running");
  }

  std::uint64_t errors() const override {
    const io::SourceStats s = sources_.stats();
    return (mismatched_bytes_ > 0 ? 1 : 0) + generator_errors_ + unexpected_eof_ +
           drain_timeouts_.load() + s.post_failures;
  }

  const metrics::Histogram* own_latency() const override { return &round_trip_; }

 private:
  // ---- the load generator (its own thread and ring) ----
  static constexpr std::uintptr_t kRecvTag = 1;

  void generator(std::promise<std::string>& ready) {
    env_.roles->enrol(metrics::Role::load_generator);
    io_uring ring{};
    const int rc = init_ring(ring);
    if (rc != 0) {
      generator_done_.store(true);
      ready.set_value(std::string("load generator io_uring_queue_init: ") + std::strerror(-rc));
      return;
    }
    ready.set_value({});
    ring_ = &ring;
    generate(ring);
    cancel_and_reap(ring);
    io_uring_queue_exit(&ring);
    ring_ = nullptr;
    generator_done_.store(true);
  }

  // The generator's ring, with the first setup flags the kernel accepts (recorded in
  // generator_description_). Returns io_uring_queue_init's result.
  int init_ring(io_uring& ring) {
    unsigned entries = 1;
    while (entries < 2 * params_.connections + 8) entries <<= 1;
    const unsigned attempts[] = {IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
                                 IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN,
                                 IORING_SETUP_COOP_TASKRUN, 0};
    const char* names[] = {"SINGLE_ISSUER|DEFER_TASKRUN", "SINGLE_ISSUER|COOP_TASKRUN",
                           "COOP_TASKRUN", "none"};
    int rc = -EINVAL;
    for (std::size_t i = 0; i < std::size(attempts); ++i) {
      rc = io_uring_queue_init(entries, &ring, attempts[i]);
      if (rc == 0) {
        generator_description_ = std::string("own thread, own io_uring (setup ") + names[i] +
                                 "), one clock read per completion batch";
        break;
      }
      if (rc != -EINVAL) break;
    }
    return rc;
  }

  // Sends and verifies until the run stops: then, once every in-flight message is back (or 2 s
  // have passed), half-closes every connection so that the server sees end of stream.
  void generate(io_uring& ring) {
    std::uint64_t t = metrics::now_ns();
    for (std::uint32_t i = 0; i < clients_.size(); ++i) {
      clients_[i].pending = params_.in_flight;
      try_send(i, t);
      arm_recv(i);
    }
    std::uint64_t stop_deadline = 0;
    while (!force_exit_.load(std::memory_order_relaxed)) {
      if (env_.phase->load(std::memory_order_acquire) == kStopping) {
        if (stop_deadline == 0) stop_deadline = metrics::now_ns() + 2'000'000'000ull;
        bool quiet = true;
        for (const auto& c : clients_) quiet = quiet && (c.dead || c.done_msgs == c.sent_msgs);
        if (quiet || metrics::now_ns() > stop_deadline) {
          if (!quiet) ++generator_errors_;
          for (auto& c : clients_) ::shutdown(c.fd, SHUT_WR);
          return;
        }
      }
      io_uring_cqe* cqe = nullptr;
      __kernel_timespec ts{0, 20'000'000};  // wake now and then to see the phase change
      const int rc = io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &ts, nullptr);
      if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
        ++generator_errors_;
        return;
      }
      t = metrics::now_ns();
      unsigned head = 0;
      unsigned seen = 0;
      io_uring_for_each_cqe(&ring, head, cqe) {
        ++seen;
        handle(cqe, t);
      }
      io_uring_cq_advance(&ring, seen);
    }
  }

  // Cancels the armed receives and waits (bounded) so no buffer is written after we return.
  void cancel_and_reap(io_uring& ring) {
    if (io_uring_sqe* sqe = io_uring_get_sqe(&ring)) {
      io_uring_prep_cancel(sqe, nullptr, IORING_ASYNC_CANCEL_ANY);
      io_uring_sqe_set_data64(sqe, 0);
      io_uring_submit(&ring);
    }
    const std::uint64_t deadline = metrics::now_ns() + 1'000'000'000ull;
    while (in_flight_ > 0 && metrics::now_ns() < deadline) {
      io_uring_cqe* cqe = nullptr;
      __kernel_timespec ts{0, 10'000'000};
      io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
      unsigned head = 0;
      unsigned seen = 0;
      io_uring_for_each_cqe(&ring, head, cqe) {
        ++seen;
        if (io_uring_cqe_get_data64(cqe) != 0) --in_flight_;
      }
      io_uring_cq_advance(&ring, seen);
    }
  }

  io_uring_sqe* sqe() {
    io_uring_sqe* e = io_uring_get_sqe(ring_);
    while (e == nullptr) {
      io_uring_submit(ring_);
      e = io_uring_get_sqe(ring_);
    }
    return e;
  }

  void arm_recv(std::uint32_t i) {
    ClientConn& c = clients_[i];
    io_uring_sqe* e = sqe();
    io_uring_prep_recv(e, c.fd, c.rx.get(), std::size_t{params_.message_size} * params_.in_flight,
                       0);
    io_uring_sqe_set_data64(e, (std::uint64_t{i} << 1 | kRecvTag) + 2);
    c.recv_armed = true;
    ++in_flight_;
  }

  void try_send(std::uint32_t i, std::uint64_t t) {
    ClientConn& c = clients_[i];
    if (c.send_busy || c.dead || c.pending == 0) return;
    const std::uint32_t size = params_.message_size;
    std::uint8_t* out = c.tx.get();
    fill_echo_messages(out, i, c.sent_msgs, c.pending, size);
    for (std::uint32_t m = 0; m < c.pending; ++m) c.t_sent[(c.sent_msgs + m) % params_.in_flight] = t;
    c.sent_msgs += c.pending;
    messages_sent_ += c.pending;
    c.send_len = c.pending * size;
    c.send_done = 0;
    c.pending = 0;
    submit_send(i);
  }

  void submit_send(std::uint32_t i) {
    ClientConn& c = clients_[i];
    io_uring_sqe* e = sqe();
    io_uring_prep_send(e, c.fd, c.tx.get() + c.send_done, c.send_len - c.send_done, MSG_NOSIGNAL);
    io_uring_sqe_set_data64(e, (std::uint64_t{i} << 1) + 2);
    c.send_busy = true;
    ++in_flight_;
  }

  void handle(io_uring_cqe* cqe, std::uint64_t t) {
    const std::uint64_t tag = io_uring_cqe_get_data64(cqe);
    if (tag == 0) return;  // a cancel
    --in_flight_;
    const std::uint32_t i = static_cast<std::uint32_t>((tag - 2) >> 1);
    const bool is_recv = ((tag - 2) & kRecvTag) != 0;
    ClientConn& c = clients_[i];
    const int res = cqe->res;
    if (!is_recv) {
      c.send_busy = false;
      if (res <= 0) {
        if (res != -ECANCELED) ++generator_errors_;
        c.dead = true;
        return;
      }
      c.send_done += static_cast<std::uint32_t>(res);
      if (c.send_done < c.send_len) {
        submit_send(i);
      } else {
        try_send(i, t);
      }
      return;
    }
    c.recv_armed = false;
    if (res <= 0) {
      if (res == 0) {
        ++unexpected_eof_;
      } else if (res != -ECANCELED) {
        ++generator_errors_;
      }
      c.dead = true;
      return;
    }
    const std::uint8_t* in = c.rx.get();
    mismatched_bytes_ += count_echo_mismatches(in, static_cast<std::size_t>(res), i, c.rx_bytes);
    c.rx_bytes += static_cast<std::uint64_t>(res);
    bytes_verified_ += static_cast<std::uint64_t>(res);
    const bool measuring = env_.phase->load(std::memory_order_relaxed) == kMeasuring;
    const bool stopping = env_.phase->load(std::memory_order_relaxed) == kStopping;
    const std::uint64_t size = params_.message_size;
    while ((c.done_msgs + 1) * size <= c.rx_bytes) {
      const std::uint64_t sent_at = c.t_sent[c.done_msgs % params_.in_flight];
      if (measuring) {
        round_trip_.record(t >= sent_at ? t - sent_at : 0);
        ++window_round_trips_;
      }
      ++c.done_msgs;
      ++messages_verified_;
      if (!stopping) ++c.pending;
    }
    arm_recv(i);
    try_send(i, t);
  }

  SocketParams params_;
  RunEnv env_;
  int listen_fd_ = -1;
  std::vector<ServerConn> server_;
  std::vector<ClientConn> clients_;
  io::SourceSet sources_;  // connection i's operations go to ring i mod R (R = 1 when shared)
  std::atomic<std::uint64_t> open_conns_{0};
  std::atomic<std::uint64_t> server_errors_{0};
  std::atomic<std::uint64_t> drain_timeouts_{0};
  std::atomic<std::uint64_t> direct_sends_{0};
  bool direct_send_ = std::getenv("IOCPBENCH_RING_SENDS") == nullptr;

  std::thread generator_;
  std::atomic<bool> generator_done_{false};
  std::atomic<bool> force_exit_{false};
  std::string generator_description_;
  io_uring* ring_ = nullptr;
  std::uint64_t in_flight_ = 0;
  // Written by the generator thread only; read after it has been joined.
  metrics::Histogram round_trip_;
  std::uint64_t messages_sent_ = 0, messages_verified_ = 0, bytes_verified_ = 0;
  std::uint64_t window_round_trips_ = 0, mismatched_bytes_ = 0, generator_errors_ = 0;
  std::uint64_t unexpected_eof_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_socket_workload(const SocketParams& params) {
  return std::make_unique<SocketWorkload>(params);
}

}  // namespace iocpbench::workloads
