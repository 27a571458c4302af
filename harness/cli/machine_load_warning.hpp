#pragma once
// The one warning line of a run or sweep measured on a busy machine (engine/machine_load.hpp
// marks each run; this counts the marks in the results written).

#include <optional>
#include <string>
#include <vector>

#include "results/document.hpp"

namespace iocpbench::cli {

// "the machine was busy during 3 of 12 runs (other processes used 41% of the CPUs); numbers may
// be low", or nothing when no run was busy. The reasons are the busiest run's.
std::optional<std::string> busy_machine_warning(const std::vector<results::PointResult>& points);

}  // namespace iocpbench::cli
