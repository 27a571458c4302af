#pragma once
// Progress of a long sweep on stderr: runs done of total, the current point, elapsed time and an
// estimate of what is left. Redrawn in place on a terminal; one plain line per run otherwise
// (logs, CI); nothing with --quiet.

#include <chrono>
#include <string>

namespace iocpbench::sweep {

class Progress {
 public:
  Progress(std::size_t total_runs, bool quiet);
  void starting(const std::string& what);
  void finished_one();
  void done();
  // A line that must not be overwritten by the next redraw (a warning).
  void note(const std::string& line);

 private:
  void draw();
  std::size_t total_, done_ = 0;
  bool quiet_, terminal_;
  std::string current_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace iocpbench::sweep
