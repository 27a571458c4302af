#include "metrics/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace iocpbench::metrics {

std::uint64_t Histogram::bucket_low(std::size_t bucket) noexcept {
  if (bucket < kSub) return bucket;
  const std::uint64_t shift = bucket / kSub - 1;
  const std::uint64_t sub = bucket - shift * kSub;  // in [kSub, 2 kSub)
  return sub << shift;
}

std::uint64_t Histogram::bucket_high(std::size_t bucket) noexcept {
  if (bucket < kSub) return bucket;
  const std::uint64_t shift = bucket / kSub - 1;
  const std::uint64_t sub = bucket - shift * kSub;
  return (sub << shift) + ((std::uint64_t{1} << shift) - 1);
}

void Histogram::merge(const Histogram& other) noexcept {
  for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
  min_ = std::min(min_, other.min_);
}

void Histogram::reset() noexcept {
  *this = Histogram{};
}

double Histogram::quantile(double q) const noexcept {
  if (count_ == 0) return 0.0;
  q = std::clamp(q, 0.0, 1.0);
  std::uint64_t rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  if (rank == count_) return static_cast<double>(max_);  // the top is known exactly
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const double mid =
          (static_cast<double>(bucket_low(i)) + static_cast<double>(bucket_high(i))) / 2;
      return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

Percentiles percentiles_us(const Histogram& h) {
  Percentiles p;
  p.p50 = h.quantile(0.50) / 1e3;
  p.p90 = h.quantile(0.90) / 1e3;
  p.p99 = h.quantile(0.99) / 1e3;
  p.p999 = h.quantile(0.999) / 1e3;
  p.max = static_cast<double>(h.max()) / 1e3;
  p.mean = h.mean() / 1e3;
  p.count = h.count();
  return p;
}

}  // namespace iocpbench::metrics
