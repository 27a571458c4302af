#include <unistd.h>

#include "platform/terminal.hpp"

namespace iocpbench::platform {

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

}  // namespace iocpbench::platform
