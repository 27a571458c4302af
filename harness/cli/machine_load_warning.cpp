#include "cli/machine_load_warning.hpp"

namespace iocpbench::cli {

std::optional<std::string> busy_machine_warning(const std::vector<results::PointResult>& points) {
  std::size_t runs = 0, busy = 0;
  const nlohmann::json* busiest = nullptr;
  double busiest_share = -1;
  for (const auto& point : points) {
    for (const auto& run : point.runs) {
      ++runs;
      const auto load = run.fields.find("machine_load");
      if (load == run.fields.end() || !load->is_object() || !load->value("busy", false)) continue;
      ++busy;
      const auto share = load->find("others_cpu_share");
      const double value = share != load->end() && share->is_number() ? share->get<double>() : 0.0;
      if (value > busiest_share) {
        busiest_share = value;
        busiest = &*load;
      }
    }
  }
  if (busy == 0 || busiest == nullptr) return std::nullopt;
  std::string reasons;
  for (const auto& reason : busiest->value("reasons", nlohmann::json::array())) {
    if (reason.is_string()) reasons += (reasons.empty() ? "" : "; ") + reason.get<std::string>();
  }
  std::string line = runs == 1 ? "the machine was busy during the run"
                               : "the machine was busy during " + std::to_string(busy) + " of " +
                                     std::to_string(runs) + " runs";
  if (!reasons.empty()) line += " (" + reasons + ")";
  return line + "; numbers may be low";
}

}  // namespace iocpbench::cli
