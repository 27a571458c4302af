#include "core/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

namespace iocpbench::core {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The number at the start of `text` and the unit after it (spaces between allowed: "4 k").
struct Split {
  double number = 0;
  std::string unit;
};

std::optional<Split> split(std::string_view text, std::string* reason) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  Split s;
  // from_chars: no leading '+', no locale; "inf"/"nan" parse and are refused below.
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), s.number);
  if (text.empty() || ec != std::errc() || end == text.data()) {
    if (reason) *reason = "'" + std::string(text) + "' is not a number";
    return std::nullopt;
  }
  if (!std::isfinite(s.number) || s.number < 0) {
    if (reason) *reason = "'" + std::string(text) + "' is not a finite non-negative number";
    return std::nullopt;
  }
  std::string_view rest(end, static_cast<std::size_t>(text.data() + text.size() - end));
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
  s.unit = lower(rest);
  return s;
}

}  // namespace

std::optional<double> parse_duration(std::string_view text, double base_s, std::string* reason) {
  const auto s = split(text, reason);
  if (!s) return std::nullopt;
  if (s->unit.empty()) return s->number;
  // In nanoseconds, whole numbers, so that the ratio of two units is exact (100us is 100 us,
  // not 100.00000000000001).
  static constexpr std::array<std::pair<const char*, double>, 11> kUnits{{
      {"us", 1e3}, {"usec", 1e3}, {"ms", 1e6}, {"msec", 1e6}, {"s", 1e9}, {"sec", 1e9},
      {"m", 60e9}, {"min", 60e9}, {"h", 3600e9}, {"hr", 3600e9}, {"hour", 3600e9}}};
  const double base_ns = std::round(base_s * 1e9);
  for (const auto& [name, unit_ns] : kUnits) {
    if (s->unit != name) continue;
    return unit_ns >= base_ns ? s->number * (unit_ns / base_ns) : s->number / (base_ns / unit_ns);
  }
  if (reason) {
    *reason = "'" + std::string(text) + "' has an unknown unit '" + s->unit + "' (" + kDurationUnits + ")";
  }
  return std::nullopt;
}

std::optional<std::uint64_t> parse_size(std::string_view text, std::uint64_t base_bytes, std::string* reason) {
  const auto s = split(text, reason);
  if (!s) return std::nullopt;
  double bytes_per = static_cast<double>(base_bytes);  // a plain number: the flag's own unit
  if (!s->unit.empty()) {
    static constexpr std::array<std::pair<const char*, double>, 10> kUnits{{
        {"b", 1}, {"k", 1024.0}, {"kb", 1024.0}, {"kib", 1024.0},
        {"m", 1048576.0}, {"mb", 1048576.0}, {"mib", 1048576.0},
        {"g", 1073741824.0}, {"gb", 1073741824.0}, {"gib", 1073741824.0}}};
    bool known = false;
    for (const auto& [name, factor] : kUnits) {
      if (s->unit == name) {
        bytes_per = factor;
        known = true;
        break;
      }
    }
    if (!known) {
      if (reason) *reason = "'" + std::string(text) + "' has an unknown unit '" + s->unit + "' (" + kSizeUnits + ")";
      return std::nullopt;
    }
  }
  const double units = s->number * bytes_per / static_cast<double>(base_bytes);
  if (units != std::floor(units) || units > 1e15) {
    if (reason) {
      *reason = "'" + std::string(text) + "' is not a whole number of " +
                (base_bytes == 1 ? std::string("bytes") : base_bytes == 1024 ? std::string("KiB") : std::string("MiB"));
    }
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(units);
}

bool parse_plain_number(std::string_view text, double& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(out);
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", digits, value);
  return text;
}

std::string short_number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

}  // namespace iocpbench::core
