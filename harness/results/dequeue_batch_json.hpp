#pragma once
// runs[].dequeue_batch (engine/dequeue_batch.hpp): the batch a run asked for and how many
// packets its removes took, as schema v1 spells it.

#include <nlohmann/json.hpp>

#include "engine/run_result.hpp"

namespace iocpbench::results {

// {requested, removes, packets, mean_packets_per_remove (null without a remove), histogram:
// [{min_packets, max_packets, removes}, ...], stop_packets_reposted, scope}.
nlohmann::json dequeue_batch_json(const engine::DequeueBatchRecord& record);

}  // namespace iocpbench::results
