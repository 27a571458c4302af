#pragma once
// The results file of `iocpbench tune` (schema v1, docs/tuning.md): every setting with runs as a
// points[] entry, the sweep block (mode "tune"; complete unless interrupted) and the tune block
// (recommendation, best, finalists with their ratio CIs, excluded, rules of thumb, the rule and
// the numbers it ran with, queueing estimate, evidence), from the search's typed outcome.

#include <vector>

#include <nlohmann/json.hpp>

#include "results/document.hpp"
#include "sweep/grid.hpp"
#include "tune/search.hpp"

namespace iocpbench::tune {

// The whole document (results/'s typed schema v1, the tune block placed in it); `outcome` must
// be decided().
results::ResultsDocument tune_document(const TuneOutcome& outcome);
// A tuner's document (sweep block in mode "tune", complete unless interrupted) around `points`;
// the caller adds its verdict block (tune_document's `tune`, slo_document's `tune_slo`).
results::ResultsDocument tune_mode_document(const sweep::Grid& grid, bool interrupted,
                                            std::vector<results::PointResult> points);

}  // namespace iocpbench::tune
