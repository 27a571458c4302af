// Machine metadata on Windows: the version from RtlGetVersion (GetVersionEx lies to programs
// without a manifest), the product name and CPU from the registry, memory from
// GlobalMemoryStatusEx, and whether this is Wine.

#include "platform/windows_api.hpp"  // first: the lean <windows.h>

#include <sstream>
#include <vector>

#include "platform/platform.hpp"
#include "platform/machine_info.hpp"

namespace iocpbench::platform {
namespace {

std::string registry_string(HKEY root, const char* subkey, const char* value) {
  char buffer[512];
  DWORD size = sizeof buffer;
  if (RegGetValueA(root, subkey, value, RRF_RT_REG_SZ, nullptr, buffer, &size) != ERROR_SUCCESS) {
    return {};
  }
  std::string text(buffer);
  const auto first = text.find_first_not_of(' ');
  const auto last = text.find_last_not_of(' ');
  return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

// RtlGetVersion reports the real version; GetVersionEx reports 6.2 without a manifest.
OSVERSIONINFOEXW real_version() {
  OSVERSIONINFOEXW info{};
  info.dwOSVersionInfoSize = sizeof info;
  using RtlGetVersion = LONG(WINAPI*)(OSVERSIONINFOEXW*);
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  FARPROC proc = ntdll != nullptr ? GetProcAddress(ntdll, "RtlGetVersion") : nullptr;
  if (proc != nullptr) {
    reinterpret_cast<RtlGetVersion>(reinterpret_cast<void*>(proc))(&info);
  }
  return info;
}

unsigned physical_cores() {
  DWORD length = 0;
  GetLogicalProcessorInformationEx(RelationProcessorCore, nullptr, &length);
  if (GetLastError() != ERROR_INSUFFICIENT_BUFFER || length == 0) return 0;
  std::vector<char> buffer(length);
  auto* first = reinterpret_cast<SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX*>(buffer.data());
  if (!GetLogicalProcessorInformationEx(RelationProcessorCore, first, &length)) return 0;
  unsigned cores = 0;
  for (DWORD offset = 0; offset < length;) {
    auto* entry = reinterpret_cast<SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX*>(buffer.data() + offset);
    if (entry->Size == 0) break;
    if (entry->Relationship == RelationProcessorCore) ++cores;
    offset += entry->Size;
  }
  return cores;
}

}  // namespace

MachineInfo gather_machine_info() {
  MachineInfo m;
  m.os = "Windows";
  const OSVERSIONINFOEXW version = real_version();
  constexpr const char* kCurrentVersion = "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion";
  std::string product = registry_string(HKEY_LOCAL_MACHINE, kCurrentVersion, "ProductName");
  // Windows 11 still names itself "Windows 10" in ProductName; its builds start at 22000.
  if (version.dwMajorVersion == 10 && version.dwBuildNumber >= 22000) {
    const auto at = product.find("Windows 10");
    if (at != std::string::npos) product.replace(at, 10, "Windows 11");
  }
  const std::string display = registry_string(HKEY_LOCAL_MACHINE, kCurrentVersion, "DisplayVersion");
  std::ostringstream kernel;
  kernel << version.dwMajorVersion << '.' << version.dwMinorVersion << '.' << version.dwBuildNumber;
  m.kernel = kernel.str();
  std::ostringstream os_version;
  os_version << (product.empty() ? std::string("Windows") : product);
  if (!display.empty()) os_version << ' ' << display;
  os_version << " (build " << version.dwBuildNumber << ')';
  m.os_version = os_version.str();

  char host[256];
  DWORD host_size = sizeof host;
  if (GetComputerNameExA(ComputerNameDnsHostname, host, &host_size)) m.hostname = host;

  m.cpu_model = registry_string(HKEY_LOCAL_MACHINE,
                                "HARDWARE\\DESCRIPTION\\System\\CentralProcessor\\0",
                                "ProcessorNameString");
  if (m.cpu_model.empty()) m.cpu_model = "unknown";
  m.logical_cpus = platform::logical_cpus();
  const unsigned cores = physical_cores();
  m.cores = cores == 0 ? m.logical_cpus : cores;

  MEMORYSTATUSEX memory{};
  memory.dwLength = sizeof memory;
  if (GlobalMemoryStatusEx(&memory)) m.memory_bytes = memory.ullTotalPhys;
  m.wine_version = platform::wine_version();
  return m;
}

}  // namespace iocpbench::platform
