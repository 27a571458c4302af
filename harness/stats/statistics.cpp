#include "stats/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <boost/math/distributions/students_t.hpp>

namespace iocpbench::stats {

double t_quantile(double probability, double dof) {
  const boost::math::students_t distribution(dof);
  return boost::math::quantile(distribution, probability);
}

double t_quantile_975(std::size_t dof) {
  if (dof == 0) return 0;
  return t_quantile(0.975, static_cast<double>(dof));
}

namespace {

std::vector<double> sorted_copy(std::span<const double> values) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return sorted;
}

double median_of_sorted(const std::vector<double>& sorted) {
  if (sorted.empty()) return 0;
  const std::size_t mid = sorted.size() / 2;
  return sorted.size() % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

}  // namespace

double median(std::span<const double> values) {
  return median_of_sorted(sorted_copy(values));
}

Summary summarize(std::span<const double> values) {
  Summary s;
  s.n = values.size();
  if (s.n == 0) return s;
  const std::vector<double> sorted = sorted_copy(values);
  s.median = median_of_sorted(sorted);
  double sum = 0;
  for (double v : sorted) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  if (s.n < 2) return s;  // one value: no spread to speak of
  double squares = 0;
  for (double v : sorted) squares += (v - s.mean) * (v - s.mean);
  const double stddev = std::sqrt(squares / static_cast<double>(s.n - 1));
  const double half = t_quantile_975(s.n - 1) * stddev / std::sqrt(static_cast<double>(s.n));
  s.ci95_low = s.mean - half;
  s.ci95_high = s.mean + half;
  if (s.mean != 0) s.cv = stddev / std::fabs(s.mean);
  return s;
}

}  // namespace iocpbench::stats
