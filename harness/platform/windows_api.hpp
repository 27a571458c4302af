#pragma once
// Windows only: <windows.h> without its rarely used parts (so that <winsock2.h> may follow it)
// and without the min/max macros, the text of a Win32 error code, a registry string.

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

// A REG_SZ value without its leading and trailing spaces ("" when absent).
std::string registry_string(HKEY root, const char* subkey, const char* value);

}  // namespace iocpbench::platform
