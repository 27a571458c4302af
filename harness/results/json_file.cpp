#include "results/json_file.hpp"

#include <fstream>
#include <random>
#include <stdexcept>
#include <system_error>

namespace iocpbench::results {

namespace fs = std::filesystem;

std::optional<std::string> output_path_problem(const fs::path& path) {
  if (path.empty()) return "empty path";
  std::error_code ec;
  if (fs::is_directory(path, ec)) return "'" + path.string() + "' is a directory";
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec)) return "directory '" + parent.string() + "' does not exist";
  // Probe writability with a file of our own, so the target is never created or truncated here.
  const fs::path probe = parent / (".iocpbench-write-test-" + std::to_string(std::random_device{}()));
  {
    std::ofstream out(probe);
    if (!out) return "directory '" + parent.string() + "' is not writable";
  }
  fs::remove(probe, ec);
  return std::nullopt;
}

void write_json_atomically(const fs::path& path, const nlohmann::json& document) {
  const fs::path temp = path.string() + ".tmp-" + std::to_string(std::random_device{}());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot create " + temp.string());
    out << document.dump(2) << '\n';
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(temp, ec);
      throw std::runtime_error("cannot write " + temp.string());
    }
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) {
    fs::remove(temp, ec);
    throw std::runtime_error("cannot rename onto " + path.string() + ": " + ec.message());
  }
}

}  // namespace iocpbench::results
