#include "core/pool_spec.hpp"

#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/units.hpp"

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

bool parse_whole_ms(const std::string& text, unsigned low, unsigned high, unsigned& out) {
  double value = 0;
  if (!parse_plain_number(text, value) || value < low || value > high || value != std::floor(value)) {
    return false;
  }
  out = static_cast<unsigned>(value);
  return true;
}

// MIN and MAX of a controlled pool (parts[first], parts[first + 1]).
bool parse_bounds(const std::vector<std::string>& parts, std::size_t first, CountSpec& min,
                  CountSpec& max, std::string& why) {
  const auto lo = parse_count_spec(parts[first], false, &why);
  if (!lo) {
    why = "minimum " + why;
    return false;
  }
  const auto hi = parse_count_spec(parts[first + 1], false, &why);
  if (!hi) {
    why = "maximum " + why;
    return false;
  }
  if (lo->multiplier == hi->multiplier && lo->offset > hi->offset) {
    why = "the minimum is larger than the maximum";
    return false;
  }
  min = *lo;
  max = *hi;
  return true;
}

// hill[:MIN:MAX] and formula[:MIN:MAX[:PERIOD_MS]]; `fields`: the parts after the name.
std::optional<ControlledPoolSpec> parse_ranged(ControllerKind kind,
                                               const std::vector<std::string>& parts,
                                               std::string& why) {
  ControlledPoolSpec c;
  c.kind = kind;
  const std::size_t fields = parts.size() - 1;
  const bool formula = kind == ControllerKind::formula;
  if (fields != 0 && fields != 2 && !(formula && fields == 3)) {
    why = formula ? "expected formula or formula:MIN:MAX[:PERIOD_MS]" : "expected hill or hill:MIN:MAX";
    return std::nullopt;
  }
  if (fields >= 2 && !parse_bounds(parts, 1, c.min, c.max, why)) return std::nullopt;
  if (fields == 3 && !parse_whole_ms(parts[3], 10, 60000, c.period_ms)) {
    why = "PERIOD_MS must be a whole number of milliseconds from 10 to 60000";
    return std::nullopt;
  }
  return c;
}

// stall:LIMIT_MS[:MAX] (MIN is N).
std::optional<ControlledPoolSpec> parse_stall(const std::vector<std::string>& parts,
                                              std::string& why) {
  ControlledPoolSpec c;
  c.kind = ControllerKind::stall;
  const std::size_t fields = parts.size() - 1;
  if (fields != 1 && fields != 2) {
    why = "expected stall:LIMIT_MS:MAX";
    return std::nullopt;
  }
  if (!parse_whole_ms(parts[1], 1, 60000, c.stall_limit_ms)) {
    why = "LIMIT_MS must be a whole number of milliseconds from 1 to 60000";
    return std::nullopt;
  }
  if (fields == 2) {
    std::vector<std::string> bounds{"", "N", parts[2]};
    if (!parse_bounds(bounds, 1, c.min, c.max, why)) return std::nullopt;
  }
  return c;
}

// The normalised text: every field, then the defaults dropped from the right.
std::string controlled_text(const ControlledPoolSpec& c) {
  const ControlledPoolSpec defaults;
  std::string text = to_string(c.kind);
  if (c.kind == ControllerKind::stall) {
    text += ":" + std::to_string(c.stall_limit_ms);
    if (c.max.text != defaults.max.text) text += ":" + c.max.text;
    return text;
  }
  const bool keep_period = c.kind == ControllerKind::formula && c.period_ms != defaults.period_ms;
  if (keep_period || c.min.text != defaults.min.text || c.max.text != defaults.max.text) {
    text += ":" + c.min.text + ":" + c.max.text;
  }
  if (keep_period) text += ":" + std::to_string(c.period_ms);
  return text;
}

std::optional<ControllerKind> controller_named(std::string_view name) {
  if (name == "hill") return ControllerKind::hill;
  if (name == "formula") return ControllerKind::formula;
  if (name == "stall") return ControllerKind::stall;
  return std::nullopt;
}

}  // namespace

const char* to_string(ControllerKind kind) {
  switch (kind) {
    case ControllerKind::hill: return "hill";
    case ControllerKind::formula: return "formula";
    case ControllerKind::stall: return "stall";
  }
  return "?";
}

std::optional<PoolSpec> parse_controlled_pool_spec(std::string_view raw, std::string* reason) {
  const std::string_view name = raw.substr(0, raw.find(':'));
  const auto kind = controller_named(name);
  if (!kind) return std::nullopt;
  const std::vector<std::string> parts = split_colons(raw);
  std::string why;
  const std::optional<ControlledPoolSpec> c =
      *kind == ControllerKind::stall ? parse_stall(parts, why) : parse_ranged(*kind, parts, why);
  if (!c) {
    if (reason != nullptr) *reason = "'" + std::string(raw) + "': " + why;
    return std::nullopt;
  }
  PoolSpec spec;
  spec.text = controlled_text(*c);
  spec.fixed = c->max;
  spec.controlled = c;
  return spec;
}

unsigned PoolSpec::resolve(unsigned logical_cpus) const {
  if (controlled) return controlled->max.resolve(logical_cpus);
  return autosize ? autosize->max.resolve(logical_cpus) : fixed.resolve(logical_cpus);
}

unsigned PoolSpec::resolve_min(unsigned logical_cpus) const {
  if (controlled) return controlled->min.resolve(logical_cpus);
  return autosize ? autosize->min.resolve(logical_cpus) : fixed.resolve(logical_cpus);
}

std::optional<PoolSpec> parse_pool_spec(std::string_view raw, std::string* reason) {
  auto fail = [&](const std::string& why) -> std::optional<PoolSpec> {
    if (reason != nullptr) *reason = "'" + std::string(raw) + "': " + why;
    return std::nullopt;
  };
  const std::string_view name = raw.substr(0, raw.find(':'));
  if (controller_named(name)) return parse_controlled_pool_spec(raw, reason);
  if (raw.substr(0, 4) != "auto") {
    // A word that is no count: say which names are known rather than what a count looks like.
    if (!raw.empty() && std::isalpha(static_cast<unsigned char>(raw[0])) && raw[0] != 'N') {
      return fail("unknown pool spec: a count (4, N, 2N+2), auto, hill, formula or stall");
    }
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
    if (!parse_plain_number(parts[3], a.grow_below_cpu_pct) || a.grow_below_cpu_pct < 0 ||
        a.grow_below_cpu_pct > 100) {
      return fail("GROW_BELOW_PCT must be a percentage from 0 to 100");
    }
    if (!parse_plain_number(parts[4], a.shrink_above_cpu_pct) || a.shrink_above_cpu_pct < 0 ||
        a.shrink_above_cpu_pct > 100) {
      return fail("SHRINK_ABOVE_PCT must be a percentage from 0 to 100");
    }
  }
  if (fields == 5) {
    double idle = 0;
    if (!parse_plain_number(parts[5], idle) || idle < 1 || idle > 60000 || idle != std::floor(idle)) {
      return fail("IDLE_MS must be a whole number of milliseconds from 1 to 60000");
    }
    a.idle_timeout_ms = static_cast<unsigned>(idle);
  }

  // Normalised: every field, then the defaults dropped from the right.
  const AutoPoolSpec defaults;
  std::vector<std::string> text{a.min.text, a.max.text, short_number_text(a.grow_below_cpu_pct),
                                short_number_text(a.shrink_above_cpu_pct),
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
