#include "results/run_blocks.hpp"

#include <cmath>
#include <optional>
#include <string>

#include "engine/cpu_work.hpp"
#include "metrics/usage.hpp"
#include "results/json_null.hpp"

namespace iocpbench::results {

nlohmann::json percentiles_json(const metrics::Percentiles& p) {
  return {{"p50", p.p50}, {"p90", p.p90},   {"p99", p.p99},    {"p999", p.p999},
          {"max", p.max}, {"mean", p.mean}, {"count", p.count}};
}

namespace {

// handler_time.profile_levels: each ratio of a blocking profile and what its handlers read.
nlohmann::json profile_levels_json(const std::vector<engine::LevelReading>& levels) {
  nlohmann::json out = nlohmann::json::array();
  for (const engine::LevelReading& l : levels) {
    out.push_back({{"requested_ratio", l.requested_ratio},
                   {"blocking_handlers", l.handlers},
                   {"achieved_ratio", l.achieved_ratio},
                   {"blocked_only_ratio", or_null(l.blocked_only_ratio)}});
  }
  return out;
}

}  // namespace

nlohmann::json handler_time_json(const engine::BlockingRecord& r) {
  if (!r.blocks) {
    return {{"requested_ratio", r.requested_ratio},
            {"blocking_handlers", 0},
            {"not_split", "no block at b = 0: the handler only computes"},
            {"honoured", true}};
  }
  const engine::HandlerTimes& t = r.times;
  const double target_us = t.mean_us(t.target_block_ns);
  const double blocked_us = t.mean_us(t.blocked_ns);
  nlohmann::json j = {
      {"requested_ratio", r.requested_ratio},
      {"blocking_handlers", t.handlers},
      {"handler_us_mean", t.mean_us(t.handler_ns)},
      {"cpu_us_mean", t.mean_us(t.cpu_ns)},
      {"blocked_us_mean", blocked_us},
      {"runnable_wait_us_mean", t.mean_us(t.runnable_wait_ns)},
      {"target_block_us_mean", target_us},
      {"block_overshoot_us_mean", blocked_us - target_us},
      // Sleeps woken over 1 ms late (the host's; engine/block_control.hpp) and what they blocked
      // beyond their requests, per blocking handler; later sleeps were shortened to repay it.
      {"late_wakeups", t.late_wakeups},
      {"late_wakeup_threshold_us", static_cast<double>(engine::kLateWakeupNs) / 1e3},
      {"late_wakeup_us_mean", t.mean_us(t.late_excess_ns)},
      {"method", r.method},
      {"hint", or_null(r.hint)},
      {"honoured", r.honoured()},
      {"not_honoured_because", or_null(r.not_honoured_because)},
  };
  if (!r.profile_levels.empty()) j["profile_levels"] = profile_levels_json(r.profile_levels);
  if (!r.split_available) {
    j["runnable_wait_us_mean"] = nullptr;
    j["runnable_wait_unavailable"] = r.method;
  }
  return j;
}

nlohmann::json work_calibration_json(const engine::WorkCalibrationRecord& r) {
  nlohmann::json j = {{"method", engine::kWorkCalibrationMethod},
                      {"iterations_per_us", r.iterations_per_us},
                      {"calibration_trials", r.calibration_trials},
                      {"calibration_ms", r.calibration_ms},
                      {"target_us", r.target_us},
                      {"iterations", r.iterations},
                      {"check_repetitions", r.check_repetitions},
                      {"measured_us", r.measured_us},
                      {"block_us_target", r.block_us_target},
                      {"blocking_kind", to_string(r.blocking_kind)}};
  if (r.sleep_overshoot_us) j["sleep_overshoot_us"] = *r.sleep_overshoot_us;
  return j;
}

nlohmann::json timeline_json(const engine::TimelineRecord& r) {
  nlohmann::json windows = nlohmann::json::array();
  for (const engine::TimelineWindow& w : r.windows) {
    windows.push_back({{"t_ms", std::round(w.t_ms * 1000) / 1000},
                       {"ops_per_s", w.ops_per_s},
                       {"mean_threads", w.mean_threads},
                       {"blocking_ratio", w.blocking_ratio}});
  }
  return {{"window_ms", r.window_ms}, {"windows", windows}};
}

nlohmann::json blocking_profile_json(const core::BlockingProfile& profile) {
  nlohmann::json segments = nlohmann::json::array();
  for (const auto& s : profile.segments) {
    segments.push_back({{"ratio", s.ratio},
                        {"seconds", s.seconds > 0 ? nlohmann::json(s.seconds) : nlohmann::json(nullptr)}});
  }
  return {{"text", profile.text}, {"segments", segments}, {"repeats", profile.repeats}};
}

nlohmann::json pool_sizing_json(const engine::PoolSizingRecord& r) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& e : r.timeline.events) {
    const double t_ms =
        (static_cast<double>(e.t_ns) - static_cast<double>(r.window_start_ns)) / 1e6;
    points.push_back({std::round(t_ms * 1000) / 1000, e.threads});
  }
  const engine::PoolSizing& s = r.settings;
  const engine::PoolWindowSummary& w = r.window;
  nlohmann::json settings = {{"min_threads", s.min_threads},
                             {"max_threads", s.max_threads},
                             {"grow_below_cpu_pct", s.grow_below_cpu_pct},
                             {"shrink_above_cpu_pct", s.shrink_above_cpu_pct},
                             {"idle_timeout_ms", s.idle_timeout_ms}};
  if (!r.controller_settings.empty()) {  // a controller: its own settings, not Richter's
    settings = nlohmann::json::object();
    for (const auto& [key, value] : r.controller_settings) settings[key] = value;
  }
  return {{"controller", r.controller},
          {"settings", settings},
          {"window",
           {{"threads_at_start", w.threads_at_start},
            {"threads_at_end", w.threads_at_end},
            {"min_threads", w.min_threads},
            {"max_threads", w.max_threads},
            {"mean_threads", w.mean_threads}}},
          {"grows", r.timeline.grows},
          {"shrinks", r.timeline.shrinks},
          {"timeline_ms_threads", points},
          {"timeline_dropped", r.timeline.dropped}};
}

nlohmann::json error_detail_json(const engine::ErrorDetail& d) {
  return {{"completions_failed", d.completions_failed},
          {"blocking_reads_failed", d.blocking_reads_failed},
          {"remove_failures", d.remove_failures},
          {"workload", d.workload},
          {"drain_timed_out", d.drain_timed_out}};
}

nlohmann::json attribution_json(const engine::SwitchAttribution& a) {
  return {
      {"iocp_model",
       {{"port_waits", a.iocp_model.port_waits},
        {"handler_blocks", a.iocp_model.handler_blocks},
        {"preempted_over_limit", a.iocp_model.preempted_over_limit},
        {"total", a.iocp_model.total}}},
      {"emulation",
       {{"completion_thread", a.emulation.completion_thread},
        {"workers_other_voluntary", a.emulation.workers_other_voluntary},
        {"workers_preempted_by_it", a.emulation.workers_preempted_by_it},
        {"total", a.emulation.total}}},
      {"outside_port",
       {{"load_generator", a.outside_port.load_generator},
        {"other_threads", a.outside_port.other_threads},
        {"workers_preempted_otherwise", a.outside_port.workers_preempted_otherwise},
        {"total", a.outside_port.total}}},
      {"emulation_share", or_null(a.emulation_share)},
      {"method", engine::switch_attribution_method()},
  };
}

void mark_unavailable_switches(nlohmann::json& run) {
  const std::optional<std::string> why = metrics::context_switches_unavailable();
  if (!why) return;
  const nlohmann::json none = {{"voluntary", nullptr}, {"involuntary", nullptr}};
  run["context_switches_per_kop"] = nullptr;
  run["voluntary_switches_per_kop"] = nullptr;
  nlohmann::json& switches = run["context_switches"];
  switches["voluntary"] = nullptr;
  switches["involuntary"] = nullptr;
  if (switches.contains("by_role") && switches["by_role"].is_object()) {
    for (auto& role : switches["by_role"]) role = none;
  }
  switches["other"] = none;
  switches["unavailable"] = *why;
}

nlohmann::json port_lists_json(const engine::PortListsRecord& r) {
  const auto shares = [](const engine::ListShares& s) { return nlohmann::json(s.at); };
  nlohmann::json t = nlohmann::json::array(), waiting = t, active = t, paused = t, depth = t;
  for (const port::ListEvent& e : r.events) {
    t.push_back(static_cast<double>(e.t_ns) / 1e3);
    waiting.push_back(e.levels.waiting);
    active.push_back(e.levels.active);
    paused.push_back(e.levels.paused);
    depth.push_back(e.levels.depth);
  }
  return {{"concurrency", r.concurrency},
          {"window_s", r.window_s},
          {"mean", {{"waiting", r.mean_waiting}, {"active", r.mean_active}, {"paused", r.mean_paused}, {"depth", r.mean_depth}}},
          {"time_share_at_level",
           {{"waiting", shares(r.waiting)}, {"active", shares(r.active)}, {"paused", shares(r.paused)}, {"depth", shares(r.depth)}}},
          {"queued_with_room_s", r.queued_with_room_s},
          {"wake_delay",
           {{"handoffs", r.wakes},
            {"total_s", r.wake_total_s},
            {"mean_us", r.wake_mean_us},
            {"p50_us", r.wake_p50_us},
            {"p90_us", r.wake_p90_us},
            {"p99_us", r.wake_p99_us}}},
          {"events",
           {{"t_us", t}, {"waiting", waiting}, {"active", active}, {"paused", paused}, {"depth", depth}, {"cut", r.events_cut}}}};
}

}  // namespace iocpbench::results
