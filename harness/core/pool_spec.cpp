#include "core/pool_spec.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

namespace iocpbench::core {
namespace {

std::vector<std::string> split_colons(std::string_view text) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : text) {
    if (c == ':') {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  parts.push_back(current);
  return parts;
}

bool parse_number(const std::string& text, double& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(out);
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

}  // namespace

unsigned PoolSpec::resolve(unsigned logical_cpus) const {
  return autosize ? autosize->max.resolve(logical_cpus) : fixed.resolve(logical_cpus);
}

unsigned PoolSpec::resolve_min(unsigned logical_cpus) const {
  return autosize ? autosize->min.resolve(logical_cpus) : fixed.resolve(logical_cpus);
}

std::optional<PoolSpec> parse_pool_spec(std::string_view raw, std::string* reason) {
  auto fail = [&](const std::string& why) -> std::optional<PoolSpec> {
    if (reason != nullptr) *reason = "'" + std::string(raw) + "': " + why;
    return std::nullopt;
  };
  if (raw.substr(0, 4) != "auto") {
    std::optional<CountSpec> count = parse_count_spec(raw, false, reason);
    if (!count) return std::nullopt;
    return PoolSpec(*count);
  }
  const std::vector<std::string> parts = split_colons(raw.substr(4));
  // parts[0] is what follows "auto" before the first colon: must be empty.
  if (!parts[0].empty())
    return fail("expected auto or auto:MIN:MAX[:GROW_PCT:SHRINK_PCT[:IDLE_MS]]");
  const std::size_t fields = parts.size() - 1;
  if (fields != 0 && fields != 2 && fields != 4 && fields != 5) {
    return fail(
        "auto takes MIN:MAX, then optionally GROW_BELOW_PCT:SHRINK_ABOVE_PCT, then IDLE_MS");
  }
  AutoPoolSpec a;
  if (fields >= 2) {
    std::string why;
    const auto min = parse_count_spec(parts[1], false, &why);
    if (!min) return fail("minimum " + why);
    const auto max = parse_count_spec(parts[2], false, &why);
    if (!max) return fail("maximum " + why);
    a.min = *min;
    a.max = *max;
    // Comparable without N only when both are plain integers or both the same multiple of N.
    if (a.min.multiplier == a.max.multiplier && a.min.offset > a.max.offset) {
      return fail("the minimum is larger than the maximum");
    }
  }
  if (fields >= 4) {
    if (!parse_number(parts[3], a.grow_below_cpu_pct) || a.grow_below_cpu_pct < 0 ||
        a.grow_below_cpu_pct > 100) {
      return fail("GROW_BELOW_PCT must be a percentage from 0 to 100");
    }
    if (!parse_number(parts[4], a.shrink_above_cpu_pct) || a.shrink_above_cpu_pct < 0 ||
        a.shrink_above_cpu_pct > 100) {
      return fail("SHRINK_ABOVE_PCT must be a percentage from 0 to 100");
    }
  }
  if (fields == 5) {
    double idle = 0;
    if (!parse_number(parts[5], idle) || idle < 1 || idle > 60000 || idle != std::floor(idle)) {
      return fail("IDLE_MS must be a whole number of milliseconds from 1 to 60000");
    }
    a.idle_timeout_ms = static_cast<unsigned>(idle);
  }

  // Normalised: every field, then the defaults dropped from the right.
  const AutoPoolSpec defaults;
  std::vector<std::string> text{a.min.text, a.max.text, number_text(a.grow_below_cpu_pct),
                                number_text(a.shrink_above_cpu_pct),
                                std::to_string(a.idle_timeout_ms)};
  std::size_t keep = 5;
  if (a.idle_timeout_ms == defaults.idle_timeout_ms) {
    keep = 4;
    if (a.grow_below_cpu_pct == defaults.grow_below_cpu_pct &&
        a.shrink_above_cpu_pct == defaults.shrink_above_cpu_pct) {
      keep = 2;
      if (a.min.text == defaults.min.text && a.max.text == defaults.max.text) keep = 0;
    }
  }
  PoolSpec spec;
  spec.text = "auto";
  for (std::size_t i = 0; i < keep; ++i) spec.text += ":" + text[i];
  spec.fixed = a.max;
  spec.autosize = a;
  return spec;
}

}  // namespace iocpbench::core
