#pragma once
// `iocpbench tune --slo`'s report on stdout: the answer first (or that no setting was shown to
// meet the SLO), then per setting its percentile's median and upper bound at the offered rate,
// or with --max-rate its capacity and the rate it carries, with the runs that were over capacity
// or generator-bound.

#include <ostream>

#include "tune/slo_search.hpp"

namespace iocpbench::cli {

void print_slo_report(std::ostream& out, const tune::SloOutcome& outcome);

}  // namespace iocpbench::cli
