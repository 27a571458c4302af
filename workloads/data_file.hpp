#pragma once
// The data file of the file workload and of the `io` blocking kind: created once, filled with
// data (not a sparse hole, which a device never reads), reused when present with the right size.
// One implementation per OS (data_file_linux.cpp).

#include <cstdint>
#include <string>

namespace iocpbench::workloads {

struct DataFile {
  std::string path;
  std::uint64_t bytes = 0;
  bool created = false;
};

// Ensures `path` exists with at least `bytes` bytes (an existing file the user named is used
// as it is when large enough; the default file must have exactly its size). Creation writes a
// temporary file beside it and renames it, so concurrent runs never see a half-written file.
// Throws std::runtime_error with the reason.
DataFile ensure_data_file(const std::string& path, std::uint64_t bytes, bool exact_size);

}  // namespace iocpbench::workloads
