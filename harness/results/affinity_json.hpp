#pragma once
// points[].affinity (engine/affinity.hpp): where the workers and the load generator's threads
// were pinned, as schema v1 spells it.

#include <nlohmann/json.hpp>

#include "engine/run_point.hpp"

namespace iocpbench::results {

// {workers: {spec, order, cpus}, load: {spec, order, cpus, threads}}: cpus per thread as the
// OS read them back in `read_back`'s run (null items where it read back no single CPU); order
// and cpus (and threads) null for a placement of none, or without a run (`read_back` null).
nlohmann::json affinity_json(const engine::PointSpec& spec, const engine::AffinityRecord* read_back);

}  // namespace iocpbench::results
