#include "cli/workload_flags.hpp"

#include <algorithm>
#include <charconv>
#include <iostream>
#include <stdexcept>
#include <system_error>

#include "cli/help_format.hpp"
#include "cli/option_help.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "engine/workload_params.hpp"

namespace iocpbench::cli {
namespace {

using workloads::ParamInfo;
using workloads::ParamListing;
using workloads::ParamType;

// The --help heading: the workload's own, or the advanced options for a flag of several.
const char* group_of(const ParamListing& p) {
  if (p.info->advanced || p.workloads.size() != 1) return kGroupAdvanced;
  switch (p.workloads.front()) {
    case WorkloadKind::post:
      return kGroupPost;
    case WorkloadKind::file:
      return kGroupFile;
    case WorkloadKind::socket:
      return kGroupSocket;
  }
  return kGroupAdvanced;
}

// "file, socket: <help> (1..1024)".
std::string help_of(const ParamListing& p) {
  std::string owners;
  for (WorkloadKind w : p.workloads) owners += (owners.empty() ? "" : ", ") + std::string(to_string(w));
  return owners + ": " + p.info->help + workloads::range_text(*p.info);
}

// The default as --help shows it: 256, 0, random; "" for none.
std::string default_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) return number_text(value.get<double>());
  if (value.is_number()) return value.dump();
  return {};
}

// One flag's text as the row's JSON value (ranges are the rows' to check).
nlohmann::json value_of(const ParamInfo& info, const std::string& text) {
  switch (info.type) {
    case ParamType::count: {
      long value = 0;
      const auto* end = text.data() + text.size();
      const auto [ptr, ec] = std::from_chars(text.data(), end, value);
      if (ec != std::errc() || ptr != end) throw BadInput{info.flag, "'" + text + "' is not an integer"};
      return value;
    }
    case ParamType::size: {  // units (4k, 64MiB); a plain number is the flag's own unit
      std::string reason;
      const auto value = core::parse_size(text, info.unit_bytes, &reason);
      if (!value) throw BadInput{info.flag, reason};
      return *value;
    }
    case ParamType::fraction:
      try {
        std::size_t used = 0;
        const double value = std::stod(text, &used);
        if (used != text.size()) throw std::invalid_argument("trailing text");
        return value;
      } catch (const std::exception&) {
        throw BadInput{info.flag, "'" + text + "' is not a number"};
      }
    case ParamType::choice:
    case ParamType::text:
    case ParamType::flag:
      break;
  }
  return text;
}

}  // namespace

bool WorkloadFlags::given(std::string_view flag) const {
  if (const auto found = on.find(flag); found != on.end()) return found->second;
  return !text_of(flag).empty();
}

const std::string& WorkloadFlags::text_of(std::string_view flag) const {
  static const std::string none;
  const auto found = text.find(flag);
  return found == text.end() ? none : found->second;
}

void add_workload_flags(CLI::App& c, WorkloadFlags& f) {
  for (const ParamListing& p : workloads::param_listing()) {
    const std::string flag = p.info->flag;
    if (p.info->type == ParamType::flag) {
      c.add_flag(flag, f.on[flag], help_of(p));
    } else {
      add_text_option(c, flag, f.text[flag], help_of(p), p.info->type_name, default_text(p.default_value));
    }
    group_options(c, group_of(p), {flag});
  }
}

void warn_inapplicable_flags(const WorkloadFlags& f, const std::vector<WorkloadKind>& workloads) {
  std::string flags, owners;
  std::size_t count = 0;
  for (const ParamListing& p : workloads::param_listing()) {
    if (!f.given(p.info->flag)) continue;
    const bool applies = std::any_of(workloads.begin(), workloads.end(), [&](WorkloadKind w) {
      return std::find(p.workloads.begin(), p.workloads.end(), w) != p.workloads.end();
    });
    if (applies) continue;
    flags += (flags.empty() ? "" : ", ") + std::string(p.info->flag);
    ++count;
  }
  if (count == 0) return;
  for (WorkloadKind w : workloads) owners += (owners.empty() ? "" : ",") + std::string(to_string(w));
  std::cerr << "iocpbench: warning: " << flags << (count == 1 ? " does" : " do") << " not apply to the "
            << owners << (workloads.size() == 1 ? " workload" : " workloads")
            << (count == 1 ? " and is ignored\n" : " and are ignored\n");
}

nlohmann::json workload_params_from_flags(const WorkloadFlags& f) {
  nlohmann::json j = nlohmann::json::object();
  for (const ParamListing& p : workloads::param_listing()) {
    if (!f.given(p.info->flag)) continue;
    j[p.info->key] = p.info->type == ParamType::flag ? nlohmann::json(p.info->flag_value)
                                                     : value_of(*p.info, f.text_of(p.info->flag));
  }
  return j;
}

}  // namespace iocpbench::cli
