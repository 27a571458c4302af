#include "results/document.hpp"

#include "results/keys.hpp"

namespace iocpbench::results {

unsigned RunRecord::repetition() const {
  return fields.value(key::kRepetition, 0u);
}

bool RunRecord::honoured() const {
  const auto found = fields.find(key::kHandlerTime);
  if (found == fields.end() || !found->is_object()) return true;
  return found->value(key::kHonoured, true);
}

std::string RunRecord::not_honoured_because() const {
  if (honoured()) return {};
  const nlohmann::json& because = fields.at(key::kHandlerTime).value(key::kNotHonouredBecause, nlohmann::json());
  return because.is_string() ? because.get<std::string>() : std::string();
}

}  // namespace iocpbench::results
