#pragma once
// The data file of the file workload and of the `io` blocking kind.
//
// Never destroy what iocpbench did not create (docs/reliability.md, "File safety"):
// - A file that exists is used as it is: never truncated, extended or renamed over, and I/O
//   stays within its size. --file-size-mib applies only to a file iocpbench creates.
// - A file iocpbench creates is filled with data (not a sparse hole, which a device never
//   reads) under a temporary name beside it and renamed into place, while holding
//   <path>.lock, so two runs never see it half-created. Beside it iocpbench leaves the marker
//   <path>.iocpbench, naming the file's identity (device and inode, or volume and file index);
//   a file whose marker names it is "created by iocpbench". A user's file never has a marker
//   that names it (a file copied or renamed over ours has another identity).
// - Only the default data file (the temporary directory's iocpbench-<size>mib.dat) is ever
//   recreated, and only when its marker says iocpbench made it and its size is not the size
//   asked for.
// - Writes (--op write or mixed) into an existing file iocpbench did not create need
//   --overwrite.
// The rules once (data_file.cpp), over the OS calls of platform/data_file_os.hpp.

#include <cstdint>
#include <string>

namespace iocpbench::io {

struct DataFileRequest {
  std::string path;               // --file, or the default data file
  bool named = false;             // the user gave --file (errors then name it as theirs)
  std::uint64_t create_bytes = 0;  // --file-size-mib: the size of a file iocpbench creates
  std::uint64_t block_bytes = 1;   // one I/O (--block-size): the smallest usable file
  bool writes = false;            // --op write or mixed
  bool overwrite = false;         // --overwrite: consent to write a file iocpbench did not create
  bool direct = true;             // O_DIRECT / FILE_FLAG_NO_BUFFERING (no --buffered)
};

struct DataFile {
  std::string path;
  std::uint64_t bytes = 0;   // the bytes I/O may touch: the file's size (or create_bytes)
  bool created = false;      // iocpbench created it (this run or an earlier one: its marker)
  bool created_now = false;  // this call created it
};

// Checks, without changing anything there, that `request` can be served: an existing file is
// a regular file (or a block device on Linux) of at least one block that opens for the I/O
// asked for (O_DIRECT included), writes into someone else's file have --overwrite, and a file
// to create can be created in its directory (probed with a temporary file, removed at once).
// Throws BadInput naming --file, --overwrite or --block-size and the reason.
void check_data_file(const DataFileRequest& request);

// check_data_file, then creates the file when it is missing (or is a default file of the
// wrong size that iocpbench made). Throws BadInput when the path cannot be used, or
// std::runtime_error "--file: ..." on a fault while creating it (a full file system, a file
// size limit); a partial file is removed.
DataFile prepare_data_file(const DataFileRequest& request);

// The io blocking kind's default file: read-only use of `path`, created with `bytes` when
// missing. (The older entry point; `exact_size` false means a user's file.)
DataFile ensure_data_file(const std::string& path, std::uint64_t bytes, bool exact_size);

// The marker's name for a data file.
inline std::string data_file_marker(const std::string& path) { return path + ".iocpbench"; }

}  // namespace iocpbench::io
