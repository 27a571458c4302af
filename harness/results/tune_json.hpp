#pragma once
// The results file of `iocpbench tune` (schema v1, docs/tuning.md): every setting with runs as a
// points[] entry, the sweep block (mode "tune"; complete unless interrupted) and the tune block
// (recommendation, best, finalists with their ratio CIs, excluded, rules of thumb, the rule and
// the numbers it ran with, queueing estimate, evidence), from the search's typed outcome.

#include <nlohmann/json.hpp>

#include "tune/search.hpp"

namespace iocpbench::results {

// The whole document; `outcome` must be decided().
nlohmann::json tune_document(const tune::TuneOutcome& outcome);

}  // namespace iocpbench::results
