#pragma once
// Whether stderr is a terminal (progress redraws in place there, prints plain lines elsewhere).
// One file per OS: terminal_posix.cpp, terminal_windows.cpp.

namespace iocpbench::platform {

bool stderr_is_terminal();

}  // namespace iocpbench::platform
