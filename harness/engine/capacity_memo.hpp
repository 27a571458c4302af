#pragma once
// The capacity a --load refers to, found once per point per invocation: the first run of a
// point measures it (a closed-loop run of the same point, engine/run_point.cpp), and every
// later run of the point (its other repetitions, in any order) offers the same rate. Without
// it each repetition measured its own, and the rates of one point's repetitions differed by a
// median of 1.46x on a 2-CPU guest. The caller names the point (sweep::point_id); one memo per
// command.

#include <map>
#include <string>

#include "engine/run_point.hpp"

namespace iocpbench::engine {

class CapacityMemo {
 public:
  // `spec` with the capacity found for `point` before, if any (a --load point only).
  PointSpec with_known(PointSpec spec, const std::string& point) const {
    if (spec.open_loop.load <= 0 || spec.open_loop.rate_ops_per_s > 0) return spec;
    if (const auto it = found_.find(point); it != found_.end()) spec.open_loop.known_capacity_ops_per_s = it->second;
    return spec;
  }
  // Keeps the capacity `result` measured for `point` (an interrupted run's is not kept).
  void note(const std::string& point, const RunResult& result) {
    if (result.interrupted || !result.open_loop || !result.open_loop->capacity_ops_per_s) return;
    if (!result.open_loop->capacity_measured_here || *result.open_loop->capacity_ops_per_s <= 0) return;
    found_.emplace(point, *result.open_loop->capacity_ops_per_s);
  }

 private:
  std::map<std::string, double> found_;
};

}  // namespace iocpbench::engine
