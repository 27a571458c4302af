#pragma once
// The measured blocks of a run (engine/run_result.hpp) as schema v1 spells them inside
// points[].runs[]: each typed record in, its JSON out. run_record.cpp assembles a run from
// these; `iocpbench run`'s line and the tuner's exclusion rule read the same spelling.

#include <nlohmann/json.hpp>

#include "core/blocking_profile.hpp"
#include "engine/run_result.hpp"
#include "engine/switch_attribution.hpp"
#include "metrics/histogram.hpp"

namespace iocpbench::results {

// p50, p90, p99, p999, max, mean (microseconds) and count.
nlohmann::json percentiles_json(const metrics::Percentiles& p);
// runs[].handler_time: the handler's parts as means per blocking handler, the method, a
// blocking profile's levels (profile_levels: each ratio's handlers, achieved and blocked-only
// ratios), and whether the request was honoured (null hint and reason when it was).
nlohmann::json handler_time_json(const engine::BlockingRecord& record);
// runs[].work_calibration.
nlohmann::json work_calibration_json(const engine::WorkCalibrationRecord& record);
// runs[].pool_sizing: the settings, the window's summary, grows and shrinks over the whole run,
// and the timeline as [ms from the window's start (negative: warm-up), threads] pairs.
nlohmann::json pool_sizing_json(const engine::PoolSizingRecord& record);
// runs[].timeline: {window_ms, windows: [{t_ms, ops_per_s, mean_threads, blocking_ratio}]}.
nlohmann::json timeline_json(const engine::TimelineRecord& record);
// points[].blocking_profile: {text, segments: [{ratio, seconds (null: holds)}], repeats}.
nlohmann::json blocking_profile_json(const core::BlockingProfile& profile);
// runs[].port_lists: means, the share of the window at each level (0..15, the last "16 or
// more"), the time a packet queued with room and a waiter, the handoffs' wake-up delays, and
// the first transitions as {t_us, waiting, active, paused, depth} columns.
nlohmann::json port_lists_json(const engine::PortListsRecord& record);
// runs[].error_detail.
nlohmann::json error_detail_json(const engine::ErrorDetail& detail);
// runs[].context_switches.attribution: {iocp_model, emulation, outside_port (each with its
// total), emulation_share (null when nothing was counted), method}.
nlohmann::json attribution_json(const engine::SwitchAttribution& a);
// A run's JSON where the OS cannot count context switches (Wine): every switch count and ratio
// becomes null and `context_switches.unavailable` says why, so no reader takes 0 for a
// measurement. Leaves the JSON alone where they are available.
void mark_unavailable_switches(nlohmann::json& run);

}  // namespace iocpbench::results
