// A run's typed result (engine/run_result.hpp) as schema v1 records it: points[].runs[] and the
// point around them. The keys of a run are spelled here and, for its measured blocks, in
// run_blocks.cpp, and nowhere else in the harness (iocpbench_analysis/ reads them).

#include <algorithm>
#include <utility>

#include "engine/machine_load.hpp"
#include "engine/open_loop.hpp"
#include "engine/switch_attribution.hpp"
#include "engine/workload_params.hpp"
#include "io/async_io.hpp"
#include "metrics/usage.hpp"
#include "platform/platform.hpp"
#include "results/affinity_json.hpp"
#include "results/dequeue_batch_json.hpp"
#include "results/json_null.hpp"
#include "results/keys.hpp"
#include "results/peer_commands.hpp"
#include "results/run_blocks.hpp"
#include "results/write.hpp"

namespace iocpbench::results {
namespace {

using engine::PointSpec;
using engine::RunResult;

nlohmann::json usage_json(const metrics::Usage& u) {
  return {{"voluntary", u.voluntary}, {"involuntary", u.involuntary}};
}

// The counted switches split into the IOCP model's and the emulation's (engine/switch_attribution.hpp);
// null where the OS cannot count them.
nlohmann::json switch_attribution(const RunResult& r, const metrics::Usage& other) {
  if (metrics::context_switches_unavailable()) return nullptr;
  return attribution_json(engine::attribute_switches(engine::switch_counts_of(r, other.voluntary + other.involuntary)));
}

// runs[].machine_load: what else used the CPUs in the window (engine/machine_load.hpp).
nlohmann::json machine_load_json(const engine::MachineLoadRecord& m) {
  return {{"busy", m.busy},
          {"reasons", m.reasons},
          {"steal_share", or_null(m.steal_share)},
          {"others_cpu_share", or_null(m.others_cpu_share)},
          {"preempted_by_others_share", or_null(m.preempted_by_others_share)}};
}

// context_switches, cpu and threads_by_role: the process's window split by role.
struct RoleBlocks {
  nlohmann::json switches, cpu, threads;
};

RoleBlocks role_blocks(const RunResult& r) {
  nlohmann::json by_role = nlohmann::json::object();
  nlohmann::json cpu_by_role = nlohmann::json::object();
  nlohmann::json threads_by_role = nlohmann::json::object();
  metrics::Usage roles_sum;
  for (int role = 0; role < metrics::kRoles; ++role) {
    const char* name = metrics::to_string(static_cast<metrics::Role>(role));
    by_role[name] = usage_json(r.by_role[role]);
    cpu_by_role[name] = r.by_role[role].cpu_s;
    threads_by_role[name] = r.role_threads[role];
    roles_sum += r.by_role[role];
  }
  const metrics::Usage other = r.process - roles_sum;
  const double cpu_s = r.process.user_s + r.process.sys_s;
  const double capacity = r.seconds * std::max(1u, r.logical_cpus);
  RoleBlocks blocks;
  blocks.switches = {{"voluntary", r.process.voluntary},
                     {"involuntary", r.process.involuntary},
                     {"by_role", by_role},
                     {"other", usage_json(other)},
                     {"attribution", switch_attribution(r, other)},
                     {"method", metrics::usage_method()}};
  blocks.cpu = {{"user_s", r.process.user_s},
                {"sys_s", r.process.sys_s},
                {"utilisation", capacity > 0 ? cpu_s / capacity : 0.0},
                {"utilisation_of", "logical CPUs x seconds"},
                {"by_role_s", cpu_by_role}};
  blocks.threads = threads_by_role;
  return blocks;
}

nlohmann::json port_counters_json(const RunResult& r) {
  return {{"available", r.port_counters.available},
          {"handoffs", r.port_counters.handoffs},
          {"queued", r.port_counters.queued},
          {"max_active", r.port_counters.max_active},
          {"over_limit_s", r.port_counters.over_limit_s},
          {"max_depth", r.port_counters.max_depth},
          {"effective_concurrency", r.effective_concurrency},
          {"scope", "handoffs, queued, over_limit_s: the window; max_*: the whole run"}};
}

nlohmann::json accounting_json(const RunResult& r) {
  return {{"completions_handled_total", r.completions_handled_total},
          {"packets_handled_total", r.packets_handled_total},
          {"completions_inline_total", r.completions_inline_total},
          {"packets_posted_total", r.packets_posted_total},
          {"stop_packets_taken", r.stop_packets_taken},
          {"left_in_port", r.left_in_port},
          {"drained", r.drained}};
}


// {spec, value}, and for an auto pool its settings on this machine (value: the maximum).
nlohmann::json pool_json(const PointSpec& spec) {
  nlohmann::json pool = {{"spec", spec.pool.text}, {"value", spec.pool_value}};
  if (const auto& a = spec.pool.autosize) {
    const unsigned n = platform::logical_cpus();
    pool["auto"] = {{"min", {{"spec", a->min.text}, {"value", a->min.resolve(n)}}},
                    {"max", {{"spec", a->max.text}, {"value", a->max.resolve(n)}}},
                    {"grow_below_cpu_pct", a->grow_below_cpu_pct},
                    {"shrink_above_cpu_pct", a->shrink_above_cpu_pct},
                    {"idle_timeout_ms", a->idle_timeout_ms}};
  }
  if (const auto& c = spec.pool.controlled) {
    const unsigned n = platform::logical_cpus();
    pool["controller"] = {{"name", core::to_string(c->kind)},
                          {"min", {{"spec", c->min.text}, {"value", c->min.resolve(n)}}},
                          {"max", {{"spec", c->max.text}, {"value", c->max.resolve(n)}}}};
  }
  return pool;
}


// A histogram's non-empty buckets as [bucket, count] pairs, in bucket order (metrics/histogram.hpp).
nlohmann::json histogram_pairs(const metrics::Histogram& h) {
  nlohmann::json out = nlohmann::json::array();
  h.for_each_bucket([&out](std::size_t bucket, std::uint64_t count) { out.push_back({bucket, count}); });
  return out;
}

// runs[].open_loop.histograms: mergeable across runs (a point's pooled percentiles).
nlohmann::json open_loop_histograms_json(const engine::OpenLoopRecord& o) {
  return {{"scheme", "log-linear"},
          {"unit", "ns"},
          {"sub_bucket_bits", metrics::Histogram::kSubBits},
          {"response", histogram_pairs(o.response_hist)},
          {"unfinished", histogram_pairs(o.unfinished_hist)},
          {"service", histogram_pairs(o.service_hist)},
          {"lag", histogram_pairs(o.lag_hist)}};
}

// The response time over every due request, and which of its figures are lower bounds.
nlohmann::json response_time_json(const metrics::Percentiles& p, const engine::LowerBounds& b) {
  nlohmann::json out = percentiles_json(p);
  nlohmann::json lower = nlohmann::json::array();
  for (const auto& [name, flag] : {std::pair{"p50", b.p50}, {"p90", b.p90}, {"p99", b.p99},
                                   {"p999", b.p999}, {"max", b.max}, {"mean", b.mean}}) {
    if (flag) lower.push_back(name);
  }
  out["lower_bound"] = std::move(lower);
  return out;
}

nlohmann::json self_check_json(const engine::SelfCheck& c) {
  return {{"judged", c.judged},
          {"passed", c.passed},
          {"statistic", c.judged ? nlohmann::json(c.statistic) : nlohmann::json()},
          {"failed_because", or_null(c.failed_because)}};
}

nlohmann::json stalls_json(const engine::StallSummary& s) {
  nlohmann::json first = nlohmann::json::array();
  for (const engine::Stall& stall : s.first) {
    first.push_back({{"at_s", static_cast<double>(stall.start_ns) / 1e9},
                     {"ms", static_cast<double>(stall.length_ns) / 1e6}});
  }
  return {{"count", s.count},
          {"total_ms", static_cast<double>(s.total_ns) / 1e6},
          {"longest_ms", static_cast<double>(s.longest_ns) / 1e6},
          {"threshold_ms", static_cast<double>(engine::StallLog::kStallNs) / 1e6},
          {"first", std::move(first)}};
}

// runs[].open_loop (engine/run_result.hpp OpenLoopRecord).
nlohmann::json open_loop_json(const engine::OpenLoopRecord& o, const metrics::Percentiles& response) {
  const engine::BacklogVerdict& b = o.backlog;
  return {{"offered_ops_per_s", o.offered_ops_per_s},
          {"load", or_null(o.load)},
          {"capacity_ops_per_s", or_null(o.capacity_ops_per_s)},
          {"capacity_run_s", o.capacity_ops_per_s && o.capacity_measured_here ? nlohmann::json(o.capacity_run_s)
                                                                                 : nlohmann::json()},
          {"capacity_source", !o.capacity_ops_per_s      ? nlohmann::json()
                              : o.capacity_measured_here ? nlohmann::json("this run")
                                                         : nlohmann::json("an earlier run of the point")},
          {"arrivals", core::to_string(o.arrivals)},
          {"seed", o.seed},
          {"in_flight_bound", o.in_flight_bound},
          {"arrivals_in_window", o.arrivals_in_window},
          {"arrival_rate_ops_per_s", o.arrival_rate_ops_per_s},
          {"issued", o.issued},
          {"held", o.held},
          {"unissued", o.unissued},
          {"issue_failures", o.issue_failures},
          {"max_backlog", o.max_backlog},
          {"generator_lag_us", percentiles_json(o.generator_lag)},
          {"service_time_us", percentiles_json(o.service_time)},
          {"issue_call_us", percentiles_json(o.issue_call)},
          {"accounting", {{"due", o.due},
                          {"timed", o.timed},
                          {"unfinished", o.unfinished},
                          {"failed", o.failed},
                          {"drain_s", o.drain_s},
                          {"drain_bound_s", engine::kDrainBoundS},
                          {"catch_up_bound_s", o.catch_up_bound_s}}},
          {"response_time_us", response_time_json(response, o.response_lower_bound)},
          {"stalls", stalls_json(o.stalls)},
          {"pacer_priority", o.pacer_priority},
          {"meter_priority", o.meter_priority},
          {"realtime_refused_because", or_null(o.realtime_refused_because)},
          {"backlog_least_by_quarter",
           b.judged ? nlohmann::json(std::vector<std::uint64_t>(b.least_by_quarter, b.least_by_quarter + 4))
                    : nlohmann::json()},
          {"self_checks", {{"arrivals", self_check_json(o.arrival_check)},
                           {"stationarity", self_check_json(o.stationarity)}}},
          {"histograms", open_loop_histograms_json(o)},
          {"over_capacity", o.over_capacity()},
          {"over_capacity_because", or_null(o.over_capacity_because)},
          {"generator_bound", o.generator_bound()},
          {"generator_bound_because", or_null(o.generator_bound_because)}};
}

// The point's open-loop settings (points[].open_loop): what was asked, not what was achieved.
nlohmann::json open_loop_spec_json(const engine::OpenLoopSpec& o) {
  return {{"rate_ops_per_s", o.rate_ops_per_s > 0 ? nlohmann::json(o.rate_ops_per_s) : nlohmann::json()},
          {"load", o.load > 0 ? nlohmann::json(o.load) : nlohmann::json()},
          {"arrivals", core::to_string(o.arrivals)},
          {"seed", o.seed},
          {"max_in_flight", o.in_flight_bound > 0 ? nlohmann::json(o.in_flight_bound) : nlohmann::json()}};
}

}  // namespace

RunRecord run_record(const RunResult& r) {
  const RoleBlocks roles = role_blocks(r);
  const std::uint64_t kops_base = r.ops == 0 ? 1 : r.ops;
  unsigned threads_ran = 0;
  for (double share : r.thread_shares) threads_ran += share > 0 ? 1 : 0;
  nlohmann::json run = {
      {key::kRepetition, r.repetition},
      {"seconds", r.seconds},
      {"ops", r.ops},
      {"bytes", r.bytes},
      {"throughput_ops_per_s", r.throughput_ops_per_s},
      {"bytes_per_s", r.bytes_per_s},
      {"context_switches_per_kop", r.context_switches_per_kop},
      {"voluntary_switches_per_kop",
       static_cast<double>(r.process.voluntary) * 1000.0 / static_cast<double>(kops_base)},
      {"context_switches", roles.switches},
      {"latency_us", percentiles_json(r.latency)},
      {"latency_source", r.latency_source},
      {"queue_delay_us", percentiles_json(r.queue_delay)},
      {"cpu", roles.cpu},
      {"threads_by_role", roles.threads},
      {"port_counters", port_counters_json(r)},
      {"thread_shares", r.thread_shares},
      {"threads_that_ran", threads_ran},
      {"achieved_blocking_ratio", r.achieved_blocking_ratio},
      {"blocked_only_ratio", or_null(r.blocked_only_ratio)},
      {key::kHandlerTime, handler_time_json(r.blocking)},
      {"achieved_outstanding", r.achieved_outstanding},
      {"blocking_reads", r.block_reads},
      {"work_calibration", work_calibration_json(r.work_calibration)},
      {"errors", r.errors},
      {"error_detail", error_detail_json(r.error_detail)},
      {"workload_stats", r.workload_stats},
      {"accounting", accounting_json(r)},
      {"unsampled_threads", r.unsampled_threads},
      {"interrupted", r.interrupted},
      {"machine_load", machine_load_json(r.machine_load)},
  };
  if (r.pool_sizing) run["pool_sizing"] = pool_sizing_json(*r.pool_sizing);
  if (r.timeline) run["timeline"] = timeline_json(*r.timeline);
  run["dequeue_batch"] = dequeue_batch_json(r.dequeue_batch);
  if (r.open_loop) run["open_loop"] = open_loop_json(*r.open_loop, r.latency);
  run["port_lists"] = r.port_lists ? port_lists_json(*r.port_lists) : nlohmann::json(nullptr);
  if (!r.port_lists) run["port_lists_unavailable_because"] = r.port_lists_unavailable_because;
  mark_unavailable_switches(run);  // null, never 0, where the OS cannot count (Wine)
  return RunRecord{std::move(run)};
}

PointResult point_result(const PointSpec& spec, const std::vector<RunResult>& runs) {
  PointResult point;
  point.spec = {{"workload", to_string(spec.workload)},
                {"workload_params", workloads::to_json(spec.workload_params)},
                {"port", std::string(port::to_string(spec.port))},
                {"dispatch", to_string(spec.dispatch)},
                {"metrics", spec.metrics},
                {"concurrency", {{"spec", spec.concurrency.text}, {"value", spec.concurrency_value}}},
                {"pool", pool_json(spec)},
                {"blocking", {{"ratio", spec.blocking_ratio}, {"kind", to_string(spec.blocking_kind)}}},
                {"work_us", spec.work_us},
                {"duration_s", spec.duration_s},
                {"warmup_s", spec.warmup_s}};
  point.spec["dequeue_batch"] = {{"spec", spec.dequeue_batch.text}, {"value", spec.dequeue_batch_value}};
  // File and socket points: what was requested and what the workload then asked of the OS (what
  // each run was granted is its workload_stats.skip_on_success).
  if (spec.workload != WorkloadKind::post) {
    point.spec["skip_on_success"] = {
        {"requested", to_string(spec.skip_on_success)},
        {"asked", skip_on_success_asked(spec.skip_on_success, spec.workload) &&
                      io::skip_on_success_supported()}};
  }
  // The CPUs the last run's threads were pinned to (a sweep's point gets them after its first run).
  point.spec["affinity"] = affinity_json(spec, runs.empty() ? nullptr : &runs.back().affinity);
  // Only when given: results without a profile read as before. blocking.ratio is then the
  // profile's time-weighted mean over the window (what the run is judged against).
  if (spec.blocking_profile) point.spec["blocking_profile"] = blocking_profile_json(*spec.blocking_profile);
  // Only when given: results without a working set read as before.
  if (spec.working_set_kib > 0) point.spec["working_set_kib"] = spec.working_set_kib;
  // Only for open-loop points: closed-loop results read as before.
  if (spec.open_loop.enabled()) point.spec["open_loop"] = open_loop_spec_json(spec.open_loop);
  if (const auto peers = peer_commands(spec, spec.workload_params)) point.peer_commands = to_json(*peers);
  for (const auto& r : runs) point.runs.push_back(run_record(r));
  summarize(point);
  return point;
}

}  // namespace iocpbench::results
