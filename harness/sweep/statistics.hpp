#pragma once
// Summary statistics of one metric over a point's runs: median, mean, 95% CI of the mean
// (Student t), coefficient of variation and n. Pure functions.

#include <span>

#include <nlohmann/json.hpp>

namespace iocpbench::sweep {

struct Summary {
  double median = 0, mean = 0, ci95_low = 0, ci95_high = 0, cv = 0;
  std::size_t n = 0;
};

Summary summarize(std::span<const double> values);
// Two-sided 97.5% quantile of Student's t with `dof` degrees of freedom.
double t_quantile_975(std::size_t dof);
nlohmann::json to_json(const Summary& summary);

}  // namespace iocpbench::sweep
