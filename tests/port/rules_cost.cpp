// The emulated port's uncontended hot path on one thread, for instruction counts (callgrind)
// before and after a change to the core (docs/port-semantics.md, "Cost of the rules"):
//   valgrind --tool=callgrind build/<name>/tests/port_rules_cost 2
// Prints the best time per iteration of its trials, for what that is worth on a quiet machine.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "port/completion_port.hpp"

using namespace iocpbench::port;

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::atoi(argv[1]) : 40;
  constexpr int kOps = 100000;
  auto port = make_port(Backend::emulated, {.concurrency = 2});
  double best_single_ns = 1e12, best_batch_ns = 1e12;
  Packet out[8];
  for (int trial = 0; trial < trials; ++trial) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kOps; ++i) {
      port->post({.key = static_cast<std::uintptr_t>(i)});
      Packet p;
      port->remove(p, Timeout{0});
    }
    const auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < kOps; ++i) {
      for (int k = 0; k < 4; ++k) port->post({.key = static_cast<std::uintptr_t>(k)});
      std::size_t n = 0;
      port->remove_batch(std::span<Packet>(out, 8), n, Timeout{0});
    }
    const auto t2 = std::chrono::steady_clock::now();
    const double single_ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / kOps;
    const double batch_ns = std::chrono::duration<double, std::nano>(t2 - t1).count() / kOps;
    if (single_ns < best_single_ns) best_single_ns = single_ns;
    if (batch_ns < best_batch_ns) best_batch_ns = batch_ns;
  }
  std::printf("post + remove(0): %.1f ns; 4 posts + batch remove: %.1f ns (best of %d trials)\n",
              best_single_ns, best_batch_ns, trials);
  return 0;
}
