#pragma once
// Results files are written whole or not at all: a temporary file beside the target, then a
// rename, so an interrupted write never leaves a truncated file.

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace iocpbench::results {

// Why `path` cannot be written (missing directory, not writable, is a directory), or nothing.
std::optional<std::string> output_path_problem(const std::filesystem::path& path);

// Throws std::runtime_error on failure; `path` is untouched then.
void write_json_atomically(const std::filesystem::path& path, const nlohmann::json& document);

}  // namespace iocpbench::results
