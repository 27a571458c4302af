#pragma once
// Wall-clock timestamps for results files (ISO 8601, UTC).

#include <string>

namespace iocpbench::core {

std::string utc_timestamp();  // e.g. "2026-11-29T13:05:00Z"

}  // namespace iocpbench::core
