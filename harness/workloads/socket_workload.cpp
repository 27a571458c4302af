// The socket workload, on every OS: a loopback TCP echo server whose I/O runs through the
// socket transport (io/socket_io.hpp) into the port, and a load generator on its own thread
// with its own completion queue.
//
// Server, per connection: a receive is kept armed; its completion is a port packet; the worker
// runs the handler and echoes the bytes back, then re-arms the receive (how the echo goes out
// is the transport's: each message costs one packet, as an IOCP echo server with
// skip-on-success sends would).
// Load generator: `messages_in_flight` messages per connection; each message's bytes are a
// function of (connection, stream position), so every echoed byte is verified; the round trip
// (send -> whole echo received) is the end-to-end latency. One clock read per completion batch.
// At stop it sends nothing new, waits for its in-flight echoes, then shuts the sending side
// down; each server receive then completes with 0 bytes and the connection is done.
// Open loop (env.open_loop set): nothing is sent at start. The pacer's slot s belongs to
// connection s mod connections; at the slot's intended time the pacer sends one message on
// it with a plain blocking send (io/socket_io.hpp: client_send_now) and records the slot in the
// connection's FIFO. The generator thread only receives: each whole echoed message takes the
// oldest slot off its connection's FIFO (TCP keeps a connection's order), is timed from the
// slot's intended time (response) and issue time (service), and frees the slot. At stop the
// generator waits until the pacer has been joined and every sent message is back.
// Per-thread dispatch (DiskSpd's model, Linux): connection i belongs to worker i mod S, whose
// own ring is submitted and reaped by the worker itself into its own port, so a connection's
// receives and echoes never leave the thread that handles them.
// The in-flight depth (workload_stats.inflight_depth, workloads/inflight_depth.hpp) counts the
// server's connections whose I/O is with the transport: a receive armed, or an echo the socket
// did not take at once (Windows: its send; Linux: the send and the receive linked behind it),
// from just before it is handed over until a worker takes its packet from the port. Its bound
// is the connection count: one receive kept armed per connection.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "io/socket_io.hpp"
#include "metrics/clock.hpp"
#include "platform/platform.hpp"
#include "workloads/echo_pattern.hpp"
#include "workloads/inflight_depth.hpp"
#include "workloads/transport_env.hpp"
#include "engine/affinity.hpp"
#include "engine/workload.hpp"
#include "workloads/workloads.hpp"

namespace iocpbench::workloads {
namespace {

struct ServerConn {
  std::atomic<bool> closed{false};  // a failed send and its cancelled recv may both report
};

struct ClientConn {
  std::unique_ptr<std::uint8_t[]> tx, rx;
  // Open loop: written by the pacer (sent, fifo), read by the generator after the echo.
  std::atomic<std::uint64_t> open_sent{0};
  std::unique_ptr<std::atomic<std::uint32_t>[]> fifo;  // slot of message m at [m % depth]
  std::atomic<bool> open_dead{false};
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
    const io::TransportEnv transport =
        transport_env(env, params_.completion_path, WorkloadKind::socket);
    io::require_dispatch(transport, "socket");
    const unsigned n = params_.connections;
    capacity_ = std::size_t{params_.message_size} * params_.in_flight;
    io::SocketIoOptions options;
    options.connections = n;
    options.buffer_bytes = capacity_;
    server_ = std::vector<ServerConn>(n);
    clients_ = std::vector<ClientConn>(n);
    if (env.open_loop != nullptr) {
      fifo_depth_ = (env.open_loop->slots() + n - 1) / n;  // slot s is connection s mod n's
      pacer_tx_ = std::make_unique<std::uint8_t[]>(params_.message_size);
    }
    for (auto& c : clients_) {
      c.tx = std::make_unique<std::uint8_t[]>(capacity_);
      c.rx = std::make_unique<std::uint8_t[]>(capacity_);
      c.t_sent.assign(params_.in_flight, 0);
      if (fifo_depth_ > 0) c.fifo = std::make_unique<std::atomic<std::uint32_t>[]>(fifo_depth_);
    }
    if (env.metrics) depth_ = std::make_unique<InflightDepth>(n, metrics::now_ns());
    io_->open(options, transport);
    open_conns_.store(n);
  }

  void start() override {
    const std::uint64_t now = metrics::now_ns();
    for (std::uint32_t i = 0; i < server_.size(); ++i) {
      if (!arm_recv(i, now)) close_conn(i);
    }
    std::promise<std::string> ready;
    auto started = ready.get_future();
    const unsigned slot =
        env_.load_placer != nullptr ? env_.load_placer->reserve("socket load generator") : 0;
    generator_ = std::thread([this, &ready, slot] {
      if (env_.load_placer != nullptr) env_.load_placer->pin_current(slot);
      generator(ready);
    });
    const std::string problem = started.get();
    if (!problem.empty()) {
      generator_.join();
      throw std::runtime_error(problem);
    }
  }

  Completion on_packet(const port::Packet& packet, WorkerContext&) override {
    const io::SocketDone d = io_->done(packet);
    count_depth(-1, metrics::now_ns());  // every packet ends one connection's I/O
    Completion c;
    c.t_insert_ns = d.t_insert_ns;  // latency: the generator's round trips
    c.bytes = d.bytes;
    c.error = d.status != 0;
    c.counted = !c.error && !d.send && d.bytes > 0;
    if (c.error) server_errors_.fetch_add(1, std::memory_order_relaxed);
    return c;
  }

  void after_handler(const port::Packet& packet, const Completion& c, std::uint64_t t_done_ns,
                     WorkerContext&) override {
    const auto conn = static_cast<std::uint32_t>(packet.key);
    // The depth's clock: the handler's end where the pool read it.
    const std::uint64_t now = depth_ && t_done_ns == 0 ? metrics::now_ns() : t_done_ns;
    if (!c.counted) {
      // An echo that did not go out at once and now has (whole: re-arm the receive).
      if (!c.error && io_->done(packet).send) {
        if (!io_->send_complete(conn, c.bytes) || !arm_recv(conn, now)) close_conn(conn);
        return;
      }
      close_conn(conn);  // end of stream, or a failed receive/send: the connection is done
      return;
    }
    // Echo what arrived (always, even when stopping: the generator waits for its in-flight
    // messages).
    switch (io_->echo(conn, packet.bytes)) {
      case io::Echo::pending:
        // Counted after the fact: its packet may be counted first, a moment below 0.
        count_depth(+1, now);
        return;
      case io::Echo::sent:
        if (!arm_recv(conn, now)) close_conn(conn);
        return;
      case io::Echo::error:
        server_errors_.fetch_add(1, std::memory_order_relaxed);
        close_conn(conn);
        return;
      case io::Echo::closed:
        close_conn(conn);
        return;
    }
  }

  bool drain(std::chrono::steady_clock::time_point deadline) override {
    // The generator stops sending, collects its in-flight echoes and half-closes; each server
    // connection then sees end of stream.
    while (!generator_done_.load() || open_conns_.load() != 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        force_exit_.store(true);
        io_->shutdown_server();
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
    io_->close();  // cancels anything left in flight, stops the sources, closes the sockets
  }

  nlohmann::json stats(double window_s) const override {
    nlohmann::json j = io_->stats();  // completion_source and the OS's own counters
    j.update({{"connections", params_.connections},
              {"messages_sent", env_.open_loop != nullptr ? pacer_sent_ : messages_sent_},
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
              {"load_generator",
               {{"design", io_->client_description()},
                {"priority", generator_priority_}}}});
    put_inflight_depth(j, depth_.get(),
                       {"--connections (one receive kept armed per connection)",
                        "a connection whose receive, or echo not sent at once, is with the "
                        "transport and not yet taken from the port by a worker"});
    return j;
  }

  // The workers' own I/O, as the transport sees it (per-thread ports: worker w fetches the
  // completions of connections w, w+R, ...).
  port::WorkerIo* worker_io() const override { return io_.get(); }

  std::string stall_report() const override {
    io::TransportProgress s;
    if (!io_->progress(s)) return {};
    return std::to_string(open_conns_.load()) + " of " + std::to_string(server_.size()) +
           " server connections open; completion source: " + std::to_string(s.completions) +
           " completed, " + std::to_string(s.posted) + " posted to the port" +
           (generator_done_.load() ? "; load generator finished" : "; load generator running");
  }

  std::uint64_t errors() const override {
    return (mismatched_bytes_ > 0 ? 1 : 0) + generator_errors_ + unexpected_eof_ +
           drain_timeouts_.load() + io_->errors();
  }

  const metrics::Histogram* own_latency() const override { return &round_trip_; }

  // The bound the open loop's slots give by default: the closed loop's messages in flight are
  // its concurrency, while the open loop's bound is there only to catch overload.
  static constexpr unsigned kMinOpenLoopSlots = 64;
  unsigned open_loop_slots() const override {
    return std::max(kMinOpenLoopSlots, params_.connections * params_.in_flight);
  }

  // The pacer's thread, alone: one message on the slot's connection, sent now.
  bool issue(unsigned slot) override {
    const std::uint32_t conn = slot % static_cast<std::uint32_t>(clients_.size());
    ClientConn& c = clients_[conn];
    if (c.open_dead.load(std::memory_order_relaxed)) return false;
    const std::uint64_t m = c.open_sent.load(std::memory_order_relaxed);
    const std::uint32_t size = params_.message_size;
    fill_echo_messages(pacer_tx_.get(), conn, m, 1, size);
    c.fifo[m % fifo_depth_].store(slot, std::memory_order_relaxed);
    c.open_sent.store(m + 1, std::memory_order_release);  // before the bytes can come back
    if (!io_->client_send_now(conn, pacer_tx_.get(), size)) {
      // The stream is broken (part of the message may have gone): nothing more on it.
      c.open_dead.store(true, std::memory_order_relaxed);
      ++pacer_send_failures_;
      return false;  // the pacer frees the slot and counts the failure
    }
    ++pacer_sent_;
    return true;
  }

 private:
  // Arms the receive, counted in flight from just before (its packet may be taken at once).
  bool arm_recv(std::uint32_t conn, std::uint64_t t_ns) {
    count_depth(+1, t_ns);
    if (io_->arm_recv(conn)) return true;
    count_depth(-1, t_ns);  // refused at once: no packet will come
    return false;
  }

  void count_depth(int delta, std::uint64_t t_ns) {
    if (!depth_) return;
    depth_->change(delta, t_ns, env_.phase->load(std::memory_order_relaxed) == kMeasuring);
  }

  void close_conn(std::uint32_t conn) {
    if (!server_[conn].closed.exchange(true)) open_conns_.fetch_sub(1, std::memory_order_seq_cst);
  }

  // ---- the load generator (its own thread and completion queue) ----

  void generator(std::promise<std::string>& ready) {
    env_.roles->enrol(metrics::Role::load_generator);
    // The generator stands in for clients on other machines: at the workers' own priority it
    // held a CPU that a worker woken from its block then waited for, and that wait read as
    // blocking (socket, b = 0.25, pool N: 0.30-0.31 achieved; 0.25 at nice 19).
    if (env_.open_loop != nullptr) {
      // Open loop: this thread stamps each echo's arrival, the end of its response time; at
      // nice 19 a busy worker delayed the stamp and the delay read as the server's. It runs at
      // the pacer's priority instead (engine/open_loop.hpp).
      std::string refused;
      if (env_.open_loop->realtime()) generator_priority_ = platform::raise_current_thread_to_realtime(1, &refused);
      if (generator_priority_.empty()) generator_priority_ = refused.empty() ? "normal" : "normal (" + refused + ")";
    } else {
      generator_priority_ = platform::lower_current_thread_priority();
      if (generator_priority_.empty()) generator_priority_ = "normal (lowering refused)";
    }
    const std::string problem = io_->start_client();
    if (!problem.empty()) {
      generator_done_.store(true);
      ready.set_value(problem);
      return;
    }
    ready.set_value({});
    generate();
    io_->stop_client();
    generator_done_.store(true);
  }

  // Sends and verifies until the run stops: then, once every in-flight message is back (or 2 s
  // have passed), half-closes every connection so that the server sees end of stream.
  void generate() {
    std::uint64_t t = metrics::now_ns();
    const bool open = env_.open_loop != nullptr;
    for (std::uint32_t i = 0; i < clients_.size(); ++i) {
      if (!open) {  // open loop: the pacer sends
        clients_[i].pending = params_.in_flight;
        try_send(i, t);
      }
      arm_client_recv(i);
    }
    std::uint64_t stop_deadline = 0;
    std::vector<io::ClientDone> done;
    while (!force_exit_.load(std::memory_order_relaxed)) {
      if (env_.phase->load(std::memory_order_acquire) == kStopping) {
        if (stop_deadline == 0) stop_deadline = metrics::now_ns() + 2'000'000'000ull;
        const bool pacer_done = !open || env_.open_loop->stopped();
        if (open && !pacer_done) stop_deadline = metrics::now_ns() + 2'000'000'000ull;
        bool quiet = pacer_done;
        for (const auto& c : clients_) quiet = quiet && (c.dead || c.done_msgs == sent(c));
        if (quiet || metrics::now_ns() > stop_deadline) {
          if (!quiet) ++generator_errors_;
          for (std::uint32_t i = 0; i < clients_.size(); ++i) io_->client_shutdown_send(i);
          return;
        }
      }
      if (!io_->client_wait(20, done)) {  // wake now and then to see the phase change
        ++generator_errors_;
        return;
      }
      t = metrics::now_ns();
      for (const io::ClientDone& d : done) handle(d, t);
    }
  }

  std::uint64_t sent(const ClientConn& c) const {
    return env_.open_loop != nullptr ? c.open_sent.load(std::memory_order_acquire) : c.sent_msgs;
  }

  void arm_client_recv(std::uint32_t i) {
    ClientConn& c = clients_[i];
    c.recv_armed = true;
    if (!io_->client_recv(i, c.rx.get(), capacity_)) {
      c.recv_armed = false;
      ++generator_errors_;
      c.dead = true;
    }
  }

  void try_send(std::uint32_t i, std::uint64_t t) {
    ClientConn& c = clients_[i];
    if (c.send_busy || c.dead || c.pending == 0) return;
    const std::uint32_t size = params_.message_size;
    fill_echo_messages(c.tx.get(), i, c.sent_msgs, c.pending, size);
    for (std::uint32_t m = 0; m < c.pending; ++m)
      c.t_sent[(c.sent_msgs + m) % params_.in_flight] = t;
    c.sent_msgs += c.pending;
    messages_sent_ += c.pending;
    c.send_len = c.pending * size;
    c.send_done = 0;
    c.pending = 0;
    send_rest(i);
  }

  void send_rest(std::uint32_t i) {
    ClientConn& c = clients_[i];
    c.send_busy = true;
    if (!io_->client_send(i, c.tx.get() + c.send_done, c.send_len - c.send_done)) {
      c.send_busy = false;
      ++generator_errors_;
      c.dead = true;
    }
  }

  void handle(const io::ClientDone& d, std::uint64_t t) {
    ClientConn& c = clients_[d.conn];
    if (!d.recv) {
      c.send_busy = false;
      if (d.failed || d.bytes == 0) {
        if (!d.cancelled) ++generator_errors_;
        c.dead = true;
        return;
      }
      c.send_done += d.bytes;
      if (c.send_done < c.send_len) {
        send_rest(d.conn);
      } else {
        try_send(d.conn, t);
      }
      return;
    }
    c.recv_armed = false;
    if (d.failed || d.bytes == 0) {
      if (!d.failed) {
        ++unexpected_eof_;
      } else if (!d.cancelled) {
        ++generator_errors_;
      }
      c.dead = true;
      return;
    }
    verify(d.conn, d.bytes, t);
    arm_client_recv(d.conn);
    if (env_.open_loop == nullptr) try_send(d.conn, t);
  }

  // Checks the echoed bytes, records the round trip of every message they complete.
  void verify(std::uint32_t i, std::uint32_t bytes, std::uint64_t t) {
    ClientConn& c = clients_[i];
    mismatched_bytes_ += count_echo_mismatches(c.rx.get(), bytes, i, c.rx_bytes);
    c.rx_bytes += bytes;
    bytes_verified_ += bytes;
    const int phase = env_.phase->load(std::memory_order_relaxed);
    const std::uint64_t size = params_.message_size;
    if (env_.open_loop != nullptr) {
      verify_open(c, phase, t);
      return;
    }
    while ((c.done_msgs + 1) * size <= c.rx_bytes) {
      const std::uint64_t sent_at = c.t_sent[c.done_msgs % params_.in_flight];
      if (phase == kMeasuring) {
        round_trip_.record(t >= sent_at ? t - sent_at : 0);
        ++window_round_trips_;
      }
      ++c.done_msgs;
      ++messages_verified_;
      if (phase != kStopping) ++c.pending;
    }
  }

  // Open loop: every whole message echoed frees its slot with the time it came back; the open
  // loop times it from there (engine/request_ledger.hpp).
  void verify_open(ClientConn& c, int phase, std::uint64_t t) {
    const std::uint64_t size = params_.message_size;
    const std::uint64_t sent_msgs = c.open_sent.load(std::memory_order_acquire);
    while ((c.done_msgs + 1) * size <= c.rx_bytes && c.done_msgs < sent_msgs) {
      const std::uint32_t slot = c.fifo[c.done_msgs % fifo_depth_].load(std::memory_order_relaxed);
      if (phase == kMeasuring) ++window_round_trips_;
      ++c.done_msgs;
      ++messages_verified_;
      env_.open_loop->release(slot, t);
    }
  }

  SocketParams params_;
  RunEnv env_;
  std::size_t capacity_ = 0;
  std::vector<ServerConn> server_;
  std::vector<ClientConn> clients_;
  // The sockets, the server's completion source(s), the generator's queue.
  std::unique_ptr<io::SocketIo> io_ = io::make_socket_io();
  std::atomic<std::uint64_t> open_conns_{0};
  std::atomic<std::uint64_t> server_errors_{0};
  std::atomic<std::uint64_t> drain_timeouts_{0};
  std::unique_ptr<InflightDepth> depth_;  // null with metrics off

  std::thread generator_;
  std::atomic<bool> generator_done_{false};
  std::string generator_priority_;  // set by the generator thread before it is ready
  std::atomic<bool> force_exit_{false};
  // Written by the generator thread only; read after it has been joined.
  metrics::Histogram round_trip_;  // closed loop: send -> whole echo received
  std::uint64_t messages_sent_ = 0, messages_verified_ = 0, bytes_verified_ = 0;
  std::uint64_t window_round_trips_ = 0, mismatched_bytes_ = 0, generator_errors_ = 0;
  std::uint64_t unexpected_eof_ = 0;
  // The open loop's pacer thread only; read after it has been joined.
  std::uint32_t fifo_depth_ = 0;
  std::unique_ptr<std::uint8_t[]> pacer_tx_;
  std::uint64_t pacer_sent_ = 0, pacer_send_failures_ = 0;
};

}  // namespace

std::unique_ptr<Workload> make_socket_workload(const SocketParams& params) {
  return std::make_unique<SocketWorkload>(params);
}

}  // namespace iocpbench::workloads
