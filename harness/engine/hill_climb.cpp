// The `hill` pool controller: the .NET thread pool's hill climber, written from its published
// description (Hellerstein, Morrison, Eilebrecht, "Optimizing concurrency levels in the .NET
// ThreadPool: a case study of controller design and implementation", FeBID 2008; E. Fuentes,
// "Throttling concurrency in the CLR 4.0 ThreadPool", MSDN Magazine, September 2010).
//
// What it follows: every sample (a random 10-200 ms, so the samples cannot lock onto a periodic
// workload) it records the throughput of the interval (completions / seconds) and the threads
// the pool had. The thread count is the control setting plus a sinusoidal wave of period
// `wave period` samples. Over the last `history` samples (whole wave periods), the Fourier
// component at the wave's frequency (Goertzel) of the throughput, divided by the same component
// of the thread counts, is the throughput's response to one more thread: the slope. Both are
// taken relative to their means, so the slope is an elasticity (a 1% change of threads gives
// slope% of throughput) and the gain does not depend on the workload's scale. The setting moves
// along the slope (clamped to [-1, 1]) by a gain of `max changes per second` threads per second
// of sample, scaled by the confidence that the signal is not noise; no move when it is not.
// Starvation: when no completion has happened for `starvation ms` while packets are queued (or
// every thread is busy), one thread is added regardless and the history starts again.
//
// Where it simplifies: the wave's amplitude is an eighth of the setting (at least one thread, at
// most `max wave magnitude`), not adapted to the measured noise; the noise is the throughput in
// the two adjacent frequency bands that the thread counts in those bands do not explain (the
// setting's own drift moves both together), so a noise-free curve gives no noise; no target
// throughput ratio biases the moves toward fewer threads; there is no separate "stabilising"
// state, and the sample interval does not lengthen with noise.

#include <algorithm>
#include <cmath>
#include <complex>
#include <deque>

#include "core/random.hpp"
#include "engine/pool_control.hpp"

namespace iocpbench::engine {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The Fourier component of `x` (its mean taken out) at `cycles` per `x.size()` samples, by
// Goertzel's recurrence.
std::complex<double> goertzel(const std::vector<double>& x, double cycles) {
  const std::size_t n = x.size();
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(n);
  const double w = 2 * kPi * cycles / static_cast<double>(n);
  const double coeff = 2 * std::cos(w);
  double s1 = 0, s2 = 0;
  for (double v : x) {
    const double s = (v - mean) + coeff * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  // y = s1 - e^{-iw} s2 is the sum with phase e^{iw(n-1)}; taken out so components compare.
  const std::complex<double> y = s1 - std::polar(1.0, -w) * s2;
  return y * std::polar(1.0, -w * static_cast<double>(n - 1));
}

// Neighbouring seeds (--seed, seed + repetition) give unrelated sequences; never 0 (xorshift).
std::uint64_t mixed_seed(std::uint64_t seed) {
  const std::uint64_t mixed = (seed + 1) * 0x9E3779B97F4A7C15ull;
  return mixed == 0 ? 1 : mixed;
}

class HillClimb final : public PoolController {
 public:
  HillClimb(const ControlBounds& b, const core::HillSettings& h, std::uint64_t seed,
            unsigned start_threads)
      : bounds_(b),
        h_(h),
        rng_(mixed_seed(seed)),
        setting_(std::clamp(start_threads == 0 ? b.min_threads : start_threads, b.min_threads,
                            b.max_threads)) {}

  const char* name() const override { return "hill"; }

  unsigned target(const ControlSample& s) override {
    record(s);
    if (starving(s)) {
      setting_ = std::min<double>(setting_ + 1, bounds_.max_threads);
      history_.clear();
      last_completion_ns_ = s.t_ns;
      ++starvation_adds_;
    } else {
      climb(s);
    }
    ++wave_step_;
    return threads_now();
  }

  std::uint64_t next_interval_ns() override {
    const std::uint64_t span = h_.sample_high_ms - h_.sample_low_ms + 1;
    return (h_.sample_low_ms + core::xorshift64(rng_) % span) * 1'000'000ull;
  }

  double control_setting() const override { return setting_; }

  std::vector<std::pair<std::string, double>> settings() const override {
    return {{"min_threads", bounds_.min_threads},
            {"max_threads", bounds_.max_threads},
            {"wave_period_samples", h_.wave_period_samples},
            {"max_wave_magnitude_threads", h_.max_wave_magnitude},
            {"history_samples", h_.history_samples},
            {"sample_low_ms", h_.sample_low_ms},
            {"sample_high_ms", h_.sample_high_ms},
            {"max_changes_per_s", h_.max_changes_per_s},
            {"starvation_ms", h_.starvation_ms}};
  }

 private:
  struct Point {
    double ops_per_s;
    double threads;
  };

  void record(const ControlSample& s) {
    if (have_last_) {
      const double dt_s = static_cast<double>(s.t_ns - last_.t_ns) / 1e9;
      const std::uint64_t done = s.completions_total - last_.completions_total;
      if (done > 0) last_completion_ns_ = s.t_ns;
      if (dt_s > 0) {
        history_.push_back({static_cast<double>(done) / dt_s, static_cast<double>(s.threads)});
        while (history_.size() > h_.history_samples) history_.pop_front();
        last_dt_s_ = dt_s;
      }
    } else {
      last_completion_ns_ = s.t_ns;
    }
    last_ = s;
    have_last_ = true;
  }

  bool starving(const ControlSample& s) const {
    const bool waiting = s.queued ? *s.queued > 0 : s.busy >= s.threads;
    const bool stuck =
        s.t_ns - last_completion_ns_ >= static_cast<std::uint64_t>(h_.starvation_ms) * 1'000'000ull;
    return waiting && stuck && setting_ < bounds_.max_threads;
  }

  // One move of the setting along the measured slope, when the history allows a measurement.
  void climb(const ControlSample&) {
    const std::size_t period = h_.wave_period_samples;
    const std::size_t used = (history_.size() / period) * period;
    if (used < period || used < (h_.history_samples / period) * period) return;
    std::vector<double> ops, threads;
    double ops_mean = 0, threads_mean = 0;
    for (std::size_t i = history_.size() - used; i < history_.size(); ++i) {
      ops.push_back(history_[i].ops_per_s);
      threads.push_back(history_[i].threads);
      ops_mean += history_[i].ops_per_s;
      threads_mean += history_[i].threads;
    }
    ops_mean /= static_cast<double>(used);
    threads_mean /= static_cast<double>(used);
    if (ops_mean <= 0 || threads_mean <= 0) return;
    const double cycles = static_cast<double>(used / period);
    const std::complex<double> t_wave = goertzel(ops, cycles) / ops_mean;
    const std::complex<double> n_wave = goertzel(threads, cycles) / threads_mean;
    // The wave must be there (not clipped away at a bound) for the ratio to mean anything.
    if (std::abs(n_wave) < 1e-9) return;
    const std::complex<double> ratio = t_wave / n_wave;
    const double noise = band_noise(ops, threads, cycles, ratio, ops_mean, threads_mean);
    const double signal = std::abs(t_wave);
    if (signal <= noise) return;  // the response does not beat the noise: hold
    const double confidence = signal > 0 ? (signal - noise) / signal : 0;
    const double slope = std::clamp(ratio.real(), -1.0, 1.0);
    const double move = slope * confidence * h_.max_changes_per_s * last_dt_s_;
    setting_ = std::clamp(setting_ + move, static_cast<double>(bounds_.min_threads),
                          static_cast<double>(bounds_.max_threads));
  }

  // The throughput in the bands next to the wave's that the thread counts there do not explain.
  static double band_noise(const std::vector<double>& ops, const std::vector<double>& threads,
                           double cycles, std::complex<double> ratio, double ops_mean,
                           double threads_mean) {
    double sum = 0;
    int bands = 0;
    for (double adjacent : {cycles - 1, cycles + 1}) {
      if (adjacent < 1 || adjacent >= static_cast<double>(ops.size()) / 2) continue;
      const std::complex<double> t = goertzel(ops, adjacent) / ops_mean;
      const std::complex<double> n = goertzel(threads, adjacent) / threads_mean;
      sum += std::abs(t - ratio * n);
      ++bands;
    }
    return bands == 0 ? 0 : sum / bands;
  }

  // The setting plus the wave, within the bounds.
  unsigned threads_now() const {
    const double amplitude =
        std::clamp(std::round(setting_ / 8), 1.0, std::max(1.0, h_.max_wave_magnitude));
    const double phase = 2 * kPi * static_cast<double>(wave_step_ % h_.wave_period_samples) /
                         static_cast<double>(h_.wave_period_samples);
    const double threads = std::round(setting_ + amplitude * std::sin(phase));
    return static_cast<unsigned>(std::clamp(threads, static_cast<double>(bounds_.min_threads),
                                            static_cast<double>(bounds_.max_threads)));
  }

  ControlBounds bounds_;
  core::HillSettings h_;
  std::uint64_t rng_;
  double setting_;
  std::deque<Point> history_;
  ControlSample last_;
  bool have_last_ = false;
  double last_dt_s_ = 0;
  std::uint64_t last_completion_ns_ = 0;
  std::uint64_t wave_step_ = 0;
  std::uint64_t starvation_adds_ = 0;
};

}  // namespace

std::unique_ptr<PoolController> make_hill_climb(const ControlBounds& bounds,
                                                const core::HillSettings& hill,
                                                std::uint64_t seed, unsigned start_threads) {
  return std::make_unique<HillClimb>(bounds, hill, seed, start_threads);
}

}  // namespace iocpbench::engine
