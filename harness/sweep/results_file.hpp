#pragma once
// The sweep's side of the results file: the grid it records (the `sweep` block) and a file
// to finish (`--resume`), upgraded to today's rules. The file's shape is results/'s; what a
// grid is, and how older grids read today, is the sweep's (grid.hpp, completion_path_compat.hpp).

#include <string>

#include "results/document.hpp"
#include "sweep/grid.hpp"

namespace iocpbench::sweep {

// A sweep's or a tune's sweep block: the grid (grid_to_json), no session state yet.
results::SweepBlock sweep_block(const Grid& grid);

// A results file to finish (`sweep --resume FILE`): read, checked, and upgraded to today's
// rules (completion_path_compat.hpp: the completion path made explicit, the ids rewritten).
// Throws BadInput{"--resume"} naming the file when it cannot be read, is not a schema-v1
// results file, or was written by `iocpbench run` or `tune` (no sweep to finish).
struct ResumedFile {
  results::ResultsDocument document;
  std::string note;  // what to tell the user about an older file (after its name), or empty
};
ResumedFile read_for_resume(const std::string& path);

}  // namespace iocpbench::sweep
