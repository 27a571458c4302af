#include "cli/controller_flags.hpp"

#include <charconv>
#include <cmath>

#include "cli/commands.hpp"
#include "cli/help_format.hpp"
#include "cli/option_help.hpp"

namespace iocpbench::cli {
namespace {

double number_in(const std::string& text, const char* flag, double low, double high,
                 bool whole) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool number =
      !text.empty() && ec == std::errc() && end == text.data() + text.size() && std::isfinite(value);
  if (!number || value < low || value > high || (whole && value != std::floor(value))) {
    throw BadInput{flag, "'" + text + "': must be " + (whole ? "a whole number" : "a number") +
                             " from " + number_text(low) + " to " + number_text(high)};
  }
  return value;
}

}  // namespace

bool HillFlags::any_given() const {
  return !wave_period.empty() || !wave_magnitude.empty() || !history.empty() ||
         !sample_ms.empty() || !max_changes_per_s.empty() || !starvation_ms.empty();
}

void add_hill_flags(CLI::App& command, HillFlags& f) {
  const core::HillSettings d;
  add_text_option(command, "--hill-wave-period", f.wave_period,
                  "pool hill: the wave's period in samples (2 to 100)", "INT",
                  std::to_string(d.wave_period_samples));
  add_text_option(command, "--hill-wave-magnitude", f.wave_magnitude,
                  "pool hill: the wave's largest amplitude, threads (1 to 1000)", "FLOAT",
                  number_text(d.max_wave_magnitude));
  add_text_option(command, "--hill-history", f.history,
                  "pool hill: samples of history the slope is measured over (1 to 1000, at least "
                  "the wave period)",
                  "INT", std::to_string(d.history_samples));
  add_text_option(command, "--hill-sample-ms", f.sample_ms,
                  "pool hill: a sample lasts a random LOW to HIGH ms (1 to 10000)", "LOW:HIGH",
                  std::to_string(d.sample_low_ms) + ":" + std::to_string(d.sample_high_ms));
  add_text_option(command, "--hill-max-changes-per-s", f.max_changes_per_s,
                  "pool hill: threads the setting may move per second of samples (0.01 to 1000)",
                  "FLOAT", number_text(d.max_changes_per_s));
  add_text_option(command, "--hill-starvation-ms", f.starvation_ms,
                  "pool hill: no completion for this long with work waiting adds a thread (1 to "
                  "60000)",
                  "INT", std::to_string(d.starvation_ms));
  group_options(command, kGroupAdvanced,
                {"--hill-wave-period", "--hill-wave-magnitude", "--hill-history", "--hill-sample-ms",
                 "--hill-max-changes-per-s", "--hill-starvation-ms"});
}

core::HillSettings hill_settings_from_flags(const HillFlags& f) {
  core::HillSettings h;
  if (!f.wave_period.empty()) {
    h.wave_period_samples =
        static_cast<unsigned>(number_in(f.wave_period, "--hill-wave-period", 2, 100, true));
  }
  if (!f.wave_magnitude.empty()) {
    h.max_wave_magnitude = number_in(f.wave_magnitude, "--hill-wave-magnitude", 1, 1000, false);
  }
  if (!f.history.empty()) {
    h.history_samples = static_cast<unsigned>(number_in(f.history, "--hill-history", 1, 1000, true));
  }
  if (h.history_samples < h.wave_period_samples) {
    throw BadInput{"--hill-history", "must be at least the wave period (" +
                                         std::to_string(h.wave_period_samples) + " samples)"};
  }
  if (!f.sample_ms.empty()) {
    const std::size_t colon = f.sample_ms.find(':');
    if (colon == std::string::npos) {
      throw BadInput{"--hill-sample-ms", "'" + f.sample_ms + "': expected LOW:HIGH milliseconds"};
    }
    h.sample_low_ms = static_cast<unsigned>(
        number_in(f.sample_ms.substr(0, colon), "--hill-sample-ms", 1, 10000, true));
    h.sample_high_ms = static_cast<unsigned>(
        number_in(f.sample_ms.substr(colon + 1), "--hill-sample-ms", 1, 10000, true));
    if (h.sample_low_ms > h.sample_high_ms) {
      throw BadInput{"--hill-sample-ms", "'" + f.sample_ms + "': LOW is larger than HIGH"};
    }
  }
  if (!f.max_changes_per_s.empty()) {
    h.max_changes_per_s =
        number_in(f.max_changes_per_s, "--hill-max-changes-per-s", 0.01, 1000, false);
  }
  if (!f.starvation_ms.empty()) {
    h.starvation_ms =
        static_cast<unsigned>(number_in(f.starvation_ms, "--hill-starvation-ms", 1, 60000, true));
  }
  return h;
}

void apply_hill_flags(const HillFlags& f, std::vector<core::PoolSpec>& pools) {
  const core::HillSettings h = hill_settings_from_flags(f);
  bool any_hill = false;
  for (core::PoolSpec& p : pools) {
    if (p.controlled && p.controlled->kind == core::ControllerKind::hill) {
      // Without flags a --grid file's settings (its "hill") stand.
      if (f.any_given()) p.controlled->hill = h;
      any_hill = true;
    }
  }
  if (any_hill || !f.any_given()) return;
  const char* flag = !f.wave_period.empty()      ? "--hill-wave-period"
                     : !f.wave_magnitude.empty() ? "--hill-wave-magnitude"
                     : !f.history.empty()        ? "--hill-history"
                     : !f.sample_ms.empty()      ? "--hill-sample-ms"
                     : !f.max_changes_per_s.empty() ? "--hill-max-changes-per-s"
                                                    : "--hill-starvation-ms";
  throw BadInput{flag, "applies to --pool hill only"};
}

}  // namespace iocpbench::cli
