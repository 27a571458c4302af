#include "core/blocking_profile.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/units.hpp"

namespace iocpbench::core {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

// One RATIO[:SECONDS] item; `last`: the only one that may omit its duration.
bool parse_segment(std::string_view item, bool last, BlockingProfile::Segment& out,
                   std::string& why) {
  const std::vector<std::string_view> fields = split(item, ':');
  if (fields.size() > 2 || (fields.size() == 1 && !last)) {
    why = "'" + std::string(item) + "': expected RATIO:SECONDS (only the last segment may omit "
          "its duration)";
    return false;
  }
  if (!parse_plain_number(fields[0], out.ratio) || out.ratio < 0 || out.ratio >= 1) {
    why = "'" + std::string(fields[0]) + "': a ratio must be a number in [0, 1)";
    return false;
  }
  out.seconds = 0;
  if (fields.size() == 2 && (!parse_plain_number(fields[1], out.seconds) || out.seconds <= 0)) {
    why = "'" + std::string(fields[1]) + "': a duration must be a positive number of seconds";
    return false;
  }
  return true;
}

}  // namespace

std::optional<BlockingProfile> parse_blocking_profile(std::string_view text, std::string* reason) {
  std::string why;
  BlockingProfile p;
  const std::vector<std::string_view> items = split(text, ',');
  for (std::size_t i = 0; i < items.size(); ++i) {
    BlockingProfile::Segment s;
    if (!parse_segment(items[i], i + 1 == items.size(), s, why)) {
      if (reason != nullptr) *reason = why;
      return std::nullopt;
    }
    p.segments.push_back(s);
  }
  p.repeats = p.segments.back().seconds > 0;
  for (const auto& s : p.segments) {
    if (!p.text.empty()) p.text += ",";
    p.text += short_number_text(s.ratio);
    if (s.seconds > 0) p.text += ":" + short_number_text(s.seconds);
  }
  return p;
}

double BlockingProfile::ratio_at(double t_s) const {
  if (t_s <= 0 || segments.size() == 1) return segments.front().ratio;
  double period_s = 0;
  for (const auto& s : segments) period_s += s.seconds;
  if (repeats) t_s = std::fmod(t_s, period_s);
  for (const auto& s : segments) {
    if (s.seconds == 0 || t_s < s.seconds) return s.ratio;
    t_s -= s.seconds;
  }
  return segments.back().ratio;  // a step's last segment, past the others
}

std::vector<double> BlockingProfile::levels() const {
  std::vector<double> out;
  for (const Segment& s : segments) {
    if (std::find(out.begin(), out.end(), s.ratio) == out.end()) out.push_back(s.ratio);
  }
  return out;
}

double BlockingProfile::mean_over(double duration_s) const {
  if (duration_s <= 0) return ratio_at(0);
  double area = 0, t = 0;
  // Segment by segment, period after period, until the duration is covered.
  for (std::size_t i = 0; t < duration_s; i = (i + 1) % segments.size()) {
    const Segment& s = segments[i];
    const double span = s.seconds == 0 ? duration_s - t : std::min(s.seconds, duration_s - t);
    area += s.ratio * span;
    t += span;
    if (s.seconds == 0) break;
  }
  // To a millionth: the mean of 0.1 and 0.7 reads 0.4 in ids and JSON, not 0.39999999999999997.
  return std::round(area / duration_s * 1e6) / 1e6;
}

}  // namespace iocpbench::core
