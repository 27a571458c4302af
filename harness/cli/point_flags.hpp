#pragma once
// The flags that say what a point runs, shared by `run`, `sweep` and `tune`: declared once, one
// row each (point_flags.cpp: the flag, what it takes, its help, which commands take it, its
// default). run and tune take one value where sweep takes a comma-separated list. The defaults
// come from one grid: sweep::default_grid() for run and sweep (run's one value of an axis is
// the row's own), tune::tune_grid() for tune's run lengths.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sweep/grid.hpp"

namespace iocpbench::cli {

enum class PointCommand { run, sweep, tune };

// Each point flag's text as given (empty: not given). run's hold their defaults instead, so
// that the run parses one text per flag.
struct PointFlagTexts {
  std::string workload, port, dispatch, concurrency, pool, blocking, blocking_kind, work_us,
      working_set_kib, duration, warmup, repetitions, seed, dequeue_batch, skip_on_success,
      affinity, load_affinity, load, rate, arrivals, max_in_flight,
      pacer_priority;
};

// Adds the point flags `command` takes, each with its help and the default from `defaults`,
// filed under the Common or Advanced heading; returns them in the order added.
std::vector<CLI::Option*> add_point_flags(CLI::App& command, PointFlagTexts& texts,
                                          PointCommand use, const sweep::Grid& defaults);

}  // namespace iocpbench::cli
