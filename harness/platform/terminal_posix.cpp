#include <unistd.h>

#include "platform/terminal.hpp"

namespace iocpbench::report {

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

}  // namespace iocpbench::report
