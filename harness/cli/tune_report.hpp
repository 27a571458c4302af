#pragma once
// `iocpbench tune`'s report on stdout: the decision, the finalists (= shown within, ~ not shown
// worse only, ? no CI), the noise note, the excluded settings, the rules of thumb and the
// queueing estimate N/(1-b).

#include <ostream>

#include "tune/search.hpp"

namespace iocpbench::cli {

// `outcome` must be decided().
void print_tune_report(std::ostream& out, const tune::TuneOutcome& outcome);

}  // namespace iocpbench::cli
