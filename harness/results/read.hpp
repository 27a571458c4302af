#pragma once
// Reading schema-v1 documents back: every file the code has written since schema v1 (older
// points lack dispatch, metrics, blocking_fidelity; older runs lack handler_time,
// blocked_only_ratio), so from_json(to_json(doc)) and to_json(from_json(file)) are the same
// documents (tests/results/round_trip_test.cpp).

#include <string>

#include <nlohmann/json.hpp>

#include "results/document.hpp"

namespace iocpbench::results {

// Throws std::invalid_argument when `json` is not a results document of schema version 1, and
// nlohmann::json::exception when a field has the wrong type.
ResultsDocument from_json(const nlohmann::json& json);


}  // namespace iocpbench::results
