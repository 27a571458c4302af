// FileLock on Windows: LockFileEx on <target>.lock, on a byte range far past the pid text (a
// locked range cannot be read by others, and they must read the pid). Windows drops a dead
// process's locks with its handles, so a crash leaves a stale file that blocks nothing.
// Release deletes the file (delete-pending until the last handle closes) while still holding
// the lock; a new holder that finds its file delete-pending raced with a release and retries.

#include <string>

#include "platform/file_lock.hpp"
#include "platform/windows_api.hpp"

namespace iocpbench::platform {

namespace {

constexpr DWORD kLockOffsetHigh = 1;  // bytes 4 GiB .. 4 GiB + 1: never file content

std::string last_error_text(DWORD code) { return platform::win32_error_text(code); }

std::string read_small(HANDLE h) {
  char buffer[80];
  DWORD n = 0;
  OVERLAPPED at{};
  if (!ReadFile(h, buffer, sizeof buffer, &n, &at)) return {};
  return std::string(buffer, n);
}

bool lock_range(HANDLE h) {
  OVERLAPPED at{};
  at.OffsetHigh = kLockOffsetHigh;
  return LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &at) != 0;
}

bool delete_pending(HANDLE h) {
  FILE_STANDARD_INFO info{};
  return GetFileInformationByHandleEx(h, FileStandardInfo, &info, sizeof info) &&
         info.DeletePending;
}

}  // namespace

void FileLock::release() {
  if (handle_ == kNoHandle) return;
  HANDLE h = reinterpret_cast<HANDLE>(handle_);
  // Delete-pending while still locked (our handle shares delete); it fails only while someone
  // reads the file without sharing delete, and then a stale file stays, which blocks nothing.
  DeleteFileW(path_.wstring().c_str());
  CloseHandle(h);  // drops the lock; the file goes with the last handle
  handle_ = kNoHandle;
}

LockAttempt try_lock_file(const std::filesystem::path& lock_path) {
  LockAttempt attempt;
  for (int tries = 0; tries < 100; ++tries) {
    // No DELETE access: a reader of the pid (type, an editor) needs not share delete.
    HANDLE h = CreateFileW(lock_path.wstring().c_str(), GENERIC_READ | GENERIC_WRITE,
                           FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                           OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h == INVALID_HANDLE_VALUE) {
      const DWORD err = GetLastError();
      if (err == ERROR_ACCESS_DENIED && tries < 99) {  // delete-pending: a release in progress
        Sleep(5);
        continue;
      }
      attempt.error = "cannot open the lock file '" + lock_path.string() + "': " +
                      last_error_text(err);
      return attempt;
    }
    std::optional<std::uint64_t> pid;
    if (!lock_range(h)) {
      const DWORD err = GetLastError();
      const std::string text = read_small(h);
      CloseHandle(h);
      if (err == ERROR_LOCK_VIOLATION || err == ERROR_IO_PENDING) {
        attempt.busy = true;
        if (parse_lock_file_text(text, pid)) attempt.holder_pid = pid;
        return attempt;
      }
      attempt.error = "cannot lock '" + lock_path.string() + "': " + last_error_text(err);
      return attempt;
    }
    if (delete_pending(h)) {
      CloseHandle(h);
      Sleep(5);
      continue;
    }
    if (!parse_lock_file_text(read_small(h), pid)) {
      CloseHandle(h);
      attempt.error = "'" + lock_path.string() + "' exists and is not an iocpbench lock file "
                      "(left untouched; remove or rename it)";
      return attempt;
    }
    const std::string text = lock_file_text(GetCurrentProcessId());
    DWORD written = 0;
    OVERLAPPED at{};
    if (!SetEndOfFile(h) ||  // the file pointer is at 0: truncates a stale pid
        !WriteFile(h, text.data(), static_cast<DWORD>(text.size()), &written, &at) ||
        written != text.size()) {
      const DWORD err = GetLastError();
      FileLock doomed(lock_path, reinterpret_cast<std::intptr_t>(h));
      attempt.error = "cannot write the lock file '" + lock_path.string() + "': " +
                      last_error_text(err);
      return attempt;  // `doomed` removes the file
    }
    attempt.lock = FileLock(lock_path, reinterpret_cast<std::intptr_t>(h));
    return attempt;
  }
  attempt.error = "the lock file '" + lock_path.string() + "' kept being replaced";
  return attempt;
}

}  // namespace iocpbench::platform
