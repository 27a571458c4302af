#include "cli/interrupt.hpp"

#include <csignal>

namespace iocpbench::cli {
namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

extern "C" void iocpbench_on_interrupt(int) { g_stop.store(true); }

}  // namespace

const std::atomic<bool>& install_interrupt_handlers() {
  std::signal(SIGINT, iocpbench_on_interrupt);
  std::signal(SIGTERM, iocpbench_on_interrupt);
  return g_stop;
}

}  // namespace iocpbench::cli
