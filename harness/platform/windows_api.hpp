#pragma once
// Windows only: <windows.h> without its rarely used parts (so that <winsock2.h> may follow it)
// and without the min/max macros, and the text of a Win32 error code.

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <string>

namespace iocpbench::platform {

// FormatMessage's text for `code`, without its trailing period and line break ("error N" when
// Windows has none).
std::string win32_error_text(DWORD code);

}  // namespace iocpbench::platform
