#pragma once
// Absent is null in schema v1, never 0 or "": the one spelling of that rule for results/ and
// the layers above it.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace iocpbench::results {

template <typename T>
nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

// An empty text (no hint, no reason) is null.
inline nlohmann::json or_null(const std::string& text) {
  return text.empty() ? nlohmann::json() : nlohmann::json(text);
}

}  // namespace iocpbench::results
