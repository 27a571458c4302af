// The data file's OS calls on Windows (data_file_os.hpp). A file's identity for the marker is
// its volume serial number and file index (GetFileInformationByHandle). Only regular files are
// used (no raw volumes). The probe of a file to create uses FILE_FLAG_NO_BUFFERING when direct
// I/O is asked for, as the workload's own open does.

#include "platform/data_file_os.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "platform/windows_api.hpp"

namespace iocpbench::platform {
namespace {

namespace fs = std::filesystem;

std::string error_text(DWORD code) {
  return win32_error_text(code);
}

}  // namespace

std::string inspect_data_path(const std::string& path, PathState& out) {
  out = PathState{};
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(path, ec);
  if (ec || link.type() == fs::file_type::not_found) {
    if (link.type() == fs::file_type::not_found) return {};
    return "cannot be used: " + ec.message();
  }
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) {
    return "is a dangling symbolic link; iocpbench does not create files through links";
  }
  if (ec) return "cannot be used: " + ec.message();
  if (st.type() == fs::file_type::directory) return "is a directory, not a regular file";
  if (st.type() != fs::file_type::regular) return "is not a regular file";
  out.bytes = fs::file_size(path, ec);
  if (ec) return "cannot be used: " + ec.message();
  out.exists = true;
  out.regular = true;
  return {};
}

std::string file_identity(const std::string& path, const char* header) {
  HANDLE h = CreateFileA(path.c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                         nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) return {};
  BY_HANDLE_FILE_INFORMATION info{};
  const bool ok = GetFileInformationByHandle(h, &info) != 0;
  CloseHandle(h);
  if (!ok) return {};
  const std::uint64_t index =
      (std::uint64_t{info.nFileIndexHigh} << 32) | std::uint64_t{info.nFileIndexLow};
  return std::string(header) + "volume " + std::to_string(info.dwVolumeSerialNumber) + "\nindex " +
         std::to_string(index) + "\n";
}

std::string read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  char buffer[256];
  in.read(buffer, sizeof buffer);
  return std::string(buffer, static_cast<std::size_t>(in.gcount()));
}

std::string small_file_note(const std::string&) {
  return {};
}

std::string open_refusal(const std::string& path, bool writes, bool direct,
                         const std::string& op_text) {
  const DWORD access = writes ? GENERIC_READ | GENERIC_WRITE : GENERIC_READ;
  const DWORD flags = FILE_ATTRIBUTE_NORMAL | (direct ? FILE_FLAG_NO_BUFFERING : 0);
  HANDLE h = CreateFileA(path.c_str(), access, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr,
                         OPEN_EXISTING, flags, nullptr);
  if (h != INVALID_HANDLE_VALUE) {
    CloseHandle(h);
    return {};
  }
  const DWORD err = GetLastError();
  if (err == ERROR_INVALID_PARAMETER && direct) {
    return "is on a volume that refuses FILE_FLAG_NO_BUFFERING; pass --buffered";
  }
  if (err == ERROR_WRITE_PROTECT) {
    return "is on a write-protected volume, and " + op_text + " writes it";
  }
  return std::string("cannot be opened for ") + (writes ? "writing" : "reading") + ": " +
         error_text(err);
}

std::string create_refusal(const std::string& path_text, bool direct) {
  const fs::path path(path_text);
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    return "cannot be created: directory '" + dir.string() + "' does not exist";
  }
  if (!fs::is_directory(dir, ec))
    return "cannot be created: '" + dir.string() + "' is not a directory";
  const std::string probe = path_text + ".probe." + std::to_string(GetCurrentProcessId());
  const DWORD flags =
      FILE_ATTRIBUTE_NORMAL | FILE_FLAG_DELETE_ON_CLOSE | (direct ? FILE_FLAG_NO_BUFFERING : 0);
  HANDLE h = CreateFileA(probe.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW, flags, nullptr);
  if (h == INVALID_HANDLE_VALUE) return "cannot be created: " + error_text(GetLastError());
  CloseHandle(h);  // FILE_FLAG_DELETE_ON_CLOSE removes the probe
  return {};
}

WriteFault write_new_file(const std::string& path, std::uint64_t bytes,
                          const std::function<void(std::uint64_t*, std::size_t)>& fill) {
  const std::string temp = path + ".tmp." + std::to_string(GetCurrentProcessId());
  std::error_code ec;
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return {"create", ""};
    std::vector<std::uint64_t> chunk((1u << 20) / sizeof(std::uint64_t));
    for (std::uint64_t written = 0; written < bytes;) {
      fill(chunk.data(), chunk.size());
      const auto want = std::min<std::uint64_t>(bytes - written, chunk.size() * 8);
      out.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(want));
      if (!out) {
        out.close();
        fs::remove(temp, ec);
        return {"fill", ""};
      }
      written += want;
    }
    out.flush();
    if (!out) {
      out.close();
      fs::remove(temp, ec);
      return {"write", ""};
    }
  }
  fs::rename(temp, path, ec);
  if (ec) {
    fs::remove(temp, ec);
    return {"rename a new file to", ""};
  }
  return {};
}

void write_marker_file(const std::string& marker, const std::string& text, const char* header) {
  std::error_code ec;
  if (fs::exists(marker, ec) &&
      (!fs::is_regular_file(marker, ec) || read_small_file(marker).rfind(header, 0) != 0)) {
    return;
  }
  const std::string temp = marker + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) {
      out.close();
      fs::remove(temp, ec);
      return;
    }
  }
  fs::rename(temp, marker, ec);
  if (ec) fs::remove(temp, ec);
}

}  // namespace iocpbench::platform
