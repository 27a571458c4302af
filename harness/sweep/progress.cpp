#include "sweep/progress.hpp"

#include <cstdio>
#include <iostream>

#include "platform/terminal.hpp"

namespace iocpbench::sweep {
namespace {

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%ld:%02ld", s / 60, s % 60);
  return buffer;
}

}  // namespace

Progress::Progress(std::size_t total_runs, bool quiet)
    : total_(total_runs), quiet_(quiet), terminal_(platform::stderr_is_terminal()) {}

void Progress::starting(const std::string& what) {
  current_ = what;
  if (terminal_) draw();
}

void Progress::finished_one() {
  ++done_;
  draw();
}

void Progress::draw() {
  if (quiet_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string left = "?";
  if (done_ > 0) left = clock_text(elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_));
  std::string line = "[" + std::to_string(done_) + "/" + std::to_string(total_) + " runs] " +
                     current_ + "  elapsed " + clock_text(elapsed) + "  left ~" + left;
  if (terminal_) {
    std::cerr << "\r\033[K" << line << std::flush;
  } else {
    std::cerr << line << '\n';
  }
}

void Progress::note(const std::string& line) {  // warnings print even with --quiet
  if (terminal_ && !quiet_) std::cerr << "\r\033[K";
  std::cerr << line << '\n';
  if (terminal_ && !quiet_) draw();
}

void Progress::done() {
  if (!quiet_ && terminal_) std::cerr << '\n';
}

}  // namespace iocpbench::sweep
