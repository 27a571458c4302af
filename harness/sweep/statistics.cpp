#include "sweep/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace iocpbench::sweep {

double t_quantile_975(std::size_t dof) {
  // Table for small samples (where it matters); the normal quantile beyond 30.
  static constexpr double kTable[] = {0,      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                      2.306,  2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                      2.120,  2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                      2.064,  2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof == 0) return 0;
  if (dof < std::size(kTable)) return kTable[dof];
  return 1.96;
}

Summary summarize(std::span<const double> values) {
  Summary s;
  s.n = values.size();
  if (s.n == 0) return s;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t mid = s.n / 2;
  s.median = s.n % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  double sum = 0;
  for (double v : sorted) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  double squares = 0;
  for (double v : sorted) squares += (v - s.mean) * (v - s.mean);
  const double stddev = s.n > 1 ? std::sqrt(squares / static_cast<double>(s.n - 1)) : 0.0;
  const double half = s.n > 1 ? t_quantile_975(s.n - 1) * stddev / std::sqrt(static_cast<double>(s.n)) : 0.0;
  s.ci95_low = s.mean - half;
  s.ci95_high = s.mean + half;
  s.cv = s.mean != 0 ? stddev / std::fabs(s.mean) : 0.0;
  return s;
}

nlohmann::json to_json(const Summary& s) {
  return {{"median", s.median}, {"mean", s.mean}, {"ci95_low", s.ci95_low},
          {"ci95_high", s.ci95_high}, {"cv", s.cv}, {"n", s.n}};
}

}  // namespace iocpbench::sweep
