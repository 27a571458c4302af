#pragma once
// Building and writing schema-v1 documents (results/document.hpp): the typed values of runs
// into records, a document into JSON, the file written whole.

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/document.hpp"
#include "engine/run_point.hpp"

namespace iocpbench::results {

// One run's record (points[].runs[]): its counts, rates, percentiles and blocks.
RunRecord run_record(const engine::RunResult& run);
// One point (no id: a sweep's and a tune's points get theirs from sweep::point_id) with its
// runs, summarised.
PointResult point_result(const engine::PointSpec& spec, const std::vector<engine::RunResult>& runs);
// A point's summary and blocking fidelity, recomputed from its runs (after a run is added, or
// a resumed file's runs are taken over).
void summarize(PointResult& point);

// A new document on this machine and build around `sweep` (no points yet).
ResultsDocument new_document(SweepBlock sweep);

nlohmann::json to_json(const RunRecord& run);
nlohmann::json to_json(const PointResult& point);
nlohmann::json to_json(const SweepBlock& sweep);
nlohmann::json to_json(const MachineBlock& machine);
nlohmann::json to_json(const ResultsDocument& doc);

// to_json(doc) written atomically (results/json_file.hpp); throws std::runtime_error.
void write_file(const std::filesystem::path& path, const ResultsDocument& doc);

}  // namespace iocpbench::results
