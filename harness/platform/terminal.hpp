#pragma once
// Whether stderr is a terminal (progress redraws in place there, prints plain lines elsewhere),
// and how wide stdout's terminal is (--help wraps to it). One file per OS: terminal_posix.cpp,
// terminal_windows.cpp.

namespace iocpbench::platform {

bool stderr_is_terminal();
// The columns of the terminal stdout writes to; 0 when stdout is not a terminal or the OS does
// not say.
unsigned stdout_terminal_columns();

}  // namespace iocpbench::platform
