#pragma once
// The socket workload's transport (async_io.hpp): `connections` loopback TCP pairs (no delay;
// nothing reaches a network). The server side of each pair completes into the run's port; the
// client side belongs to the load generator, which waits on its own completion queue on its own
// thread. Per OS: socket_io_linux.cpp (io_uring: the server's rings through io::SourceSet, the
// generator's own ring), socket_io_windows.cpp (overlapped Winsock: AcceptEx/ConnectEx, the
// server sockets through io::OverlappedSource, the generator's own IOCP).
//
// How an echo goes out is the OS's best (the backend's comment says why): Linux sends inline
// when the socket takes it all, else through the ring with the next receive linked behind it;
// Windows uses WSASend with FILE_SKIP_COMPLETION_PORT_ON_SUCCESS where the provider allows it
// (unless --skip-on-success off: then every send and receive completion is a packet).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/async_io.hpp"

namespace iocpbench::io {

struct SocketIoOptions {
  unsigned connections = 1;
  std::size_t buffer_bytes = 64;  // each connection's server buffer: message size x in flight
};

// A server completion, read back from its packet.
struct SocketDone {
  std::uint32_t conn = 0;
  bool send = false;  // an echo that did not complete inline; else a receive
  std::uint32_t bytes = 0;
  std::uint32_t status = 0;  // the OS's error; 0 = success
  std::uint64_t t_insert_ns = 0;
};

// What became of an echo.
enum class Echo {
  pending,  // a packet will come (Windows: the send's; Linux: the linked receive's)
  sent,     // the whole echo went out at once: re-arm the receive
  error,    // the send failed (a server error): the connection is done
  closed,   // refused at once or short (the backend counted it): the connection is done
};

// A load-generator completion.
struct ClientDone {
  std::uint32_t conn = 0;
  bool recv = false;
  std::uint32_t bytes = 0;
  bool failed = false;     // the OS reported an error
  bool cancelled = false;  // ... because the operation was cancelled
};

class SocketIo : public Transport {
 public:
  // Listens on 127.0.0.1:0, connects and accepts every pair, associates the server sockets with
  // the port(s) and allocates their buffers. Throws std::runtime_error naming the call refused.
  virtual void open(const SocketIoOptions& options, const TransportEnv& env) = 0;

  // ---- the server side (pool threads) ----
  // Arms connection `conn`'s receive into its buffer. False: refused at once (counted by the
  // backend); the connection is done.
  virtual bool arm_recv(std::uint32_t conn) = 0;
  // Sends back the `bytes` that the last receive put in the buffer.
  virtual Echo echo(std::uint32_t conn, std::uint32_t bytes) = 0;
  virtual SocketDone done(const port::Packet& packet) = 0;
  // A send packet that succeeded: whether it moved the whole echo (a short one is counted).
  virtual bool send_complete(std::uint32_t conn, std::uint32_t bytes) = 0;
  // A drain that timed out: shuts every server socket down, so the generator's waits end.
  virtual void shutdown_server() = 0;

  // ---- the client side (the load generator's thread only) ----
  // Sets up the generator's completion queue, on its thread; returns the reason it cannot.
  virtual std::string start_client() = 0;
  // Queue a receive / a send on the client socket of `conn` (the buffer stays alive until its
  // completion). False: refused at once, no completion will come.
  virtual bool client_recv(std::uint32_t conn, void* buf, std::size_t len) = 0;
  virtual bool client_send(std::uint32_t conn, const void* buf, std::size_t len) = 0;
  // The open loop's sends: a plain blocking send on the client socket of `conn`, from one other
  // thread (the pacer), returning once the socket took all `len` bytes (false: it failed). The
  // generator's queue keeps the receives. The bytes in flight per connection are bounded by the
  // open loop's slots, far under a loopback socket's send buffer, so it does not wait for the
  // server.
  virtual bool client_send_now(std::uint32_t conn, const void* buf, std::size_t len) = 0;
  // Submits what is queued and waits up to `timeout_ms` for completions; fills `out` with what
  // is ready (cleared first). Returns false when waiting itself failed.
  virtual bool client_wait(unsigned timeout_ms, std::vector<ClientDone>& out) = 0;
  virtual void client_shutdown_send(std::uint32_t conn) = 0;
  // Cancels what is in flight and collects its completions (bounded), so no client buffer is
  // written after the generator returns; then releases the generator's queue.
  virtual void stop_client() = 0;
  virtual std::string client_description() const = 0;
  // close() comes after the generator has been joined.
};

// This OS's backend.
std::unique_ptr<SocketIo> make_socket_io();

}  // namespace iocpbench::io
