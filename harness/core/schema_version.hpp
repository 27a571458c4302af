#pragma once

namespace iocpbench::core {

// The results file's schema version (results/schema/results.schema.json): written into every
// results file, checked on --resume, and printed by `iocpbench --version`. Additive fields keep
// it; a change that an older reader would misread raises it.
inline constexpr int kResultsSchemaVersion = 1;

}  // namespace iocpbench::core
