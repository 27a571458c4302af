// The socket workload on Windows: loopback TCP echo over overlapped Winsock.
//
// Set-up (open): a listening socket on 127.0.0.1:0; per connection an AcceptEx on the server
// side and a ConnectEx from a bound client socket, both waited on through their events, then
// SO_UPDATE_ACCEPT_CONTEXT / SO_UPDATE_CONNECT_CONTEXT and TCP_NODELAY.
//
// Server side (the pool): every server socket is associated with the run's port (`win32`: the
// kernel queues its completions) or with io::OverlappedSource's private IOCP (other ports: its
// thread forwards them), and uses FILE_SKIP_COMPLETION_PORT_ON_SUCCESS when Windows grants it.
// One WSARecv is armed per connection; its completion is the packet. The worker echoes what
// arrived with WSASend and re-arms the WSARecv once the send is done:
//   - a WSASend that succeeds at once queues no packet (skip on success), so the worker
//     re-arms the receive inline; a pending one completes as an uncounted packet, and the
//     worker that takes it re-arms the receive (the Linux version links send -> recv);
//   - a WSARecv that succeeds at once queues no packet either: the issuer posts that
//     completion into the port itself, so every received message is still one packet;
//   - skip mode is asked for only on a socket whose provider has IFS handles (XP1_IFS_HANDLES
//     in SO_PROTOCOL_INFOW): the SetFileCompletionNotificationModes docs say the mode is
//     compatible only with IFS providers, and a non-IFS layered provider (LSP) may grant the
//     call and then still queue a packet for an immediate success, which the inline paths
//     would handle a second time. On such a socket, or where Windows refuses the mode, an
//     immediate success queues its packet as usual and is left to it.
// An immediate failure queues nothing: the connection is closed and counted.
//
// The load generator runs on its own thread (`load_generator` role) with its own IOCP for the
// client sockets: it keeps `messages_in_flight` messages per connection outstanding, verifies
// every echoed byte (a function of connection and stream position) and measures the round
// trip. At stop it sends nothing new, waits for its in-flight echoes, then shuts the sending
// side down; each server receive then completes with 0 bytes and the connection is done.

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <winsock2.h>
#include <mswsock.h>
#include <ws2tcpip.h>
#include <windows.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.hpp"
#include "io/overlapped_windows.hpp"
#include "metrics/clock.hpp"
#include "workloads/echo_pattern.hpp"
#include "engine/workload.hpp"
#include "workloads/workloads.hpp"

namespace iocpbench::workloads {
namespace {

enum OpKind : std::uint32_t { kRecv = 0, kSend = 1 };

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + " failed: Winsock error " + std::to_string(WSAGetLastError()));
}

void winsock_startup() {
  static std::once_flag once;
  static int rc = 0;
  std::call_once(once, [] {
    WSADATA data;
    rc = WSAStartup(MAKEWORD(2, 2), &data);
  });
  if (rc != 0) throw std::runtime_error("WSAStartup failed: " + std::to_string(rc));
}

SOCKET overlapped_socket() {
  SOCKET s = WSASocketW(AF_INET, SOCK_STREAM, IPPROTO_TCP, nullptr, 0, WSA_FLAG_OVERLAPPED);
  if (s == INVALID_SOCKET) fail("WSASocket");
  return s;
}

template <typename Fn>
Fn extension(SOCKET s, GUID guid, const char* name) {
  Fn fn = nullptr;
  DWORD bytes = 0;
  if (WSAIoctl(s, SIO_GET_EXTENSION_FUNCTION_POINTER, &guid, sizeof guid, &fn, sizeof fn, &bytes,
               nullptr, nullptr) != 0 ||
      fn == nullptr) {
    fail(std::string("WSAIoctl(") + name + ")");
  }
  return fn;
}

// True when the socket's provider hands out IFS handles (a real file handle the kernel's I/O
// manager completes): the one case where FILE_SKIP_COMPLETION_PORT_ON_SUCCESS is safe.
bool has_ifs_handles(SOCKET s) {
  WSAPROTOCOL_INFOW info{};
  int size = sizeof info;
  if (getsockopt(s, SOL_SOCKET, SO_PROTOCOL_INFOW, reinterpret_cast<char*>(&info), &size) != 0) {
    return false;  // unknown provider: take the safe path (packets as usual)
  }
  return (info.dwServiceFlags1 & XP1_IFS_HANDLES) != 0;
}

void set_nodelay(SOCKET s) {
  const BOOL one = TRUE;
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, reinterpret_cast<const char*>(&one), sizeof one);
}

struct ServerConn {
  SOCKET s = INVALID_SOCKET;
  io::WinOp recv, send;
  std::unique_ptr<char[]> buffer;
  std::uint32_t send_len = 0;
  bool skip = false;  // FILE_SKIP_COMPLETION_PORT_ON_SUCCESS granted
  std::atomic<bool> closed{false};
};

struct ClientConn {
  SOCKET s = INVALID_SOCKET;
  io::WinOp recv, send;
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
    if (!env.worker_ports.empty()) {
      throw BadInput{"--dispatch", "per-thread is not implemented for the socket workload on "
                                        "Windows yet (shared is)"};
    }
    winsock_startup();
    const unsigned n = params_.connections;
    capacity_ = std::size_t{params_.message_size} * params_.in_flight;
    const sockaddr_in addr = listen_on_loopback(n);
    const Connector connector{
        extension<LPFN_ACCEPTEX>(listener_, WSAID_ACCEPTEX, "AcceptEx"),
        extension<LPFN_CONNECTEX>(listener_, WSAID_CONNECTEX, "ConnectEx"),
        CreateEventW(nullptr, TRUE, FALSE, nullptr), CreateEventW(nullptr, TRUE, FALSE, nullptr)};
    if (connector.accepted == nullptr || connector.connected == nullptr) fail("CreateEvent");

    server_ = std::vector<ServerConn>(n);
    clients_ = std::vector<ClientConn>(n);
    for (unsigned i = 0; i < n; ++i) connect_pair(i, addr, connector);
    associate_sockets(env);
    open_conns_.store(n);
  }

  void start() override {
    for (auto& s : server_) arm_recv(s);
    std::promise<void> ready;
    auto started = ready.get_future();
    generator_ = std::thread([this, &ready] { generator(ready); });
    started.get();
  }

  Completion on_packet(const port::Packet& packet, WorkerContext&) override {
    const auto* op = static_cast<const io::WinOp*>(packet.context);
    Completion c;
    c.t_insert_ns = op->t_insert_ns;  // latency: the generator's round trips
    c.bytes = packet.bytes;
    c.error = packet.status != 0;
    c.counted = !c.error && op->kind == kRecv && packet.bytes > 0;
    if (c.error) {
      server_errors_.fetch_add(1, std::memory_order_relaxed);
      last_error_.store(packet.status, std::memory_order_relaxed);
    }
    return c;
  }

  void after_handler(const port::Packet& packet, const Completion& c, std::uint64_t,
                     WorkerContext&) override {
    ServerConn& s = server_[packet.key];
    const auto* op = static_cast<const io::WinOp*>(packet.context);
    if (op->kind == kSend) {  // a send that did not complete at once
      if (c.error || packet.bytes != s.send_len) {
        if (!c.error) short_sends_.fetch_add(1, std::memory_order_relaxed);
        close_conn(s);
        return;
      }
      arm_recv(s);
      return;
    }
    if (!c.counted) {  // end of stream, or a failed receive: the connection is done
      close_conn(s);
      return;
    }
    echo(s, packet.bytes);  // always, even when stopping: the generator awaits its echoes
  }

  bool drain(std::chrono::steady_clock::time_point deadline) override {
    while (!generator_done_.load() || open_conns_.load() != 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        force_exit_.store(true);
        for (auto& s : server_) shutdown(s.s, SD_BOTH);
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
    // Receives still armed (a drain that timed out) are cancelled and waited for before their
    // buffers go away; the packets they queue stay in the port, which is closed next.
    for (auto& s : server_) {
      if (s.s != INVALID_SOCKET) CancelIoEx(reinterpret_cast<HANDLE>(s.s), nullptr);
    }
    const std::uint64_t deadline = metrics::now_ns() + 5'000'000'000ull;
    for (auto& s : server_) {
      while ((s.recv.pending() || s.send.pending()) && metrics::now_ns() < deadline) Sleep(1);
    }
    if (source_) {
      source_->stop();
      source_stats_ = source_->stats();
      post_failures_ = source_->post_failures();
      source_.reset();
    }
    for (auto& s : server_) {
      if (s.s != INVALID_SOCKET) closesocket(s.s);
      s.s = INVALID_SOCKET;
    }
    for (auto& c : clients_) {
      if (c.s != INVALID_SOCKET) closesocket(c.s);
      c.s = INVALID_SOCKET;
    }
    if (listener_ != INVALID_SOCKET) closesocket(listener_);
    listener_ = INVALID_SOCKET;
    if (generator_port_ != nullptr) CloseHandle(generator_port_);
    generator_port_ = nullptr;
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
            {"last_server_error", last_error_.load()},
            {"short_sends", short_sends_.load()},
            {"drain_timeouts", drain_timeouts_.load()},
            {"skip_completion_port_on_success_sockets", skip_granted_},
            {"non_ifs_provider_sockets", non_ifs_sockets_},
            {"immediate",
             {{"sends_completed_inline", sends_inline_.load()},
              {"sends_pending", sends_pending_.load()},
              {"recvs_completed_inline_posted", recvs_inline_.load()},
              {"recvs_pending", recvs_pending_.load()},
              {"failures", immediate_failures_.load()}}},
            {"completion_source", source_ ? source_->stats() : source_stats_},
            {"load_generator",
             {{"design",
               "own thread, own IOCP for the client sockets (GetQueuedCompletionStatusEx, one "
               "clock read per batch), WSASend/WSARecv"}}}};
  }

  std::uint64_t errors() const override {
    return (mismatched_bytes_ > 0 ? 1 : 0) + generator_errors_ + unexpected_eof_ +
           drain_timeouts_.load() + short_sends_.load() + immediate_failures_.load() +
           (source_ ? source_->post_failures() : post_failures_);
  }

  const metrics::Histogram* own_latency() const override { return &round_trip_; }

 private:
  // AcceptEx, ConnectEx and the two events open() waits on for each connection.
  struct Connector {
    LPFN_ACCEPTEX accept_ex;
    LPFN_CONNECTEX connect_ex;
    HANDLE accepted, connected;
    ~Connector() {
      if (accepted) CloseHandle(accepted);
      if (connected) CloseHandle(connected);
    }
  };

  // The listener on an ephemeral loopback port; returns its address.
  sockaddr_in listen_on_loopback(unsigned connections) {
    listener_ = overlapped_socket();
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only: nothing reaches a network
    if (bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("bind");
    if (listen(listener_, static_cast<int>(std::min(connections, 1024u))) != 0) fail("listen");
    int len = sizeof addr;
    if (getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) fail("getsockname");
    return addr;
  }

  // Connection i: a client socket connected to a server socket accepted for it (both
  // overlapped, no delay), and their buffers.
  void connect_pair(unsigned i, const sockaddr_in& addr, const Connector& connector) {
    char accept_buffer[2 * (sizeof(sockaddr_in) + 16)];
    ServerConn& sc = server_[i];
    ClientConn& cc = clients_[i];
    sc.s = overlapped_socket();
    cc.s = overlapped_socket();
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(cc.s, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0) fail("bind (client)");

    OVERLAPPED a{}, c{};
    a.hEvent = connector.accepted;
    c.hEvent = connector.connected;
    ResetEvent(connector.accepted);
    ResetEvent(connector.connected);
    DWORD bytes = 0;
    if (!connector.accept_ex(listener_, sc.s, accept_buffer, 0, sizeof(sockaddr_in) + 16,
                             sizeof(sockaddr_in) + 16, &bytes, &a) &&
        WSAGetLastError() != ERROR_IO_PENDING) {
      fail("AcceptEx");
    }
    if (!connector.connect_ex(cc.s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr,
                              nullptr, 0, nullptr, &c) &&
        WSAGetLastError() != ERROR_IO_PENDING) {
      fail("ConnectEx");
    }
    DWORD flags = 0;
    if (!WSAGetOverlappedResult(cc.s, &c, &bytes, TRUE, &flags)) fail("ConnectEx (result)");
    if (!WSAGetOverlappedResult(listener_, &a, &bytes, TRUE, &flags)) fail("AcceptEx (result)");
    if (setsockopt(sc.s, SOL_SOCKET, SO_UPDATE_ACCEPT_CONTEXT,
                   reinterpret_cast<const char*>(&listener_), sizeof listener_) != 0) {
      fail("setsockopt(SO_UPDATE_ACCEPT_CONTEXT)");
    }
    if (setsockopt(cc.s, SOL_SOCKET, SO_UPDATE_CONNECT_CONTEXT, nullptr, 0) != 0) {
      fail("setsockopt(SO_UPDATE_CONNECT_CONTEXT)");
    }
    set_nodelay(sc.s);
    set_nodelay(cc.s);

    sc.buffer = std::make_unique<char[]>(capacity_);
    sc.recv.kind = kRecv;
    sc.send.kind = kSend;
    sc.recv.index = sc.send.index = i;
    cc.tx = std::make_unique<std::uint8_t[]>(capacity_);
    cc.rx = std::make_unique<std::uint8_t[]>(capacity_);
    cc.t_sent.assign(params_.in_flight, 0);
    cc.recv.kind = kRecv;
    cc.send.kind = kSend;
    cc.recv.index = cc.send.index = i;
  }

  // The server sockets into the run's port (skipping the port on inline success where the
  // socket allows it); the client sockets into the load generator's own port.
  void associate_sockets(const RunEnv& env) {
    const unsigned n = static_cast<unsigned>(server_.size());
    source_ = std::make_unique<io::OverlappedSource>(*env.port, env.roles);
    for (unsigned i = 0; i < n; ++i) {
      ServerConn& sc = server_[i];
      source_->associate(reinterpret_cast<HANDLE>(sc.s), i);
      const bool ifs = has_ifs_handles(sc.s);
      non_ifs_sockets_ += ifs ? 0 : 1;
      sc.skip = ifs && SetFileCompletionNotificationModes(reinterpret_cast<HANDLE>(sc.s),
                                                          FILE_SKIP_COMPLETION_PORT_ON_SUCCESS) !=
                           FALSE;
      skip_granted_ += sc.skip ? 1 : 0;
    }
    generator_port_ = CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 1);
    if (generator_port_ == nullptr) fail("CreateIoCompletionPort (load generator)");
    for (unsigned i = 0; i < n; ++i) {
      if (CreateIoCompletionPort(reinterpret_cast<HANDLE>(clients_[i].s), generator_port_, i, 0) ==
          nullptr) {
        fail("CreateIoCompletionPort (client socket)");
      }
    }
  }

  void close_conn(ServerConn& s) {
    if (!s.closed.exchange(true)) open_conns_.fetch_sub(1, std::memory_order_seq_cst);
  }

  void arm_recv(ServerConn& s) {
    s.recv.reset();
    WSABUF buf{static_cast<ULONG>(capacity_), s.buffer.get()};
    DWORD flags = 0;
    if (WSARecv(s.s, &buf, 1, nullptr, &flags, &s.recv.ov, nullptr) == 0) {
      if (!s.skip) {  // its packet is queued as usual
        recvs_pending_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      // Done at once: with skip on success no packet is queued, so post it here.
      recvs_inline_.fetch_add(1, std::memory_order_relaxed);
      source_->post(s.recv, static_cast<std::uint32_t>(s.recv.ov.InternalHigh), 0, s.recv.index);
      return;
    }
    const int error = WSAGetLastError();
    if (error == WSA_IO_PENDING) {
      recvs_pending_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    immediate_failures_.fetch_add(1, std::memory_order_relaxed);
    last_error_.store(static_cast<std::uint32_t>(error), std::memory_order_relaxed);
    close_conn(s);
  }

  void echo(ServerConn& s, std::uint32_t bytes) {
    s.send.reset();
    s.send_len = bytes;
    WSABUF buf{bytes, s.buffer.get()};
    if (WSASend(s.s, &buf, 1, nullptr, 0, &s.send.ov, nullptr) == 0) {
      if (!s.skip) {  // its packet is queued as usual; the worker that takes it re-arms
        sends_pending_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      // Done at once and no packet queued (skip on success): handled inline.
      sends_inline_.fetch_add(1, std::memory_order_relaxed);
      if (static_cast<std::uint32_t>(s.send.ov.InternalHigh) != bytes) {
        short_sends_.fetch_add(1, std::memory_order_relaxed);
        close_conn(s);
        return;
      }
      arm_recv(s);
      return;
    }
    const int error = WSAGetLastError();
    if (error == WSA_IO_PENDING) {
      sends_pending_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    immediate_failures_.fetch_add(1, std::memory_order_relaxed);
    last_error_.store(static_cast<std::uint32_t>(error), std::memory_order_relaxed);
    close_conn(s);
  }

  // ---- the load generator (its own thread, its own IOCP) ----

  void generator(std::promise<void>& ready) {
    env_.roles->enrol(metrics::Role::load_generator);
    ready.set_value();
    std::uint64_t t = metrics::now_ns();
    for (std::uint32_t i = 0; i < clients_.size(); ++i) {
      clients_[i].pending = params_.in_flight;
      try_send(i, t);
      client_recv(i);
    }
    std::uint64_t stop_deadline = 0;
    OVERLAPPED_ENTRY entries[64];
    while (!force_exit_.load(std::memory_order_relaxed)) {
      if (env_.phase->load(std::memory_order_acquire) == kStopping) {
        if (stop_deadline == 0) stop_deadline = metrics::now_ns() + 2'000'000'000ull;
        bool quiet = true;
        for (const auto& c : clients_) quiet = quiet && (c.dead || c.done_msgs == c.sent_msgs);
        if (quiet || metrics::now_ns() > stop_deadline) {
          if (!quiet) ++generator_errors_;
          for (auto& c : clients_) shutdown(c.s, SD_SEND);  // each server recv sees the end
          break;
        }
      }
      ULONG got = 0;
      // Wake now and then to see the phase change.
      if (!GetQueuedCompletionStatusEx(generator_port_, entries, 64, &got, 20, FALSE)) {
        if (GetLastError() == WAIT_TIMEOUT) continue;
        ++generator_errors_;
        break;
      }
      t = metrics::now_ns();
      for (ULONG k = 0; k < got; ++k) handle(entries[k], t);
    }
    // The client receives still armed: cancelled, and their completions collected.
    for (auto& c : clients_) CancelIoEx(reinterpret_cast<HANDLE>(c.s), nullptr);
    const std::uint64_t deadline = metrics::now_ns() + 2'000'000'000ull;
    while (in_flight_ > 0 && metrics::now_ns() < deadline) {
      ULONG got = 0;
      if (!GetQueuedCompletionStatusEx(generator_port_, entries, 64, &got, 10, FALSE)) continue;
      in_flight_ -= std::min<std::uint64_t>(in_flight_, got);
    }
    generator_done_.store(true);
  }

  void client_recv(std::uint32_t i) {
    ClientConn& c = clients_[i];
    c.recv.reset();
    WSABUF buf{static_cast<ULONG>(capacity_), reinterpret_cast<char*>(c.rx.get())};
    DWORD flags = 0;
    ++in_flight_;
    c.recv_armed = true;
    if (WSARecv(c.s, &buf, 1, nullptr, &flags, &c.recv.ov, nullptr) != 0 &&
        WSAGetLastError() != WSA_IO_PENDING) {
      --in_flight_;  // no packet will come (no skip mode here: a success always queues one)
      c.recv_armed = false;
      ++generator_errors_;
      c.dead = true;
    }
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
    client_send(i);
  }

  void client_send(std::uint32_t i) {
    ClientConn& c = clients_[i];
    c.send.reset();
    WSABUF buf{c.send_len - c.send_done, reinterpret_cast<char*>(c.tx.get()) + c.send_done};
    ++in_flight_;
    c.send_busy = true;
    if (WSASend(c.s, &buf, 1, nullptr, 0, &c.send.ov, nullptr) != 0 &&
        WSAGetLastError() != WSA_IO_PENDING) {
      --in_flight_;
      c.send_busy = false;
      ++generator_errors_;
      c.dead = true;
    }
  }

  void handle(const OVERLAPPED_ENTRY& entry, std::uint64_t t) {
    --in_flight_;
    const auto i = static_cast<std::uint32_t>(entry.lpCompletionKey);
    ClientConn& c = clients_[i];
    const auto* op = reinterpret_cast<const io::WinOp*>(entry.lpOverlapped);
    const std::uint32_t status = io::win32_error_of(op->ov.Internal);
    const std::uint32_t res = entry.dwNumberOfBytesTransferred;
    if (op->kind == kSend) {
      c.send_busy = false;
      if (status != 0 || res == 0) {
        if (status != ERROR_OPERATION_ABORTED) ++generator_errors_;
        c.dead = true;
        return;
      }
      c.send_done += res;
      if (c.send_done < c.send_len) {
        client_send(i);
      } else {
        try_send(i, t);
      }
      return;
    }
    c.recv_armed = false;
    if (status != 0 || res == 0) {
      if (status == 0) {
        ++unexpected_eof_;
      } else if (status != ERROR_OPERATION_ABORTED) {
        ++generator_errors_;
      }
      c.dead = true;
      return;
    }
    const std::uint8_t* in = c.rx.get();
    mismatched_bytes_ += count_echo_mismatches(in, static_cast<std::size_t>(res), i, c.rx_bytes);
    c.rx_bytes += res;
    bytes_verified_ += res;
    const int phase = env_.phase->load(std::memory_order_relaxed);
    const std::uint64_t size = params_.message_size;
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
    client_recv(i);
    try_send(i, t);
  }

  SocketParams params_;
  RunEnv env_;
  std::size_t capacity_ = 0;
  SOCKET listener_ = INVALID_SOCKET;
  std::vector<ServerConn> server_;
  std::vector<ClientConn> clients_;
  std::unique_ptr<io::OverlappedSource> source_;
  nlohmann::json source_stats_ = nlohmann::json::object();
  std::uint64_t post_failures_ = 0;
  unsigned skip_granted_ = 0;
  unsigned non_ifs_sockets_ = 0;  // skip mode not asked for: the provider lacks XP1_IFS_HANDLES
  std::atomic<std::uint64_t> open_conns_{0};
  std::atomic<std::uint64_t> server_errors_{0}, short_sends_{0}, drain_timeouts_{0};
  std::atomic<std::uint32_t> last_error_{0};
  std::atomic<std::uint64_t> sends_inline_{0}, sends_pending_{0}, recvs_inline_{0},
      recvs_pending_{0}, immediate_failures_{0};

  std::thread generator_;
  HANDLE generator_port_ = nullptr;
  std::atomic<bool> generator_done_{false};
  std::atomic<bool> force_exit_{false};
  std::uint64_t in_flight_ = 0;
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
