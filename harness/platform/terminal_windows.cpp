#include <io.h>

#include <cstdio>

#include "platform/terminal.hpp"

namespace iocpbench::platform {

bool stderr_is_terminal() { return _isatty(_fileno(stderr)) != 0; }

}  // namespace iocpbench::platform
