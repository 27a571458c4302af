#pragma once
// A latency histogram: log-linear buckets (HdrHistogram's layout), fixed size, mergeable.
// Values are nanoseconds. Below kSub every value has its own bucket; above, each power of two
// is split into kSub equal buckets, so a reported percentile is within 1/kSub (1.6%) of the
// true value. Recording is a shift, a count-leading-zeros and an increment: no allocation, no
// lock (one histogram per thread; merge at the end).

#include <array>
#include <bit>
#include <cstdint>

namespace iocpbench::metrics {

class Histogram {
 public:
  static constexpr unsigned kSubBits = 6;
  static constexpr std::uint64_t kSub = std::uint64_t{1} << kSubBits;     // 64
  static constexpr std::size_t kBuckets = (64 - kSubBits) * kSub + kSub;  // every uint64_t

  static std::size_t bucket_of(std::uint64_t value) noexcept {
    if (value < kSub) return static_cast<std::size_t>(value);
    const unsigned high = 63u - static_cast<unsigned>(std::countl_zero(value));
    const unsigned shift = high - kSubBits;
    return static_cast<std::size_t>(shift) * kSub + static_cast<std::size_t>(value >> shift);
  }
  // The smallest and largest values that land in `bucket`.
  static std::uint64_t bucket_low(std::size_t bucket) noexcept;
  static std::uint64_t bucket_high(std::size_t bucket) noexcept;

  void record(std::uint64_t value) noexcept {
    ++counts_[bucket_of(value)];
    ++count_;
    sum_ += value;
    if (value > max_) max_ = value;
    if (value < min_) min_ = value;
  }
  void merge(const Histogram& other) noexcept;
  // fn(bucket, count) for each bucket holding values, in bucket order.
  template <typename Fn>
  void for_each_bucket(Fn&& fn) const {
    for (std::size_t i = 0; i < kBuckets; ++i) {
      if (counts_[i] != 0) fn(i, counts_[i]);
    }
  }
  void reset() noexcept;

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t max() const noexcept { return count_ == 0 ? 0 : max_; }
  std::uint64_t min() const noexcept { return count_ == 0 ? 0 : min_; }
  double mean() const noexcept {
    return count_ == 0 ? 0.0 : static_cast<double>(sum_) / static_cast<double>(count_);
  }
  // Nearest-rank quantile, q in [0, 1]: the midpoint of the bucket holding that rank, clamped
  // to the exact minimum and maximum. 0 for an empty histogram.
  double quantile(double q) const noexcept;

 private:
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t sum_ = 0;  // overflows after 584 years of summed nanoseconds
  std::uint64_t max_ = 0;
  std::uint64_t min_ = UINT64_MAX;
};

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
  std::uint64_t count = 0;
};

// In microseconds (the histogram holds nanoseconds).
Percentiles percentiles_us(const Histogram& histogram);

}  // namespace iocpbench::metrics
