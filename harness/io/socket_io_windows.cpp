// The socket transport on Windows (socket_io.hpp): loopback TCP over overlapped Winsock.
//
// Set-up (open): a listening socket on 127.0.0.1:0; per connection an AcceptEx on the server
// side and a ConnectEx from a bound client socket, both waited on through their events, then
// SO_UPDATE_ACCEPT_CONTEXT / SO_UPDATE_CONNECT_CONTEXT and TCP_NODELAY.
//
// Server side: every server socket is associated with the run's port (`win32`: the kernel
// queues its completions) or with io::OverlappedSource's private IOCP (other ports: its thread
// forwards them), and, unless the run says --skip-on-success off, asks for
// FILE_SKIP_COMPLETION_PORT_ON_SUCCESS and uses it when Windows grants it:
//   - a WSASend that succeeds at once queues no packet (skip on success), so the worker
//     re-arms the receive inline (Echo::sent); a pending one completes as a send packet, and
//     the worker that takes it re-arms the receive (the Linux backend links send -> recv);
//   - a WSARecv that succeeds at once queues no packet either: the issuer posts that
//     completion into the port itself, so every received message is still one packet;
//   - skip mode is asked for only on a socket whose provider has IFS handles (XP1_IFS_HANDLES
//     in SO_PROTOCOL_INFOW): the SetFileCompletionNotificationModes docs say the mode is
//     compatible only with IFS providers, and a non-IFS layered provider (LSP) may grant the
//     call and then still queue a packet for an immediate success, which the inline paths
//     would handle a second time. On such a socket, where Windows refuses the mode, or with
//     --skip-on-success off (the mode is not asked for), an immediate success queues its packet
//     as usual and is left to it: every send and receive completion is then a packet.
// An immediate failure queues nothing: the connection is closed and counted.
//
// Client side: the client sockets are associated with the load generator's own IOCP, waited on
// with GetQueuedCompletionStatusEx (up to 64 a batch).

#include "io/socket_io.hpp"

// First: its lean <windows.h> lets <winsock2.h> follow; then Winsock in its own order.
#include "io/overlapped_windows.hpp"
// clang-format off
#include <winsock2.h>
#include <mswsock.h>
#include <ws2tcpip.h>
// clang-format on

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>

#include "io/skip_on_success.hpp"
#include "metrics/clock.hpp"

namespace iocpbench::io {
namespace {

enum SocketOpKind : std::uint32_t { kRecv = 0, kSend = 1 };
constexpr const char* kSocketSkipScope =
    "the whole run's server sockets; immediate: sends and receives that succeeded at once on a "
    "granted socket (no packet): sends handled_inline by the worker that issued them (it re-arms "
    "the receive), receives posted_by_issuer into the port (one packet per message)";

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
  WinOp recv, send;
  std::unique_ptr<char[]> buffer;
  std::uint32_t send_len = 0;
  bool skip = false;  // FILE_SKIP_COMPLETION_PORT_ON_SUCCESS granted
};

struct ClientConn {
  SOCKET s = INVALID_SOCKET;
  WinOp recv, send;
};

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

class OverlappedSocketIo final : public SocketIo {
 public:
  ~OverlappedSocketIo() override { close(); }

  void open(const SocketIoOptions& o, const TransportEnv& env) override {
    options_ = o;
    winsock_startup();
    const unsigned n = options_.connections;
    const sockaddr_in addr = listen_on_loopback(n);
    const Connector connector{extension<LPFN_ACCEPTEX>(listener_, WSAID_ACCEPTEX, "AcceptEx"),
                              extension<LPFN_CONNECTEX>(listener_, WSAID_CONNECTEX, "ConnectEx"),
                              CreateEventW(nullptr, TRUE, FALSE, nullptr),
                              CreateEventW(nullptr, TRUE, FALSE, nullptr)};
    if (connector.accepted == nullptr || connector.connected == nullptr) fail("CreateEvent");
    server_ = std::vector<ServerConn>(n);
    clients_ = std::vector<ClientConn>(n);
    for (unsigned i = 0; i < n; ++i) connect_pair(i, addr, connector);
    associate_sockets(env);
  }

  bool arm_recv(std::uint32_t conn) override {
    ServerConn& s = server_[conn];
    s.recv.reset();
    WSABUF buf{static_cast<ULONG>(options_.buffer_bytes), s.buffer.get()};
    DWORD flags = 0;
    if (WSARecv(s.s, &buf, 1, nullptr, &flags, &s.recv.ov, nullptr) == 0) {
      if (!s.skip) {  // its packet is queued as usual
        recvs_pending_.fetch_add(1, std::memory_order_relaxed);
        return true;
      }
      // Done at once: with skip on success no packet is queued, so post it here.
      recvs_inline_.fetch_add(1, std::memory_order_relaxed);
      skip_.immediate.fetch_add(1, std::memory_order_relaxed);
      skip_.posted_by_issuer.fetch_add(1, std::memory_order_relaxed);
      source_->post(s.recv, static_cast<std::uint32_t>(s.recv.ov.InternalHigh), 0, s.recv.index);
      return true;
    }
    const int error = WSAGetLastError();
    if (error == WSA_IO_PENDING) {
      recvs_pending_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    refused(error);
    return false;
  }

  Echo echo(std::uint32_t conn, std::uint32_t bytes) override {
    ServerConn& s = server_[conn];
    s.send.reset();
    s.send_len = bytes;
    WSABUF buf{bytes, s.buffer.get()};
    if (WSASend(s.s, &buf, 1, nullptr, 0, &s.send.ov, nullptr) == 0) {
      if (!s.skip) {  // its packet is queued as usual; the worker that takes it re-arms
        sends_pending_.fetch_add(1, std::memory_order_relaxed);
        return Echo::pending;
      }
      // Done at once and no packet queued (skip on success): handled inline.
      sends_inline_.fetch_add(1, std::memory_order_relaxed);
      skip_.immediate.fetch_add(1, std::memory_order_relaxed);
      skip_.handled_inline.fetch_add(1, std::memory_order_relaxed);
      if (static_cast<std::uint32_t>(s.send.ov.InternalHigh) != bytes) {
        short_sends_.fetch_add(1, std::memory_order_relaxed);
        return Echo::closed;
      }
      return Echo::sent;
    }
    const int error = WSAGetLastError();
    if (error == WSA_IO_PENDING) {
      sends_pending_.fetch_add(1, std::memory_order_relaxed);
      return Echo::pending;
    }
    refused(error);
    return Echo::closed;
  }

  SocketDone done(const port::Packet& packet) override {
    const auto* op = static_cast<const WinOp*>(packet.context);
    SocketDone d;
    d.conn = static_cast<std::uint32_t>(packet.key);
    d.send = op->kind == kSend;
    d.bytes = packet.bytes;
    d.status = packet.status;
    d.t_insert_ns = op->t_insert_ns;
    if (packet.status != 0) last_error_.store(packet.status, std::memory_order_relaxed);
    return d;
  }

  bool send_complete(std::uint32_t conn, std::uint32_t bytes) override {
    if (bytes == server_[conn].send_len) return true;
    short_sends_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }

  void shutdown_server() override {
    for (auto& s : server_) shutdown(s.s, SD_BOTH);
  }

  // The generator's port is made in open().
  std::string start_client() override { return {}; }

  bool client_recv(std::uint32_t conn, void* buf, std::size_t len) override {
    ClientConn& c = clients_[conn];
    c.recv.reset();
    WSABUF wsabuf{static_cast<ULONG>(len), static_cast<char*>(buf)};
    DWORD flags = 0;
    ++in_flight_;
    if (WSARecv(c.s, &wsabuf, 1, nullptr, &flags, &c.recv.ov, nullptr) != 0 &&
        WSAGetLastError() != WSA_IO_PENDING) {
      --in_flight_;  // no packet will come (no skip mode here: a success always queues one)
      return false;
    }
    return true;
  }

  bool client_send(std::uint32_t conn, const void* buf, std::size_t len) override {
    ClientConn& c = clients_[conn];
    c.send.reset();
    WSABUF wsabuf{static_cast<ULONG>(len), const_cast<char*>(static_cast<const char*>(buf))};
    ++in_flight_;
    if (WSASend(c.s, &wsabuf, 1, nullptr, 0, &c.send.ov, nullptr) != 0 &&
        WSAGetLastError() != WSA_IO_PENDING) {
      --in_flight_;
      return false;
    }
    return true;
  }

  bool client_send_now(std::uint32_t conn, const void* buf, std::size_t len) override {
    const char* p = static_cast<const char*>(buf);
    while (len > 0) {  // a blocking socket: a plain send needs no OVERLAPPED and queues no packet
      const int n = ::send(clients_[conn].s, p, static_cast<int>(len), 0);
      if (n == SOCKET_ERROR || n == 0) return false;
      p += n;
      len -= static_cast<std::size_t>(n);
    }
    return true;
  }

  bool client_wait(unsigned timeout_ms, std::vector<ClientDone>& out) override {
    out.clear();
    OVERLAPPED_ENTRY entries[64];
    ULONG got = 0;
    if (!GetQueuedCompletionStatusEx(generator_port_, entries, 64, &got, timeout_ms, FALSE)) {
      return GetLastError() == WAIT_TIMEOUT;
    }
    for (ULONG k = 0; k < got; ++k) {
      --in_flight_;
      const auto* op = reinterpret_cast<const WinOp*>(entries[k].lpOverlapped);
      const std::uint32_t status = win32_error_of(op->ov.Internal);
      ClientDone d;
      d.conn = static_cast<std::uint32_t>(entries[k].lpCompletionKey);
      d.recv = op->kind == kRecv;
      d.bytes = entries[k].dwNumberOfBytesTransferred;
      d.failed = status != 0;
      d.cancelled = status == ERROR_OPERATION_ABORTED;
      out.push_back(d);
    }
    return true;
  }

  void client_shutdown_send(std::uint32_t conn) override {
    shutdown(clients_[conn].s, SD_SEND);  // each server recv sees the end
  }

  // The client receives still armed: cancelled, and their completions collected.
  void stop_client() override {
    for (auto& c : clients_) CancelIoEx(reinterpret_cast<HANDLE>(c.s), nullptr);
    OVERLAPPED_ENTRY entries[64];
    const std::uint64_t deadline = metrics::now_ns() + 2'000'000'000ull;
    while (in_flight_ > 0 && metrics::now_ns() < deadline) {
      ULONG got = 0;
      if (!GetQueuedCompletionStatusEx(generator_port_, entries, 64, &got, 10, FALSE)) continue;
      in_flight_ -= std::min<std::uint64_t>(in_flight_, got);
    }
  }

  std::string client_description() const override {
    return "own thread, own IOCP for the client sockets (GetQueuedCompletionStatusEx, one clock "
           "read per batch), WSASend/WSARecv";
  }

  void close() override {
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
      closed_post_failures_ = source_->post_failures();
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

  nlohmann::json stats() const override {
    return {{"last_server_error", last_error_.load()},
            {"short_sends", short_sends_.load()},
            {"skip_completion_port_on_success_sockets", skip_granted_},
            {"non_ifs_provider_sockets", non_ifs_sockets_},
            {"immediate",
             {{"sends_completed_inline", sends_inline_.load()},
              {"sends_pending", sends_pending_.load()},
              {"recvs_completed_inline_posted", recvs_inline_.load()},
              {"recvs_pending", recvs_pending_.load()},
              {"failures", immediate_failures_.load()}}},
            {"skip_on_success", to_json(skip_, kSocketSkipScope)},
            {"completion_source", source_ ? source_->stats() : source_stats_}};
  }

  std::uint64_t errors() const override {
    return short_sends_.load() + immediate_failures_.load() +
           (source_ ? source_->post_failures() : closed_post_failures_);
  }

  // No live counts for the watchdog yet.
  bool progress(TransportProgress&) const override { return false; }

 private:
  SocketIoOptions options_;
  SOCKET listener_ = INVALID_SOCKET;
  std::vector<ServerConn> server_;
  std::vector<ClientConn> clients_;
  std::unique_ptr<OverlappedSource> source_;
  nlohmann::json source_stats_ = nlohmann::json::object();
  std::uint64_t closed_post_failures_ = 0;
  unsigned skip_granted_ = 0;
  unsigned non_ifs_sockets_ = 0;  // skip mode not asked for: the provider lacks XP1_IFS_HANDLES
  SkipOnSuccessCounts skip_;      // the same, with what was requested and done inline
  std::atomic<std::uint64_t> short_sends_{0};
  std::atomic<std::uint32_t> last_error_{0};
  std::atomic<std::uint64_t> sends_inline_{0}, sends_pending_{0}, recvs_inline_{0},
      recvs_pending_{0}, immediate_failures_{0};
  HANDLE generator_port_ = nullptr;
  std::uint64_t in_flight_ = 0;  // the generator's operations (its thread only)

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
  // overlapped, no delay), and the server's buffer.
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
    if (!connector.connect_ex(cc.s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr, nullptr,
                              0, nullptr, &c) &&
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
    sc.buffer = std::make_unique<char[]>(options_.buffer_bytes);
    sc.recv.kind = cc.recv.kind = kRecv;
    sc.send.kind = cc.send.kind = kSend;
    sc.recv.index = sc.send.index = cc.recv.index = cc.send.index = i;
  }

  // The server sockets into the run's port (skipping the port on inline success where the
  // socket allows it); the client sockets into the load generator's own port.
  void associate_sockets(const TransportEnv& env) {
    const unsigned n = static_cast<unsigned>(server_.size());
    source_ = std::make_unique<OverlappedSource>(*env.port, env.roles);
    skip_.requested = env.skip_requested;
    skip_.handles = n;
    skip_.asked = env.skip_on_success;
    for (unsigned i = 0; i < n; ++i) {
      ServerConn& sc = server_[i];
      source_->associate(reinterpret_cast<HANDLE>(sc.s), i);
      if (skip_.asked) sc.skip = ask_skip_on_success(sc.s);
    }
    skip_.granted = skip_granted_;
    skip_.not_asked_non_ifs = non_ifs_sockets_;
    generator_port_ = CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 1);
    if (generator_port_ == nullptr) fail("CreateIoCompletionPort (load generator)");
    for (unsigned i = 0; i < n; ++i) {
      if (CreateIoCompletionPort(reinterpret_cast<HANDLE>(clients_[i].s), generator_port_, i, 0) ==
          nullptr) {
        fail("CreateIoCompletionPort (client socket)");
      }
    }
  }

  // Skip on success on one server socket, asked for only where its provider has IFS handles.
  bool ask_skip_on_success(SOCKET s) {
    if (!has_ifs_handles(s)) {
      ++non_ifs_sockets_;
      return false;
    }
    const auto handle = reinterpret_cast<HANDLE>(s);
    const bool granted =
        SetFileCompletionNotificationModes(handle, FILE_SKIP_COMPLETION_PORT_ON_SUCCESS) != FALSE;
    if (granted) {
      ++skip_granted_;
    } else {
      skip_.refusal_error = GetLastError();
    }
    return granted;
  }

  void refused(int error) {
    immediate_failures_.fetch_add(1, std::memory_order_relaxed);
    last_error_.store(static_cast<std::uint32_t>(error), std::memory_order_relaxed);
  }
};

}  // namespace

std::unique_ptr<SocketIo> make_socket_io() {
  return std::make_unique<OverlappedSocketIo>();
}

}  // namespace iocpbench::io
