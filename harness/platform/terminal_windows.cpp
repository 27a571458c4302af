#include "platform/windows_api.hpp"  // first: the lean <windows.h>

#include <io.h>

#include <cstdio>

#include "platform/terminal.hpp"

namespace iocpbench::platform {

bool stderr_is_terminal() { return _isatty(_fileno(stderr)) != 0; }

unsigned stdout_terminal_columns() {
  CONSOLE_SCREEN_BUFFER_INFO info{};
  if (!GetConsoleScreenBufferInfo(GetStdHandle(STD_OUTPUT_HANDLE), &info)) return 0;
  const int columns = info.srWindow.Right - info.srWindow.Left + 1;
  return columns > 0 ? static_cast<unsigned>(columns) : 0;
}

}  // namespace iocpbench::platform
