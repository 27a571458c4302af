// P5's anchor: a Boost.Asio loopback TCP echo, what a user would write instead of iocpbench's
// socket workload, on the same connections and message size.
//
//   asio_echo [--connections 16] [--message-size 64] [--messages-in-flight 1]
//             [--threads N] [--duration 3] [--warmup 0.5]
//
// Server: one io_context run by --threads threads (default: logical CPUs, Asio's concurrency
// hint the same); per connection async_read_some into a buffer, then async_write of what came,
// then the next read (the usual Asio echo). Load generator: its own io_context on one thread
// (as the socket workload's generator has its own thread and ring); per connection
// `messages_in_flight` messages: async_write of the message, async_read of exactly its size
// back, counted as one round trip, repeated. Prints one JSON line:
//   {"round_trips": R, "seconds": S, "round_trips_per_s": R/S, ...}
// Exit 0 on success, 1 on an I/O error, 2 on bad flags.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio.hpp>

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

std::atomic<std::uint64_t> g_round_trips{0};
std::atomic<std::uint64_t> g_errors{0};
std::atomic<bool> g_stopping{false};

class ServerSession : public std::enable_shared_from_this<ServerSession> {
 public:
  ServerSession(tcp::socket socket, std::size_t size) : socket_(std::move(socket)), buf_(size * 4) {}
  void start() { read(); }

 private:
  void read() {
    auto self = shared_from_this();
    socket_.async_read_some(asio::buffer(buf_), [this, self](boost::system::error_code ec,
                                                             std::size_t n) {
      if (ec) return;  // the peer closed: done
      asio::async_write(socket_, asio::buffer(buf_.data(), n),
                        [this, self](boost::system::error_code wec, std::size_t) {
                          if (!wec) read();
                        });
    });
  }
  tcp::socket socket_;
  std::vector<char> buf_;
};

struct ClientConn {
  tcp::socket socket;
  std::vector<char> out, in;
  explicit ClientConn(asio::io_context& io, std::size_t size) : socket(io), out(size, 'x'), in(size) {}
};

void client_round(ClientConn& c) {
  asio::async_write(c.socket, asio::buffer(c.out), [&c](boost::system::error_code ec, std::size_t) {
    if (ec) {
      if (!g_stopping.load(std::memory_order_relaxed)) g_errors.fetch_add(1);
      return;
    }
    asio::async_read(c.socket, asio::buffer(c.in), [&c](boost::system::error_code rec, std::size_t) {
      if (rec) {
        if (!g_stopping.load(std::memory_order_relaxed)) g_errors.fetch_add(1);
        return;
      }
      g_round_trips.fetch_add(1, std::memory_order_relaxed);
      if (!g_stopping.load(std::memory_order_relaxed)) client_round(c);
    });
  });
}

bool parse(int argc, char** argv, const char* name, double& value) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) {
      char* end = nullptr;
      value = std::strtod(argv[i + 1], &end);
      if (end == argv[i + 1] || *end != '\0' || !(value > 0)) {
        std::fprintf(stderr, "asio_echo: %s: '%s' is not a positive number\n", name, argv[i + 1]);
        std::exit(2);
      }
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i += 2) {
    static const char* known[] = {"--connections", "--message-size", "--messages-in-flight",
                                  "--threads", "--duration", "--warmup"};
    bool ok = i + 1 < argc;
    if (ok) {
      ok = false;
      for (const char* k : known) ok = ok || std::strcmp(argv[i], k) == 0;
    }
    if (!ok) {
      std::fprintf(stderr, "asio_echo: bad argument '%s' (see the source's header)\n", argv[i]);
      return 2;
    }
  }
  double connections = 16, size = 64, in_flight = 1, duration = 3, warmup = 0.5;
  double threads = std::max(1u, std::thread::hardware_concurrency());
  parse(argc, argv, "--connections", connections);
  parse(argc, argv, "--message-size", size);
  parse(argc, argv, "--messages-in-flight", in_flight);
  parse(argc, argv, "--threads", threads);
  parse(argc, argv, "--duration", duration);
  parse(argc, argv, "--warmup", warmup);
  const auto n_conn = static_cast<std::size_t>(connections);
  const auto msg = static_cast<std::size_t>(size);

  asio::io_context server_io(static_cast<int>(threads));
  tcp::acceptor acceptor(server_io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  const unsigned short port = acceptor.local_endpoint().port();
  std::function<void()> accept = [&] {
    acceptor.async_accept([&](boost::system::error_code ec, tcp::socket socket) {
      if (ec) return;
      socket.set_option(tcp::no_delay(true));
      std::make_shared<ServerSession>(std::move(socket), msg)->start();
      accept();
    });
  };
  accept();
  auto server_guard = asio::make_work_guard(server_io);
  std::vector<std::thread> server_threads;
  for (int i = 0; i < static_cast<int>(threads); ++i) {
    server_threads.emplace_back([&] { server_io.run(); });
  }

  asio::io_context client_io(1);
  std::vector<std::unique_ptr<ClientConn>> conns;
  for (std::size_t i = 0; i < n_conn; ++i) {
    auto c = std::make_unique<ClientConn>(client_io, msg);
    boost::system::error_code ec;
    c->socket.connect(tcp::endpoint(asio::ip::address_v4::loopback(), port), ec);
    if (ec) {
      std::fprintf(stderr, "asio_echo: connect: %s\n", ec.message().c_str());
      return 1;
    }
    c->socket.set_option(tcp::no_delay(true));
    conns.push_back(std::move(c));
  }
  // Several messages in flight per connection: each its own write + read chain on the same
  // socket would interleave bytes; send them as one message of k x size per round instead.
  const auto k = static_cast<std::size_t>(in_flight);
  for (auto& c : conns) {
    c->out.assign(msg * k, 'x');
    c->in.assign(msg * k, 0);
    client_round(*c);
  }
  std::thread client([&] { client_io.run(); });

  using Clock = std::chrono::steady_clock;
  std::this_thread::sleep_for(std::chrono::duration<double>(warmup));
  const std::uint64_t r0 = g_round_trips.load();
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(duration));
  const std::uint64_t r1 = g_round_trips.load();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();

  g_stopping.store(true);
  // Stop: close the client sockets on their own thread, let the servers see EOF.
  asio::post(client_io, [&] {
    for (auto& c : conns) {
      boost::system::error_code ignored;
      c->socket.shutdown(tcp::socket::shutdown_both, ignored);
      c->socket.close(ignored);
    }
  });
  client.join();
  asio::post(server_io, [&] { acceptor.close(); });
  server_guard.reset();
  server_io.stop();
  for (auto& t : server_threads) t.join();

  const double trips = static_cast<double>(r1 - r0) * static_cast<double>(k);
  std::printf(
      "{\"round_trips\": %.0f, \"seconds\": %.6f, \"round_trips_per_s\": %.1f, "
      "\"connections\": %zu, \"message_size\": %zu, \"messages_in_flight\": %zu, "
      "\"server_threads\": %d, \"errors\": %llu}\n",
      trips, seconds, trips / seconds, n_conn, msg, k, static_cast<int>(threads),
      static_cast<unsigned long long>(g_errors.load()));
  return g_errors.load() == 0 ? 0 : 1;
}
