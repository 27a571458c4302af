#pragma once
// SIGINT / SIGTERM ask a long command to stop: the current run is abandoned, the results file is
// written with sweep.complete = false, and the program exits 130.

#include <atomic>

namespace iocpbench::cli {

// Installs the handlers (once) and returns the flag they set.
const std::atomic<bool>& install_interrupt_handlers();

}  // namespace iocpbench::cli
