// The data file on Windows (the rules are in data_file.hpp). A file's identity for the marker
// is its volume serial number and file index (GetFileInformationByHandle). Only regular files
// are used (no raw volumes). The probe of a file to create uses FILE_FLAG_NO_BUFFERING when
// direct I/O is asked for, as the workload's own open does.

#include <windows.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/errors.hpp"
#include "core/random.hpp"
#include "platform/file_lock.hpp"
#include "io/data_file.hpp"

namespace iocpbench::workloads {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMarkerHeader = "iocpbench data file\n";
constexpr double kCreateWaitS = 600;

std::string who(const DataFileRequest& r) {
  return (r.named ? "'" : "the default data file '") + r.path + "'";
}

[[noreturn]] void refuse(const DataFileRequest& r, const std::string& why) {
  throw BadInput{"--file", who(r) + " " + why};
}

std::string op_text(const DataFileRequest& r) {
  return r.writes ? "--op write/mixed" : "--op read";
}

std::string error_text(DWORD code) {
  char* text = nullptr;
  const DWORD n = FormatMessageA(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM |
                                     FORMAT_MESSAGE_IGNORE_INSERTS,
                                 nullptr, code, 0, reinterpret_cast<char*>(&text), 0, nullptr);
  std::string out = n > 0 && text ? std::string(text, n) : "error " + std::to_string(code);
  if (text) LocalFree(text);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == '.')) {
    out.pop_back();
  }
  return out;
}

// The identity text of the file at `path`, or empty when it cannot be opened.
std::string identity_text(const std::string& path) {
  HANDLE h = CreateFileA(path.c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                         nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) return {};
  BY_HANDLE_FILE_INFORMATION info{};
  const bool ok = GetFileInformationByHandle(h, &info) != 0;
  CloseHandle(h);
  if (!ok) return {};
  const std::uint64_t index =
      (std::uint64_t{info.nFileIndexHigh} << 32) | std::uint64_t{info.nFileIndexLow};
  return std::string(kMarkerHeader) + "volume " + std::to_string(info.dwVolumeSerialNumber) +
         "\nindex " + std::to_string(index) + "\n";
}

std::string read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  char buffer[256];
  in.read(buffer, sizeof buffer);
  return std::string(buffer, static_cast<std::size_t>(in.gcount()));
}

bool made_by_iocpbench(const std::string& path) {
  const std::string identity = identity_text(path);
  return !identity.empty() && read_small_file(data_file_marker(path)) == identity;
}

// Never overwrites a file of the marker's name that is not one of our markers.
void write_marker(const std::string& path) {
  const std::string marker = data_file_marker(path);
  std::error_code ec;
  if (fs::exists(marker, ec) && (!fs::is_regular_file(marker, ec) ||
                                 read_small_file(marker).rfind(kMarkerHeader, 0) != 0)) {
    return;
  }
  const std::string identity = identity_text(path);
  if (identity.empty()) return;
  const std::string temp = marker + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << identity;
    if (!out) {
      out.close();
      fs::remove(temp, ec);
      return;
    }
  }
  fs::rename(temp, marker, ec);
  if (ec) fs::remove(temp, ec);
}

enum class State { missing, usable, recreate };

struct Found {
  State state = State::missing;
  std::uint64_t bytes = 0;
  bool ours = false;
};

Found inspect(const DataFileRequest& r) {
  Found found;
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(r.path, ec);
  if (ec || link.type() == fs::file_type::not_found) {
    if (link.type() == fs::file_type::not_found) return found;
    refuse(r, "cannot be used: " + ec.message());
  }
  const fs::file_status st = fs::status(r.path, ec);
  if (st.type() == fs::file_type::not_found) {
    refuse(r, "is a dangling symbolic link; iocpbench does not create files through links");
  }
  if (ec) refuse(r, "cannot be used: " + ec.message());
  if (st.type() == fs::file_type::directory) {
    refuse(r, "is a directory, not a regular file");
  }
  if (st.type() != fs::file_type::regular) refuse(r, "is not a regular file");
  found.bytes = fs::file_size(r.path, ec);
  if (ec) refuse(r, "cannot be used: " + ec.message());
  found.ours = made_by_iocpbench(r.path);
  found.state = !r.named && found.ours && found.bytes != r.create_bytes ? State::recreate
                                                                        : State::usable;
  return found;
}

void check_usable(const DataFileRequest& r, const Found& found) {
  if (found.bytes < r.block_bytes) {
    refuse(r, "has " + std::to_string(found.bytes) + " bytes, less than one block (" +
                  std::to_string(r.block_bytes) + " bytes, --block-size)");
  }
  if (r.writes && !found.ours && !r.overwrite) {
    throw BadInput{"--overwrite", who(r) + " exists and was not created by iocpbench; " +
                                      op_text(r) + " would overwrite its data: pass --overwrite "
                                      "to allow that"};
  }
  const DWORD access = r.writes ? GENERIC_READ | GENERIC_WRITE : GENERIC_READ;
  const DWORD flags = FILE_ATTRIBUTE_NORMAL | (r.direct ? FILE_FLAG_NO_BUFFERING : 0);
  HANDLE h = CreateFileA(r.path.c_str(), access, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr,
                         OPEN_EXISTING, flags, nullptr);
  if (h != INVALID_HANDLE_VALUE) {
    CloseHandle(h);
    return;
  }
  const DWORD err = GetLastError();
  if (err == ERROR_INVALID_PARAMETER && r.direct) {
    refuse(r, "is on a volume that refuses FILE_FLAG_NO_BUFFERING; pass --buffered");
  }
  if (err == ERROR_WRITE_PROTECT) {
    refuse(r, "is on a write-protected volume, and " + op_text(r) + " writes it");
  }
  refuse(r, std::string("cannot be opened for ") + (r.writes ? "writing" : "reading") + ": " +
                error_text(err));
}

void check_creatable(const DataFileRequest& r) {
  const fs::path path(r.path);
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    refuse(r, "cannot be created: directory '" + dir.string() + "' does not exist");
  }
  if (!fs::is_directory(dir, ec)) {
    refuse(r, "cannot be created: '" + dir.string() + "' is not a directory");
  }
  const std::string probe = r.path + ".probe." + std::to_string(GetCurrentProcessId());
  const DWORD flags = FILE_ATTRIBUTE_NORMAL | FILE_FLAG_DELETE_ON_CLOSE |
                      (r.direct ? FILE_FLAG_NO_BUFFERING : 0);
  HANDLE h = CreateFileA(probe.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW, flags, nullptr);
  if (h == INVALID_HANDLE_VALUE) {
    refuse(r, "cannot be created: " + error_text(GetLastError()));
  }
  CloseHandle(h);  // FILE_FLAG_DELETE_ON_CLOSE removes the probe
}

Found check(const DataFileRequest& r) {
  const Found found = inspect(r);
  if (found.state == State::usable) {
    check_usable(r, found);
  } else {
    check_creatable(r);
  }
  return found;
}

[[noreturn]] void fault(const DataFileRequest& r, const std::string& what) {
  throw std::runtime_error("--file: cannot " + what + " " + r.path);
}

void create(const DataFileRequest& r) {
  const std::string temp = r.path + ".tmp." + std::to_string(GetCurrentProcessId());
  std::error_code ec;
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) fault(r, "create");
    std::vector<std::uint64_t> chunk((1u << 20) / sizeof(std::uint64_t));
    std::uint64_t x = 0x2545F4914F6CDD1Dull;
    for (std::uint64_t written = 0; written < r.create_bytes;) {
      for (auto& word : chunk) {
        word = core::xorshift64(x);
      }
      const auto want = std::min<std::uint64_t>(r.create_bytes - written, chunk.size() * 8);
      out.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(want));
      if (!out) {
        out.close();
        fs::remove(temp, ec);
        fault(r, "fill");
      }
      written += want;
    }
    out.flush();
    if (!out) {
      out.close();
      fs::remove(temp, ec);
      fault(r, "write");
    }
  }
  fs::rename(temp, r.path, ec);
  if (ec) {
    fs::remove(temp, ec);
    fault(r, "rename a new file to");
  }
}

}  // namespace

void check_data_file(const DataFileRequest& request) { check(request); }

DataFile prepare_data_file(const DataFileRequest& r) {
  Found found = check(r);
  if (found.state == State::usable) return {r.path, found.bytes, found.ours, false};
  const auto lock_path = report::lock_path_for(r.path);
  report::LockAttempt attempt = report::wait_lock_file(lock_path, kCreateWaitS);
  if (!attempt.lock.held()) {
    if (attempt.busy) {
      throw std::runtime_error(
          "--file: " + who(r) + " is still being created by another process (" +
          (attempt.holder_pid ? "pid " + std::to_string(*attempt.holder_pid) : "pid unknown") +
          ")");
    }
    refuse(r, "cannot be created: " + attempt.error);
  }
  found = check(r);
  if (found.state == State::usable) return {r.path, found.bytes, found.ours, false};
  create(r);
  write_marker(r.path);
  return {r.path, r.create_bytes, true, true};
}

DataFile ensure_data_file(const std::string& path, std::uint64_t bytes, bool exact_size) {
  DataFileRequest request;
  request.path = path;
  request.named = !exact_size;
  request.create_bytes = bytes;
  request.block_bytes = 4096;
  request.direct = false;  // the caller opens it unbuffered and says so when that fails
  return prepare_data_file(request);
}

}  // namespace iocpbench::workloads
