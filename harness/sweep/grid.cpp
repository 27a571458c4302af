#include "sweep/grid.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "core/errors.hpp"
#include "engine/dequeue_batch.hpp"
#include "engine/workload_params.hpp"

namespace iocpbench::sweep {
namespace {


std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) out.push_back(item);
  if (!text.empty() && text.back() == ',') out.emplace_back();
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<core::CountSpec> specs(std::initializer_list<const char*> texts, bool allow_zero) {
  std::vector<core::CountSpec> out;
  for (const char* t : texts) out.push_back(*core::parse_count_spec(t, allow_zero, nullptr));
  return out;
}

// Ratios print as the shortest text that reads back the same ("0.25", not "0.250000").
std::string ratio_text(double ratio) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), ratio);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(ratio);
}

}  // namespace

Grid default_grid() {
  Grid grid;
  grid.concurrency = specs({"0", "N", "2N"}, true);
  for (const auto& p : specs({"N", "2N", "2N+2"}, false)) grid.pool.emplace_back(p);
  return grid;
}

Grid quick_grid() {
  Grid grid = default_grid();
  grid.concurrency = specs({"N", "2N"}, true);
  grid.blocking = {0, 0.5};
  grid.repetitions = 2;
  grid.duration_s = 0.3;
  grid.warmup_s = 0.05;
  grid.workload_params = {{"file_size_mib", 64}};
  return grid;
}

std::vector<core::CountSpec> parse_count_list(const std::string& text, bool allow_zero,
                                        const std::string& flag) {
  std::vector<core::CountSpec> out;
  for (const auto& item : split(text)) {
    std::string reason;
    auto spec = core::parse_count_spec(item, allow_zero, &reason);
    if (!spec) throw BadInput{flag, reason};
    out.push_back(*spec);
  }
  if (out.empty()) throw BadInput{flag, "empty list"};
  return out;
}

std::vector<core::CountSpec> parse_dequeue_batch_list(const std::string& text, const std::string& flag) {
  std::vector<core::CountSpec> out = parse_count_list(text, false, flag);
  for (const core::CountSpec& spec : out) {
    if (spec.multiplier == 0 && spec.offset > static_cast<long>(engine::kMaxDequeueBatch)) {
      throw BadInput{flag, "'" + spec.text + "': more than 1024 packets per remove"};
    }
  }
  return out;
}

SkipOnSuccess parse_skip_on_success_flag(const std::string& text, const std::string& flag) {
  const auto mode = parse_skip_on_success(text);
  if (!mode) throw BadInput{flag, "'" + text + "' is not on or off (or default)"};
  return *mode;
}

platform::PlacementSpec parse_placement_text(const std::string& text, const std::string& flag) {
  std::string why;
  const auto spec = platform::parse_placement(text, why);
  if (!spec) throw BadInput{flag, why};
  return *spec;
}

std::vector<core::PoolSpec> parse_pool_list(const std::string& text, const std::string& flag) {
  std::vector<core::PoolSpec> out;
  for (const auto& item : split(text)) {
    std::string reason;
    auto spec = core::parse_pool_spec(trim(item), &reason);
    if (!spec) throw BadInput{flag, reason};
    out.push_back(*spec);
  }
  if (out.empty()) throw BadInput{flag, "empty list"};
  return out;
}

namespace {
// A comma-separated list of finite numbers; `refused(value)` says why a value is not taken ("":
// taken), and the error names the item and that reason.
template <typename Refused>
std::vector<double> parse_number_list(const std::string& text, const std::string& flag, Refused refused) {
  std::vector<double> out;
  for (const auto& raw : split(text)) {
    const std::string item = trim(raw);
    double value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    const bool number = !item.empty() && ec == std::errc() && end == item.data() + item.size() &&
                        std::isfinite(value);
    const std::string why = number ? refused(value) : std::string("is not a number");
    if (!why.empty()) throw BadInput{flag, "'" + item + "' " + why};
    out.push_back(value);
  }
  if (out.empty()) throw BadInput{flag, "empty list"};
  return out;
}
}  // namespace

bool parse_pacer_priority(const std::string& text, const std::string& flag) {
  if (text == "realtime") return true;
  if (text == "normal") return false;
  throw BadInput{flag, "'" + text + "' is not realtime or normal"};
}

std::vector<double> parse_load_list(const std::string& text, const std::string& flag) {
  return parse_number_list(text, flag, [](double v) -> std::string {
    if (v <= 0) return "is not a fraction of capacity in (0, 1]";
    if (v > 1) {
      return "is above 1, which has no measured meaning (the capacity is the closed loop's); "
             "give --rate for rates beyond it";
    }
    return {};
  });
}

std::vector<double> parse_rate_list(const std::string& text, const std::string& flag) {
  return parse_number_list(text, flag, [](double v) -> std::string {
    if (v <= 0) return "is not a positive rate (completions per second)";
    return v > 1e8 ? "is more than 100 million per second" : "";
  });
}

std::vector<double> parse_ratio_list(const std::string& text, const std::string& flag) {
  return parse_number_list(text, flag, [](double v) -> std::string {
    return v < 0 || v >= 1 ? "is outside [0, 1)" : "";
  });
}

std::vector<WorkloadKind> parse_workload_list(const std::string& text, const std::string& flag) {
  std::vector<WorkloadKind> out;
  for (const auto& raw : split(text)) {
    const std::string item = trim(raw);
    const auto kind = parse_workload_kind(item);
    if (!kind) throw BadInput{flag, "unknown workload '" + item + "' (" + kWorkloadNames + ")"};
    out.push_back(*kind);
  }
  if (out.empty()) throw BadInput{flag, "empty list"};
  return out;
}

std::vector<port::Backend> parse_port_list(const std::string& text, const std::string& flag) {
  std::vector<port::Backend> out;
  for (const auto& raw : split(text)) {
    const std::string item = trim(raw);
    const auto backend = port::parse_backend(item);
    if (!backend) throw BadInput{flag, "unknown backend '" + item + "' (" + port::backend_names() + ")"};
    if (!port::backend_available(*backend)) {
      throw BadInput{flag, "backend '" + item + "' is not available on this OS"};
    }
    out.push_back(*backend);
  }
  if (out.empty()) throw BadInput{flag, "empty list"};
  return out;
}

std::vector<Dispatch> parse_dispatch_list(const std::string& text, const std::string& flag) {
  std::vector<Dispatch> out;
  for (const auto& raw : split(text)) {
    const std::string item = trim(raw);
    const auto dispatch = parse_dispatch(item);
    if (!dispatch) throw BadInput{flag, "unknown dispatch model '" + item + "' (shared, per-thread)"};
    if (std::find(out.begin(), out.end(), *dispatch) == out.end()) out.push_back(*dispatch);
  }
  if (out.empty()) throw BadInput{flag, "empty list"};
  return out;
}

BlockingKind parse_blocking_kind_flag(const std::string& text, const std::string& flag) {
  const auto kind = parse_blocking_kind(text);
  if (!kind) throw BadInput{flag, "'" + text + "' is not sleep or io"};
  return *kind;
}

namespace {
// The grid's arrival settings: the closed loop alone, or one per load and per rate.
std::vector<engine::OpenLoopSpec> open_loop_settings(const Grid& grid) {
  if (grid.loads.empty() && grid.rates.empty()) return {engine::OpenLoopSpec{}};
  std::vector<engine::OpenLoopSpec> out;
  engine::OpenLoopSpec base;
  base.arrivals = grid.arrivals;
  base.seed = grid.seed;
  base.in_flight_bound = grid.max_in_flight;
  base.realtime_pacer = grid.realtime_pacer;
  for (const double load : grid.loads) {
    out.push_back(base);
    out.back().load = load;
  }
  for (const double rate : grid.rates) {
    out.push_back(base);
    out.back().rate_ops_per_s = rate;
  }
  return out;
}
}  // namespace

std::vector<engine::PointSpec> expand(const Grid& grid, unsigned logical_cpus) {
  std::vector<engine::PointSpec> points;
  for (const auto& workload : grid.workloads) {
    // Parsed here, once per workload, where a grid becomes points, which carry them typed.
    const workloads::WorkloadParams params = workloads::parse_workload_params(workload, grid.workload_params);
    for (const auto backend : grid.ports) {
     for (const auto& dispatch : grid.dispatch) {
      const bool per_thread = dispatch == Dispatch::per_thread;
      // Per-thread ports have concurrency 1 each: one concurrency value, "1".
      const std::vector<core::CountSpec> one{core::CountSpec{"1", 0, 1}};
      for (const auto& c : per_thread ? one : grid.concurrency) {
        for (const auto& p : grid.pool) {
          // A self-sizing pool shares one port: not a per-thread-ports point.
          if (per_thread && p.self_sizing()) continue;
          const std::vector<double> ratios =
              grid.blocking_profile
                  ? std::vector<double>{grid.blocking_profile->mean_over(grid.duration_s)}
                  : grid.blocking;
          for (const double b : ratios) {
            engine::PointSpec point;
            point.blocking_profile = grid.blocking_profile;
            point.timeline_ms = grid.timeline_ms;
            point.workload = workload;
            point.workload_params = params;
            point.port = backend;
            point.concurrency = c;
            point.concurrency_value = c.resolve(logical_cpus);
            point.pool = p;
            point.pool_value = p.resolve(logical_cpus);
            point.blocking_ratio = b;
            point.blocking_kind = grid.blocking_kind;
            point.work_us = grid.work_us;
            point.working_set_kib = grid.working_set_kib;
            point.duration_s = grid.duration_s;
            point.warmup_s = grid.warmup_s;
            point.dispatch = dispatch;
            // The post workload has no I/O handles: its points keep the default.
            point.skip_on_success =
                workload == WorkloadKind::post ? SkipOnSuccess::by_default : grid.skip_on_success;
            point.affinity = grid.affinity;
            point.load_affinity = grid.load_affinity;
            for (const core::CountSpec& q : grid.dequeue_batch) {
              point.dequeue_batch = q;
              point.dequeue_batch_value = q.resolve(logical_cpus);
              for (const engine::OpenLoopSpec& arrivals : open_loop_settings(grid)) {
                point.open_loop = arrivals;
                points.push_back(point);
              }
            }
          }
        }
      }
     }
    }
  }
  return points;
}

std::string point_id(const engine::PointSpec& point) {
  std::ostringstream id;
  id << to_string(point.workload) << '/' << port::to_string(point.port) << "/c=" << point.concurrency.text
     << "/p=" << point.pool.text << "/b=" << ratio_text(point.blocking_ratio) << '/'
     << to_string(point.blocking_kind) << "/w=" << ratio_text(point.work_us);
  // Shared-port ids stay as they were (results files from before the field resume as before).
  if (point.dispatch != Dispatch::shared) id << "/d=" << to_string(point.dispatch);
  if (point.working_set_kib > 0) id << "/ws=" << point.working_set_kib;
  // A batch of 1 (the pool's one-packet path) is not named: ids from before batches stay as
  // they were. Before the completion path, which --resume's upgrade cuts from the end.
  if (point.dequeue_batch.text != "1") id << "/batch=" << point.dequeue_batch.text;
  // Skip on success only when asked for: ids from before the flag stay as they were.
  if (point.skip_on_success != SkipOnSuccess::by_default) {
    id << "/skip=" << to_string(point.skip_on_success);
  }
  // Placements only when they pin: ids from before placements stay as they were.
  if (point.affinity.pins()) id << "/affinity=" << point.affinity.text;
  if (point.load_affinity.pins()) id << "/load-affinity=" << point.load_affinity.text;
  id << completion_path_id_suffix(point.workload_params);
  // A blocking profile only when given: ids without one stay as they were.
  if (point.blocking_profile) id << "/profile=" << point.blocking_profile->text;
  // Open loop only: closed-loop ids stay as they were.
  const engine::OpenLoopSpec& o = point.open_loop;
  if (o.load > 0) id << "/load=" << ratio_text(o.load);
  if (o.rate_ops_per_s > 0) id << "/rate=" << ratio_text(o.rate_ops_per_s);
  if (o.enabled() && o.arrivals != core::kDefaultArrivals) id << '/' << core::to_string(o.arrivals);
  if (o.enabled() && o.in_flight_bound > 0) id << "/mif=" << o.in_flight_bound;
  return id.str();
}

namespace {
// --completion-path (file, socket), only when not the default: the default's ids stay short.
std::string path_suffix(const std::string& path) {
  if (path == workloads::to_string(workloads::kDefaultCompletionPath)) return {};
  return "/cp=" + path;
}
}  // namespace

std::string completion_path_id_suffix(WorkloadKind workload,
                                      const nlohmann::json& workload_params) {
  if (!workloads::takes_completion_path(workload) || !workload_params.is_object()) return {};
  const auto found = workload_params.find("completion_path");
  if (found == workload_params.end() || !found->is_string()) return {};
  return path_suffix(found->get<std::string>());
}

std::string completion_path_id_suffix(const workloads::WorkloadParams& params) {
  const auto path = workloads::completion_path_of(params);
  return path ? path_suffix(workloads::to_string(*path)) : std::string();
}

namespace {

nlohmann::json hill_settings_json(const core::HillSettings& h) {
  return {{"wave_period_samples", h.wave_period_samples},
          {"max_wave_magnitude", h.max_wave_magnitude},
          {"history_samples", h.history_samples},
          {"sample_low_ms", h.sample_low_ms},
          {"sample_high_ms", h.sample_high_ms},
          {"max_changes_per_s", h.max_changes_per_s},
          {"starvation_ms", h.starvation_ms}};
}

// The --hill-* flags' settings of the grid's hill pools (one set per invocation: the first
// hill pool's), or none when it has no hill pool or they are the defaults.
std::optional<core::HillSettings> grid_hill_settings(const Grid& grid) {
  for (const auto& p : grid.pool) {
    if (p.controlled && p.controlled->kind == core::ControllerKind::hill) {
      if (hill_settings_json(p.controlled->hill) == hill_settings_json(core::HillSettings{})) break;
      return p.controlled->hill;
    }
  }
  return std::nullopt;
}

// A sweep block's "hill" back onto every hill pool of the grid (what apply_hill_flags did).
void read_hill_settings(const nlohmann::json& j, Grid& grid) {
  core::HillSettings h;
  h.wave_period_samples = j.at("wave_period_samples").get<unsigned>();
  h.max_wave_magnitude = j.at("max_wave_magnitude").get<double>();
  h.history_samples = j.at("history_samples").get<unsigned>();
  h.sample_low_ms = j.at("sample_low_ms").get<unsigned>();
  h.sample_high_ms = j.at("sample_high_ms").get<unsigned>();
  h.max_changes_per_s = j.at("max_changes_per_s").get<double>();
  h.starvation_ms = j.at("starvation_ms").get<unsigned>();
  for (auto& p : grid.pool) {
    if (p.controlled && p.controlled->kind == core::ControllerKind::hill) p.controlled->hill = h;
  }
}

}  // namespace

nlohmann::json grid_to_json(const Grid& grid) {
  nlohmann::json j;
  j["workloads"] = nlohmann::json::array();
  for (auto w : grid.workloads) j["workloads"].push_back(to_string(w));
  j["ports"] = nlohmann::json::array();
  for (auto b : grid.ports) j["ports"].push_back(std::string(port::to_string(b)));
  j["concurrency"] = nlohmann::json::array();
  for (const auto& c : grid.concurrency) j["concurrency"].push_back(c.text);
  j["pool"] = nlohmann::json::array();
  for (const auto& p : grid.pool) j["pool"].push_back(p.text);
  // The hill pools' --hill-* settings, only when not the defaults (the spec's text does not
  // carry them; --resume reads them back, and grids without them read as before).
  if (const auto hill = grid_hill_settings(grid)) j["hill"] = hill_settings_json(*hill);
  if (grid.dispatch != std::vector<Dispatch>{Dispatch::shared}) {
    j["dispatch"] = nlohmann::json::array();
    for (auto d : grid.dispatch) j["dispatch"].push_back(to_string(d));
  }
  j["blocking"] = grid.blocking;
  // Only when given: a grid without them reads as before (--resume compares).
  if (grid.blocking_profile) j["blocking_profile"] = grid.blocking_profile->text;
  if (grid.timeline_ms != 250) j["timeline_ms"] = grid.timeline_ms;
  // Only when not the default: a grid without batches reads as before (--resume compares).
  if (grid.dequeue_batch.size() != 1 || grid.dequeue_batch.front().text != "1") {
    j["dequeue_batch"] = nlohmann::json::array();
    for (const auto& q : grid.dequeue_batch) j["dequeue_batch"].push_back(q.text);
  }
  if (grid.skip_on_success != SkipOnSuccess::by_default) {
    j["skip_on_success"] = to_string(grid.skip_on_success);
  }
  // Placements only when they pin: a grid without them reads as before (--resume compares).
  if (grid.affinity.pins()) j["affinity"] = grid.affinity.text;
  if (grid.load_affinity.pins()) j["load_affinity"] = grid.load_affinity.text;
  // Open-loop keys only when the grid has loads or rates (closed-loop grids read as before).
  if (!grid.loads.empty()) j["load"] = grid.loads;
  if (!grid.rates.empty()) j["rate"] = grid.rates;
  if (!grid.loads.empty() || !grid.rates.empty()) {
    j["arrivals"] = core::to_string(grid.arrivals);
    if (grid.max_in_flight > 0) j["max_in_flight"] = grid.max_in_flight;
    if (!grid.realtime_pacer) j["pacer_priority"] = "normal";
  }
  j["blocking_kind"] = to_string(grid.blocking_kind);
  j["work_us"] = grid.work_us;
  if (grid.working_set_kib > 0) j["working_set_kib"] = grid.working_set_kib;
  j["workload_params"] = grid.workload_params;
  j["repetitions"] = grid.repetitions;
  j["duration_s"] = grid.duration_s;
  j["warmup_s"] = grid.warmup_s;
  j["seed"] = grid.seed;
  j["target_ci_pct"] = grid.target_ci_pct;
  j["max_repetitions"] = grid.max_repetitions;
  return j;
}

Grid grid_from_json(const nlohmann::json& j, const std::string& flag) {
  if (!j.is_object()) throw BadInput{flag, "expected a JSON object"};
  Grid grid = default_grid();
  auto list_text = [&](const char* key) {
    std::string text;
    for (const auto& item : j.at(key)) {
      if (!text.empty()) text += ',';
      text += item.is_string() ? item.get<std::string>() : item.dump();
    }
    return text;
  };
  try {
    if (j.contains("workloads")) grid.workloads = parse_workload_list(list_text("workloads"), flag);
    if (j.contains("ports")) grid.ports = parse_port_list(list_text("ports"), flag);
    if (j.contains("concurrency")) grid.concurrency = parse_count_list(list_text("concurrency"), true, flag);
    if (j.contains("dispatch")) grid.dispatch = parse_dispatch_list(list_text("dispatch"), flag);
    if (j.contains("pool")) grid.pool = parse_pool_list(list_text("pool"), flag);
    if (j.contains("hill")) read_hill_settings(j.at("hill"), grid);
    if (j.contains("blocking")) grid.blocking = parse_ratio_list(list_text("blocking"), flag);
    if (j.contains("blocking_profile")) {
      std::string reason;
      grid.blocking_profile = core::parse_blocking_profile(j.at("blocking_profile").get<std::string>(), &reason);
      if (!grid.blocking_profile) throw BadInput{flag, "blocking_profile: " + reason};
    }
    if (j.contains("timeline_ms")) grid.timeline_ms = j.at("timeline_ms").get<unsigned>();
    if (j.contains("dequeue_batch")) grid.dequeue_batch = parse_dequeue_batch_list(list_text("dequeue_batch"), flag);
    if (j.contains("skip_on_success")) {
      grid.skip_on_success =
          parse_skip_on_success_flag(j.at("skip_on_success").get<std::string>(), flag);
    }
    if (j.contains("affinity")) grid.affinity = parse_placement_text(j.at("affinity").get<std::string>(), flag);
    if (j.contains("load_affinity")) {
      grid.load_affinity = parse_placement_text(j.at("load_affinity").get<std::string>(), flag);
    }
    if (j.contains("load")) grid.loads = parse_load_list(list_text("load"), flag);
    if (j.contains("rate")) grid.rates = parse_rate_list(list_text("rate"), flag);
    if (j.contains("arrivals")) {
      const auto arrivals = core::parse_arrival_process(j.at("arrivals").get<std::string>());
      if (!arrivals) throw BadInput{flag, "arrivals must be constant or poisson"};
      grid.arrivals = *arrivals;
    }
    if (j.contains("max_in_flight")) grid.max_in_flight = j.at("max_in_flight").get<unsigned>();
    if (j.contains("pacer_priority")) {
      grid.realtime_pacer = parse_pacer_priority(j.at("pacer_priority").get<std::string>(), flag);
    }
    if (j.contains("blocking_kind")) grid.blocking_kind = parse_blocking_kind_flag(j.at("blocking_kind").get<std::string>(), "--blocking-kind");
    if (j.contains("work_us")) grid.work_us = j.at("work_us").get<double>();
    if (j.contains("working_set_kib")) grid.working_set_kib = j.at("working_set_kib").get<std::uint32_t>();
    if (j.contains("workload_params")) {
      grid.workload_params = workloads::with_current_keys(j.at("workload_params"));
    }
    if (j.contains("repetitions")) grid.repetitions = j.at("repetitions").get<unsigned>();
    if (j.contains("duration_s")) grid.duration_s = j.at("duration_s").get<double>();
    if (j.contains("warmup_s")) grid.warmup_s = j.at("warmup_s").get<double>();
    if (j.contains("seed")) grid.seed = j.at("seed").get<std::uint64_t>();
    if (j.contains("target_ci_pct")) grid.target_ci_pct = j.at("target_ci_pct").get<double>();
    if (j.contains("max_repetitions")) grid.max_repetitions = j.at("max_repetitions").get<unsigned>();
  } catch (const nlohmann::json::exception& e) {
    throw BadInput{flag, std::string("malformed grid: ") + e.what()};
  }
  return grid;
}

}  // namespace iocpbench::sweep
