#pragma once
// The results file of `iocpbench tune --slo` (schema v1, docs/tuning.md): every trial with runs
// as a points[] entry (the open-loop points, and with --max-rate the closed-loop capacity
// points), the sweep block (mode "tune") and the `tune_slo` block: the SLO, the rule, per
// setting its percentile's median and upper bound (or, with --max-rate, its capacity and the
// rate it carries), and the recommendation (null when no setting was shown to meet the SLO).

#include <nlohmann/json.hpp>

#include "results/document.hpp"
#include "tune/slo_search.hpp"

namespace iocpbench::tune {

results::ResultsDocument slo_document(const SloOutcome& outcome);
nlohmann::json slo_block(const SloOutcome& outcome);

}  // namespace iocpbench::tune
