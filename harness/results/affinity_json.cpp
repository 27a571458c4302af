#include "results/affinity_json.hpp"

namespace iocpbench::results {
namespace {

using Json = nlohmann::json;

Json placement_json(const engine::PlacementRecord& r, bool load_threads) {
  Json cpus;  // null: not pinned, or no run yet
  if (r.cpus) {
    cpus = Json::array();
    for (const auto& cpu : *r.cpus) cpus.push_back(cpu ? Json(*cpu) : Json());
  }
  Json j = {{"spec", r.spec}, {"order", r.order.empty() ? Json() : Json(r.order)}, {"cpus", cpus}};
  if (load_threads) j["threads"] = r.cpus ? Json(r.threads) : Json();
  return j;
}

// Before a run: the specs alone.
engine::AffinityRecord specs_only(const engine::PointSpec& spec) {
  engine::AffinityRecord r;
  r.workers.spec = spec.affinity.text;
  r.load.spec = spec.load_affinity.text;
  return r;
}

}  // namespace

Json affinity_json(const engine::PointSpec& spec, const engine::AffinityRecord* read_back) {
  const engine::AffinityRecord record = read_back != nullptr ? *read_back : specs_only(spec);
  return {{"workers", placement_json(record.workers, false)},
          {"load", placement_json(record.load, true)}};
}

}  // namespace iocpbench::results
