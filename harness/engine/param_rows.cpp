#include "engine/param_rows.hpp"

#include <cmath>
#include <string>
#include <string_view>

#include "core/errors.hpp"
#include "core/units.hpp"

namespace iocpbench::workloads {
namespace {

// "read, write or mixed".
std::string choice_list(std::span<const char* const> choices, const char* joint,
                        const char* last_joint) {
  std::string text;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) text += i + 1 == choices.size() ? last_joint : joint;
    text += choices[i];
  }
  return text;
}

// 4096, 16777216, 0.99: a bound as typed.
std::string bound_text(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<long long>(value));
  }
  return core::short_number_text(value);
}

nlohmann::json checked_whole(const ParamInfo& info, const nlohmann::json& value) {
  long n = 0;
  if (value.is_number_integer()) {
    n = value.get<long>();
  } else if (value.is_number_float() && value.get<double>() == std::floor(value.get<double>()) &&
             std::fabs(value.get<double>()) < 1e18) {
    n = static_cast<long>(value.get<double>());
  } else {
    throw BadInput{info.flag, "must be an integer"};
  }
  if (n < info.low) {
    throw BadInput{info.flag, info.low == 0 ? std::string("must not be negative")
                                            : "must be at least " + bound_text(info.low)};
  }
  if (n > info.high) throw BadInput{info.flag, "must be at most " + bound_text(info.high)};
  return n;
}

}  // namespace

nlohmann::json checked_value(const ParamInfo& info, const nlohmann::json& value) {
  switch (info.type) {
    case ParamType::count:
    case ParamType::size:
      return checked_whole(info, value);
    case ParamType::fraction:
      if (!value.is_number() || !(value.get<double>() >= info.low && value.get<double>() <= info.high)) {
        throw BadInput{info.flag, "must be a fraction in [" + bound_text(info.low) + ", " +
                                      bound_text(info.high) + "]"};
      }
      return value.get<double>();
    case ParamType::choice: {
      if (!value.is_string()) throw BadInput{info.flag, "must be text"};
      const std::string text = value.get<std::string>();
      for (const char* choice : info.choices) {
        if (text == choice) return text;
      }
      throw BadInput{info.flag, "'" + text + "' is not " + choice_list(info.choices, ", ", " or ")};
    }
    case ParamType::text:
      if (!value.is_string()) throw BadInput{info.flag, "must be text"};
      return value;
    case ParamType::flag:
      if (!value.is_boolean()) throw BadInput{info.flag, "must be true or false"};
      return value;
  }
  return value;
}

std::string range_text(const ParamInfo& info) {
  switch (info.type) {
    case ParamType::count:
    case ParamType::fraction:
      return " (" + bound_text(info.low) + ".." + bound_text(info.high) + ")";
    case ParamType::size:
      return " (" + bound_text(info.low) + ".." + bound_text(info.high) +
             (info.unit_bytes == 1 ? " bytes)" : info.unit_bytes == (1u << 20) ? " MiB)" : ")");
    case ParamType::choice:
      return " (" + choice_list(info.choices, " | ", " | ") + ")";
    case ParamType::text:
    case ParamType::flag:
      return {};
  }
  return {};
}

}  // namespace iocpbench::workloads
