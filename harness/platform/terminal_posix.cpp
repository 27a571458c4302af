#include <sys/ioctl.h>
#include <unistd.h>

#include "platform/terminal.hpp"

namespace iocpbench::platform {

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

unsigned stdout_terminal_columns() {
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

}  // namespace iocpbench::platform
