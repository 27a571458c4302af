#include "core/count_spec.hpp"

#include <cctype>
#include <charconv>
#include <limits>

namespace iocpbench::core {
namespace {

constexpr long kMaxCount = 4096;  // a pool of more threads than this is a typo, not a setting

bool parse_long(std::string_view text, long& out) {
  if (text.empty()) return false;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

std::string strip(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  }
  return out;
}

}  // namespace

unsigned CountSpec::resolve(unsigned logical_cpus) const {
  if (multiplier == 0) return static_cast<unsigned>(offset);
  const long value = multiplier * static_cast<long>(logical_cpus) + offset;
  return value < 1 ? 1u : static_cast<unsigned>(value);
}

std::optional<CountSpec> parse_count_spec(std::string_view raw, bool allow_zero,
                                          std::string* reason) {
  auto fail = [&](std::string why) -> std::optional<CountSpec> {
    if (reason != nullptr) *reason = "'" + std::string(raw) + "': " + why;
    return std::nullopt;
  };
  const std::string text = strip(raw);
  if (text.empty()) return fail("empty spec");
  CountSpec spec;
  const auto n_pos = text.find_first_of("Nn");
  if (n_pos == std::string::npos) {
    if (!parse_long(text, spec.offset)) return fail("not an integer or an N-relative spec like 2N+2");
    if (spec.offset < 0) return fail("must not be negative");
    if (spec.offset == 0 && !allow_zero) return fail("must be at least 1");
    if (spec.offset > kMaxCount) return fail("larger than " + std::to_string(kMaxCount));
    spec.text = std::to_string(spec.offset);
    return spec;
  }
  const std::string a = text.substr(0, n_pos);
  const std::string rest = text.substr(n_pos + 1);
  if (a.empty()) {
    spec.multiplier = 1;
  } else if (!parse_long(a, spec.multiplier) || spec.multiplier < 1) {
    return fail("the multiplier of N must be a positive integer");
  }
  if (!rest.empty()) {
    if ((rest[0] != '+' && rest[0] != '-') || rest.size() < 2) {
      return fail("expected +b or -b after N");
    }
    long b = 0;
    if (!parse_long(std::string_view(rest).substr(1), b) || b < 0) return fail("bad offset after N");
    spec.offset = rest[0] == '-' ? -b : b;
  }
  if (spec.multiplier > 64 || spec.offset > kMaxCount || spec.offset < -kMaxCount) {
    return fail("out of range");
  }
  spec.text = (spec.multiplier == 1 ? std::string() : std::to_string(spec.multiplier)) + "N";
  if (spec.offset > 0) spec.text += "+" + std::to_string(spec.offset);
  if (spec.offset < 0) spec.text += std::to_string(spec.offset);
  return spec;
}

}  // namespace iocpbench::core
