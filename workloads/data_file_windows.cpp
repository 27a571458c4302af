// The data file on Windows: written with standard streams under a temporary name, then renamed.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "workloads/data_file.hpp"

namespace iocpbench::workloads {

DataFile ensure_data_file(const std::string& path, std::uint64_t bytes, bool exact_size) {
  namespace fs = std::filesystem;
  DataFile file{path, bytes, false};
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    const std::uint64_t size = fs::file_size(path, ec);
    if (!ec && (exact_size ? size == bytes : size >= bytes)) {
      file.bytes = exact_size ? bytes : size;
      return file;
    }
  }
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot create " + temp);
    std::vector<std::uint64_t> chunk((1u << 20) / sizeof(std::uint64_t));
    std::uint64_t x = 0x2545F4914F6CDD1Dull;
    for (std::uint64_t written = 0; written < bytes;) {
      for (auto& word : chunk) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        word = x;
      }
      const auto want = std::min<std::uint64_t>(bytes - written, chunk.size() * 8);
      out.write(reinterpret_cast<const char*>(chunk.data()), static_cast<std::streamsize>(want));
      if (!out) throw std::runtime_error("cannot fill " + path);
      written += want;
    }
  }
  fs::rename(temp, path, ec);
  if (ec) {
    fs::remove(temp, ec);
    throw std::runtime_error("cannot rename to " + path);
  }
  file.created = true;
  return file;
}

}  // namespace iocpbench::workloads
