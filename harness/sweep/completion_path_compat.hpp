#pragma once
// Results files across the change of the default completion path: `thread` until
// it was `port`. The rule, in the schema too: a file or socket point (or a sweep block whose
// grid has such workloads) without workload_params.completion_path was measured on `thread`,
// because a results file written while thread was the default recorded only `port`; from the
// change on, every such point and grid records its path. So a resumed file never mixes the two
// paths in one point: its missing runs are measured on the path its other runs used.

#include <string>

#include <nlohmann/json.hpp>

#include "sweep/grid.hpp"

namespace iocpbench::sweep {

// A grid about to be written to a results file: its completion path spelled out (the
// default when not given) when it has a file or socket workload.
void record_completion_path(Grid& grid);

// A results file read for --resume: every path made explicit by the rule above, and every
// point's id (post included) rewritten by today's point_id rule (completion_path_id_suffix: the
// path named only for file and socket, and only when not the default), so the points match the
// grid's expansion and no point's runs are dropped. Returns what to tell the user (after the file's name)
// when the file was written before the path was recorded (it resumes on `thread`), else empty.
std::string upgrade_completion_path(nlohmann::json& doc);

}  // namespace iocpbench::sweep
