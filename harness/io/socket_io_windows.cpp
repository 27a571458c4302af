// The socket transport on Windows (socket_io.hpp): loopback TCP over overlapped Winsock.
//
// Set-up (open): a listening socket on 127.0.0.1:0; per connection an AcceptEx on the server
// side and a ConnectEx from a bound client socket, both waited on through their events, then
// SO_UPDATE_ACCEPT_CONTEXT / SO_UPDATE_CONNECT_CONTEXT and TCP_NODELAY.
//
// Server side: every server socket is associated with the run's port (`win32`: the kernel
// queues its completions) or with io::OverlappedSource's private IOCP (other ports: its thread
// forwards them), and uses FILE_SKIP_COMPLETION_PORT_ON_SUCCESS when Windows grants it:
//   - a WSASend that succeeds at once queues no packet (skip on success), so the worker
//     re-arms the receive inline (Echo::sent); a pending one completes as a send packet, and
//     the worker that takes it re-arms the receive (the Linux backend links send -> recv);
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
// Client side: the client sockets are associated with the load generator's own IOCP, waited on
// with GetQueuedCompletionStatusEx (up to 64 a batch).

#include "io/socket_io.hpp"

// After overlapped_windows.hpp's lean <windows.h>.
#include "io/overlapped_windows.hpp"
#include <winsock2.h>
#include <mswsock.h>
#include <ws2tcpip.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>

#include "metrics/clock.hpp"

namespace iocpbench::io {
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
  void open(const SocketIoOptions& o, const TransportEnv& env) override;
  bool arm_recv(std::uint32_t conn) override;
  Echo echo(std::uint32_t conn, std::uint32_t bytes) override;
  SocketDone done(const port::Packet& packet) override;
  bool send_complete(std::uint32_t conn, std::uint32_t bytes) override;
  void shutdown_server() override;
  std::string start_client() override;
  bool client_recv(std::uint32_t conn, void* buf, std::size_t len) override;
  bool client_send(std::uint32_t conn, const void* buf, std::size_t len) override;
  bool client_wait(unsigned timeout_ms, std::vector<ClientDone>& out) override;
  void client_shutdown_send(std::uint32_t conn) override;
  void stop_client() override;
  std::string client_description() const override;
  void close() override;
  nlohmann::json stats() const override;
  std::uint64_t errors() const override;
  bool progress(TransportProgress& out) const override;
  bool workers_submit() const override;
  bool pumps(unsigned worker) const override;
  int pump(unsigned worker, unsigned wait_us) override;

 private:
  SocketIoOptions options;
  SOCKET listener = INVALID_SOCKET;
  std::vector<ServerConn> server;
  std::vector<ClientConn> clients;
  std::unique_ptr<OverlappedSource> source;
  nlohmann::json source_stats = nlohmann::json::object();
  std::uint64_t closed_post_failures = 0;
  unsigned skip_granted = 0;
  unsigned non_ifs_sockets = 0;  // skip mode not asked for: the provider lacks XP1_IFS_HANDLES
  std::atomic<std::uint64_t> short_sends{0};
  std::atomic<std::uint32_t> last_error{0};
  std::atomic<std::uint64_t> sends_inline{0}, sends_pending{0}, recvs_inline{0},
      recvs_pending{0}, immediate_failures{0};
  HANDLE generator_port = nullptr;
  std::uint64_t in_flight = 0;  // the generator's operations (its thread only)

  // The listener on an ephemeral loopback port; returns its address.
  sockaddr_in listen_on_loopback(unsigned connections) {
    listener = overlapped_socket();
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only: nothing reaches a network
    if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("bind");
    if (listen(listener, static_cast<int>(std::min(connections, 1024u))) != 0) fail("listen");
    int len = sizeof addr;
    if (getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) fail("getsockname");
    return addr;
  }

  // Connection i: a client socket connected to a server socket accepted for it (both
  // overlapped, no delay), and the server's buffer.
  void connect_pair(unsigned i, const sockaddr_in& addr, const Connector& connector) {
    char accept_buffer[2 * (sizeof(sockaddr_in) + 16)];
    ServerConn& sc = server[i];
    ClientConn& cc = clients[i];
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
    if (!connector.accept_ex(listener, sc.s, accept_buffer, 0, sizeof(sockaddr_in) + 16,
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
    if (!WSAGetOverlappedResult(listener, &a, &bytes, TRUE, &flags)) fail("AcceptEx (result)");
    if (setsockopt(sc.s, SOL_SOCKET, SO_UPDATE_ACCEPT_CONTEXT,
                   reinterpret_cast<const char*>(&listener), sizeof listener) != 0) {
      fail("setsockopt(SO_UPDATE_ACCEPT_CONTEXT)");
    }
    if (setsockopt(cc.s, SOL_SOCKET, SO_UPDATE_CONNECT_CONTEXT, nullptr, 0) != 0) {
      fail("setsockopt(SO_UPDATE_CONNECT_CONTEXT)");
    }
    set_nodelay(sc.s);
    set_nodelay(cc.s);
    sc.buffer = std::make_unique<char[]>(options.buffer_bytes);
    sc.recv.kind = cc.recv.kind = kRecv;
    sc.send.kind = cc.send.kind = kSend;
    sc.recv.index = sc.send.index = cc.recv.index = cc.send.index = i;
  }

  // The server sockets into the run's port (skipping the port on inline success where the
  // socket allows it); the client sockets into the load generator's own port.
  void associate_sockets(const TransportEnv& env) {
    const unsigned n = static_cast<unsigned>(server.size());
    source = std::make_unique<OverlappedSource>(*env.port, env.roles);
    for (unsigned i = 0; i < n; ++i) {
      ServerConn& sc = server[i];
      source->associate(reinterpret_cast<HANDLE>(sc.s), i);
      const bool ifs = has_ifs_handles(sc.s);
      non_ifs_sockets += ifs ? 0 : 1;
      sc.skip = ifs && SetFileCompletionNotificationModes(reinterpret_cast<HANDLE>(sc.s),
                                                          FILE_SKIP_COMPLETION_PORT_ON_SUCCESS) !=
                           FALSE;
      skip_granted += sc.skip ? 1 : 0;
    }
    generator_port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, nullptr, 0, 1);
    if (generator_port == nullptr) fail("CreateIoCompletionPort (load generator)");
    for (unsigned i = 0; i < n; ++i) {
      if (CreateIoCompletionPort(reinterpret_cast<HANDLE>(clients[i].s), generator_port, i, 0) ==
          nullptr) {
        fail("CreateIoCompletionPort (client socket)");
      }
    }
  }

  void refused(int error) {
    immediate_failures.fetch_add(1, std::memory_order_relaxed);
    last_error.store(static_cast<std::uint32_t>(error), std::memory_order_relaxed);
  }
};

void OverlappedSocketIo::open(const SocketIoOptions& o, const TransportEnv& env) {
  options = o;
  winsock_startup();
  const unsigned n = options.connections;
  const sockaddr_in addr = listen_on_loopback(n);
  const Connector connector{
      extension<LPFN_ACCEPTEX>(listener, WSAID_ACCEPTEX, "AcceptEx"),
      extension<LPFN_CONNECTEX>(listener, WSAID_CONNECTEX, "ConnectEx"),
      CreateEventW(nullptr, TRUE, FALSE, nullptr), CreateEventW(nullptr, TRUE, FALSE, nullptr)};
  if (connector.accepted == nullptr || connector.connected == nullptr) fail("CreateEvent");
  server = std::vector<ServerConn>(n);
  clients = std::vector<ClientConn>(n);
  for (unsigned i = 0; i < n; ++i) connect_pair(i, addr, connector);
  associate_sockets(env);
}

bool OverlappedSocketIo::arm_recv(std::uint32_t conn) {
  ServerConn& s = server[conn];
  s.recv.reset();
  WSABUF buf{static_cast<ULONG>(options.buffer_bytes), s.buffer.get()};
  DWORD flags = 0;
  if (WSARecv(s.s, &buf, 1, nullptr, &flags, &s.recv.ov, nullptr) == 0) {
    if (!s.skip) {  // its packet is queued as usual
      recvs_pending.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    // Done at once: with skip on success no packet is queued, so post it here.
    recvs_inline.fetch_add(1, std::memory_order_relaxed);
    source->post(s.recv, static_cast<std::uint32_t>(s.recv.ov.InternalHigh), 0, s.recv.index);
    return true;
  }
  const int error = WSAGetLastError();
  if (error == WSA_IO_PENDING) {
    recvs_pending.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  refused(error);
  return false;
}

Echo OverlappedSocketIo::echo(std::uint32_t conn, std::uint32_t bytes) {
  ServerConn& s = server[conn];
  s.send.reset();
  s.send_len = bytes;
  WSABUF buf{bytes, s.buffer.get()};
  if (WSASend(s.s, &buf, 1, nullptr, 0, &s.send.ov, nullptr) == 0) {
    if (!s.skip) {  // its packet is queued as usual; the worker that takes it re-arms
      sends_pending.fetch_add(1, std::memory_order_relaxed);
      return Echo::pending;
    }
    // Done at once and no packet queued (skip on success): handled inline.
    sends_inline.fetch_add(1, std::memory_order_relaxed);
    if (static_cast<std::uint32_t>(s.send.ov.InternalHigh) != bytes) {
      short_sends.fetch_add(1, std::memory_order_relaxed);
      return Echo::closed;
    }
    return Echo::sent;
  }
  const int error = WSAGetLastError();
  if (error == WSA_IO_PENDING) {
    sends_pending.fetch_add(1, std::memory_order_relaxed);
    return Echo::pending;
  }
  refused(error);
  return Echo::closed;
}

SocketDone OverlappedSocketIo::done(const port::Packet& packet) {
  const auto* op = static_cast<const WinOp*>(packet.context);
  SocketDone d;
  d.conn = static_cast<std::uint32_t>(packet.key);
  d.send = op->kind == kSend;
  d.bytes = packet.bytes;
  d.status = packet.status;
  d.t_insert_ns = op->t_insert_ns;
  if (packet.status != 0) last_error.store(packet.status, std::memory_order_relaxed);
  return d;
}

bool OverlappedSocketIo::send_complete(std::uint32_t conn, std::uint32_t bytes) {
  if (bytes == server[conn].send_len) return true;
  short_sends.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void OverlappedSocketIo::shutdown_server() {
  for (auto& s : server) shutdown(s.s, SD_BOTH);
}

std::string OverlappedSocketIo::start_client() { return {}; }  // the generator's port is made in open()

bool OverlappedSocketIo::client_recv(std::uint32_t conn, void* buf, std::size_t len) {
  ClientConn& c = clients[conn];
  c.recv.reset();
  WSABUF wsabuf{static_cast<ULONG>(len), static_cast<char*>(buf)};
  DWORD flags = 0;
  ++in_flight;
  if (WSARecv(c.s, &wsabuf, 1, nullptr, &flags, &c.recv.ov, nullptr) != 0 &&
      WSAGetLastError() != WSA_IO_PENDING) {
    --in_flight;  // no packet will come (no skip mode here: a success always queues one)
    return false;
  }
  return true;
}

bool OverlappedSocketIo::client_send(std::uint32_t conn, const void* buf, std::size_t len) {
  ClientConn& c = clients[conn];
  c.send.reset();
  WSABUF wsabuf{static_cast<ULONG>(len), const_cast<char*>(static_cast<const char*>(buf))};
  ++in_flight;
  if (WSASend(c.s, &wsabuf, 1, nullptr, 0, &c.send.ov, nullptr) != 0 &&
      WSAGetLastError() != WSA_IO_PENDING) {
    --in_flight;
    return false;
  }
  return true;
}

bool OverlappedSocketIo::client_wait(unsigned timeout_ms, std::vector<ClientDone>& out) {
  out.clear();
  OVERLAPPED_ENTRY entries[64];
  ULONG got = 0;
  if (!GetQueuedCompletionStatusEx(generator_port, entries, 64, &got, timeout_ms, FALSE)) {
    return GetLastError() == WAIT_TIMEOUT;
  }
  for (ULONG k = 0; k < got; ++k) {
    --in_flight;
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

void OverlappedSocketIo::client_shutdown_send(std::uint32_t conn) {
  shutdown(clients[conn].s, SD_SEND);  // each server recv sees the end
}

// The client receives still armed: cancelled, and their completions collected.
void OverlappedSocketIo::stop_client() {
  for (auto& c : clients) CancelIoEx(reinterpret_cast<HANDLE>(c.s), nullptr);
  OVERLAPPED_ENTRY entries[64];
  const std::uint64_t deadline = metrics::now_ns() + 2'000'000'000ull;
  while (in_flight > 0 && metrics::now_ns() < deadline) {
    ULONG got = 0;
    if (!GetQueuedCompletionStatusEx(generator_port, entries, 64, &got, 10, FALSE)) continue;
    in_flight -= std::min<std::uint64_t>(in_flight, got);
  }
}

std::string OverlappedSocketIo::client_description() const {
  return "own thread, own IOCP for the client sockets (GetQueuedCompletionStatusEx, one clock "
         "read per batch), WSASend/WSARecv";
}

void OverlappedSocketIo::close() {
  // Receives still armed (a drain that timed out) are cancelled and waited for before their
  // buffers go away; the packets they queue stay in the port, which is closed next.
  for (auto& s : server) {
    if (s.s != INVALID_SOCKET) CancelIoEx(reinterpret_cast<HANDLE>(s.s), nullptr);
  }
  const std::uint64_t deadline = metrics::now_ns() + 5'000'000'000ull;
  for (auto& s : server) {
    while ((s.recv.pending() || s.send.pending()) && metrics::now_ns() < deadline) Sleep(1);
  }
  if (source) {
    source->stop();
    source_stats = source->stats();
    closed_post_failures = source->post_failures();
    source.reset();
  }
  for (auto& s : server) {
    if (s.s != INVALID_SOCKET) closesocket(s.s);
    s.s = INVALID_SOCKET;
  }
  for (auto& c : clients) {
    if (c.s != INVALID_SOCKET) closesocket(c.s);
    c.s = INVALID_SOCKET;
  }
  if (listener != INVALID_SOCKET) closesocket(listener);
  listener = INVALID_SOCKET;
  if (generator_port != nullptr) CloseHandle(generator_port);
  generator_port = nullptr;
}

nlohmann::json OverlappedSocketIo::stats() const {
  return {{"last_server_error", last_error.load()},
          {"short_sends", short_sends.load()},
          {"skip_completion_port_on_success_sockets", skip_granted},
          {"non_ifs_provider_sockets", non_ifs_sockets},
          {"immediate",
           {{"sends_completed_inline", sends_inline.load()},
            {"sends_pending", sends_pending.load()},
            {"recvs_completed_inline_posted", recvs_inline.load()},
            {"recvs_pending", recvs_pending.load()},
            {"failures", immediate_failures.load()}}},
          {"completion_source", source ? source->stats() : source_stats}};
}

std::uint64_t OverlappedSocketIo::errors() const {
  return short_sends.load() + immediate_failures.load() +
         (source ? source->post_failures() : closed_post_failures);
}

bool OverlappedSocketIo::progress(TransportProgress&) const { return false; }  // no watchdog counts yet
bool OverlappedSocketIo::workers_submit() const { return false; }  // thread-agnostic I/O since Vista
bool OverlappedSocketIo::pumps(unsigned) const { return false; }
int OverlappedSocketIo::pump(unsigned, unsigned) { return -1; }

}  // namespace

std::unique_ptr<SocketIo> make_socket_io() { return std::make_unique<OverlappedSocketIo>(); }

}  // namespace iocpbench::io
