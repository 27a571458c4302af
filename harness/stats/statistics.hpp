#pragma once
// Summary statistics of one metric over a point's runs: median, mean, 95% CI of the mean
// (Student t, quantiles from Boost.Math), coefficient of variation and n. Pure functions.
//
// One value says nothing about spread: with n < 2 the CI and the CV are absent (null in JSON),
// never [mean, mean] and 0.

#include <optional>
#include <span>

namespace iocpbench::stats {

struct Summary {
  double median = 0, mean = 0;
  std::optional<double> ci95_low, ci95_high, cv;  // absent when n < 2 (cv also when mean is 0)
  std::size_t n = 0;
};

Summary summarize(std::span<const double> values);
// The median alone (0 for no values): what summarize() gives as .median, without the CI's t
// quantile, for callers that judge many points (the tuner's exclusion rule).
double median(std::span<const double> values);
// The `probability` quantile of Student's t with `dof` degrees of freedom (dof > 0), e.g.
// t_quantile(0.975, 4) = 2.776. Boost.Math, so any dof is exact (no table, no 1.96 cut-off).
double t_quantile(double probability, double dof);
// Two-sided 95%: t_quantile(0.975, dof); 0 for dof 0.
double t_quantile_975(std::size_t dof);

}  // namespace iocpbench::stats
