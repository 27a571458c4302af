// Machine metadata on Windows: the version from RtlGetVersion (GetVersionEx lies to programs
// without a manifest), the product name from the registry, the CPUs' shape from
// cpu_topology_windows.cpp, memory from GlobalMemoryStatusEx, and whether this is Wine.

#include "platform/windows_api.hpp"  // first: the lean <windows.h>

#include <sstream>

#include "platform/platform.hpp"
#include "platform/machine_info.hpp"

namespace iocpbench::platform {
namespace {

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

  m.topology = gather_cpu_topology();
  m.cpu_model = m.topology->cpu_model.value_or("unknown");
  m.logical_cpus = platform::logical_cpus();
  m.cores = m.topology->physical_cores.value_or(m.logical_cpus);

  MEMORYSTATUSEX memory{};
  memory.dwLength = sizeof memory;
  if (GlobalMemoryStatusEx(&memory)) m.memory_bytes = memory.ullTotalPhys;
  m.wine_version = platform::wine_version();
  return m;
}

}  // namespace iocpbench::platform
