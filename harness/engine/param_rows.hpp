#pragma once
// A parameter set as rows, fio's way: each parameter is declared once, as one row (its key in
// the results' workload_params, its flag, type, range, help and the field it fills), and the
// rest is drawn from the rows: the flags and their --help (cli/workload_flags.cpp, with each
// default read from a default-constructed struct), the checks that name the flag, the typed
// value (parse_rows) and the JSON (rows_to_json). A new parameter is a field and a row.

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace iocpbench::workloads {

enum class ParamType {
  count,     // a whole number in [low, high]
  size,      // a whole number of unit_bytes (a plain number), or a size with units (4k, 1GiB)
  fraction,  // a number in [low, high]
  choice,    // one of `choices`, in the enum's order
  text,      // free text (a path); empty: not given (null in the JSON)
  flag,      // a flag with no value: when given, the field takes flag_value
};

// What a row says of itself, whatever its struct: all the CLI needs.
struct ParamInfo {
  const char* key;        // in workload_params
  const char* flag;       // --flag
  ParamType type;
  const char* type_name;  // in --help: INT, BYTES, MIB, FLOAT, TEXT, FILE
  const char* help;       // without the workload's name, which --help puts first
  double low = 0;         // count, size, fraction: the accepted range (size: in unit_bytes)
  double high = 0;
  std::uint64_t unit_bytes = 1;          // size
  std::span<const char* const> choices = {};  // choice
  bool flag_value = true;                // flag
  bool omit_default = false;  // the JSON leaves the key out while the field has its default
  bool advanced = false;      // --help files it under the advanced options
};

// Checks a value for its row (BadInput naming the row's flag); returns it normalised (a count
// as an integer).
nlohmann::json checked_value(const ParamInfo& info, const nlohmann::json& value);
// " (1..4096)", " (random | sequential)": the range --help adds to the row's help.
std::string range_text(const ParamInfo& info);

template <typename P>
struct ParamRow {
  using params_type = P;
  ParamInfo info;
  nlohmann::json (*get)(const P& params, const ParamInfo& info);
  void (*set)(P& params, const nlohmann::json& checked, const ParamInfo& info);
};

namespace param_detail {

template <typename T>
nlohmann::json encode(const T& value, const ParamInfo& info) {
  if constexpr (std::is_enum_v<T>) {
    return info.choices[static_cast<std::size_t>(value)];
  } else if constexpr (std::is_same_v<T, std::string>) {
    return value.empty() ? nlohmann::json() : nlohmann::json(value);
  } else {
    return value;
  }
}

template <typename T>
T decode(const nlohmann::json& value, const ParamInfo& info) {
  if constexpr (std::is_enum_v<T>) {
    const std::string text = value.get<std::string>();
    for (std::size_t i = 0; i < info.choices.size(); ++i) {
      if (text == info.choices[i]) return static_cast<T>(i);
    }
    throw std::logic_error("a choice its row does not have");  // checked_value refused it first
  } else {
    return value.get<T>();
  }
}

}  // namespace param_detail

// The row of field M of struct P.
template <typename P, auto M>
constexpr ParamRow<P> row(ParamInfo info) {
  using T = std::remove_cvref_t<decltype(std::declval<P&>().*M)>;
  return {info,
          [](const P& p, const ParamInfo& i) { return param_detail::encode<T>(p.*M, i); },
          [](P& p, const nlohmann::json& v, const ParamInfo& i) {
            p.*M = param_detail::decode<T>(v, i);
          }};
}

// Absent or null keys keep the struct's defaults; keys of no row are ignored.
template <typename P>
P parse_rows(std::span<const ParamRow<P>> rows, const nlohmann::json& j) {
  P p;
  for (const auto& r : rows) {
    if (!j.is_object()) break;
    const auto found = j.find(r.info.key);
    if (found == j.end() || found->is_null()) continue;
    r.set(p, checked_value(r.info, *found), r.info);
  }
  return p;
}

template <typename P>
nlohmann::json rows_to_json(std::span<const ParamRow<P>> rows, const P& p) {
  nlohmann::json j = nlohmann::json::object();
  const P defaults;
  for (const auto& r : rows) {
    nlohmann::json value = r.get(p, r.info);
    if (r.info.omit_default && value == r.get(defaults, r.info)) continue;
    j[r.info.key] = std::move(value);
  }
  return j;
}

}  // namespace iocpbench::workloads
