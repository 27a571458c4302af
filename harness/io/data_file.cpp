// The data file, on every OS: the rules of data_file.hpp, over the OS calls of
// platform/data_file_os.hpp (which phrase their refusals in the OS's own terms).

#include "io/data_file.hpp"

#include <stdexcept>
#include <vector>

#include "core/errors.hpp"
#include "core/random.hpp"
#include "platform/data_file_os.hpp"
#include "platform/file_lock.hpp"

namespace iocpbench::io {
namespace {

constexpr const char* kMarkerHeader = "iocpbench data file\n";
constexpr double kCreateWaitS = 600;  // another run creating the same file: at most this long

std::string who(const DataFileRequest& r) {
  return (r.named ? "'" : "the default data file '") + r.path + "'";
}

[[noreturn]] void refuse(const DataFileRequest& r, const std::string& why) {
  throw BadInput{"--file", who(r) + " " + why};
}

std::string op_text(const DataFileRequest& r) {
  return r.writes ? "--op write/mixed" : "--op read";
}

enum class State { missing, usable, recreate };

struct Found {
  State state = State::missing;
  std::uint64_t bytes = 0;
  bool ours = false;
};

// Our marker beside `path` names exactly this file.
bool made_by_iocpbench(const std::string& path, const platform::PathState& st) {
  if (!st.regular) return false;
  const std::string identity = platform::file_identity(path, kMarkerHeader);
  return !identity.empty() && platform::read_small_file(data_file_marker(path)) == identity;
}

// What is at the path now; refuses what can never be used (a directory, a FIFO, ...).
Found inspect(const DataFileRequest& r) {
  Found found;
  platform::PathState st;
  const std::string why = platform::inspect_data_path(r.path, st);
  if (!why.empty()) refuse(r, why);
  if (!st.exists) return found;
  found.bytes = st.bytes;
  found.ours = made_by_iocpbench(r.path, st);
  // Only iocpbench's own default file is ever replaced, and only to give it the size asked for.
  found.state =
      !r.named && found.ours && found.bytes != r.create_bytes ? State::recreate : State::usable;
  return found;
}

// An existing file: big enough, writable only with consent, and it opens for the I/O asked for.
void check_usable(const DataFileRequest& r, const Found& found) {
  if (found.bytes < r.block_bytes) {
    refuse(r, "has " + std::to_string(found.bytes) + " bytes, less than one block (" +
                  std::to_string(r.block_bytes) + " bytes, --block-size)" +
                  platform::small_file_note(r.path));
  }
  if (r.writes && !found.ours && !r.overwrite) {
    throw BadInput{"--overwrite", who(r) + " exists and was not created by iocpbench; " +
                                      op_text(r) +
                                      " would overwrite its data: pass --overwrite "
                                      "to allow that"};
  }
  const std::string why = platform::open_refusal(r.path, r.writes, r.direct, op_text(r));
  if (!why.empty()) refuse(r, why);
}

Found check(const DataFileRequest& r) {
  const Found found = inspect(r);
  if (found.state == State::usable) {
    check_usable(r, found);
  } else {
    const std::string why = platform::create_refusal(r.path, r.direct);
    if (!why.empty()) refuse(r, why);
  }
  return found;
}

// Fills the file with pseudo-random data (not a sparse hole, which a device never reads) under
// a temporary name and renames it into place; then writes its marker.
void create(const DataFileRequest& r) {
  std::uint64_t x = 0x2545F4914F6CDD1Dull;
  const auto fill = [&x](std::uint64_t* words, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) words[i] = core::xorshift64(x);
  };
  const platform::WriteFault fault = platform::write_new_file(r.path, r.create_bytes, fill);
  if (fault.failed()) {
    throw std::runtime_error("--file: cannot " + fault.what + " " + r.path + fault.reason);
  }
  const std::string identity = platform::file_identity(r.path, kMarkerHeader);
  if (!identity.empty()) {
    platform::write_marker_file(data_file_marker(r.path), identity, kMarkerHeader);
  }
}

}  // namespace

void check_data_file(const DataFileRequest& request) {
  check(request);
}

DataFile prepare_data_file(const DataFileRequest& r) {
  Found found = check(r);
  if (found.state == State::usable) return {r.path, found.bytes, found.ours, false};

  // Created under a lock, so that another run waits and then finds the whole file.
  const auto lock_path = platform::lock_path_for(r.path);
  platform::LockAttempt attempt = platform::wait_lock_file(lock_path, kCreateWaitS);
  if (!attempt.lock.held()) {
    if (attempt.busy) {
      throw std::runtime_error(
          "--file: " + who(r) + " is still being created by another process (" +
          (attempt.holder_pid ? "pid " + std::to_string(*attempt.holder_pid) : "pid unknown") +
          ") after " + std::to_string(static_cast<int>(kCreateWaitS)) + " s");
    }
    refuse(r, "cannot be created: " + attempt.error);
  }
  found = check(r);  // it may have appeared while we waited
  if (found.state == State::usable) return {r.path, found.bytes, found.ours, false};
  create(r);
  return {r.path, r.create_bytes, true, true};
}

DataFile ensure_data_file(const std::string& path, std::uint64_t bytes, bool exact_size) {
  DataFileRequest request;
  request.path = path;
  request.named = !exact_size;
  request.create_bytes = bytes;
  request.block_bytes = 4096;
  request.direct = false;  // the caller opens it for direct I/O and says so when that fails
  return prepare_data_file(request);
}

}  // namespace iocpbench::io
