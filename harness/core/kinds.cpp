#include "core/kinds.hpp"

namespace iocpbench {

const char* to_string(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::post:
      return "post";
    case WorkloadKind::file:
      return "file";
    case WorkloadKind::socket:
      return "socket";
  }
  return "post";
}

const char* to_string(Dispatch dispatch) {
  return dispatch == Dispatch::per_thread ? "per-thread" : "shared";
}

const char* to_string(BlockingKind kind) { return kind == BlockingKind::io ? "io" : "sleep"; }

const char* to_string(SkipOnSuccess mode) {
  switch (mode) {
    case SkipOnSuccess::on:
      return "on";
    case SkipOnSuccess::off:
      return "off";
    case SkipOnSuccess::by_default:
      break;
  }
  return "default";
}

std::optional<WorkloadKind> parse_workload_kind(std::string_view text) {
  for (const auto kind : {WorkloadKind::post, WorkloadKind::file, WorkloadKind::socket}) {
    if (text == to_string(kind)) return kind;
  }
  return std::nullopt;
}

std::optional<Dispatch> parse_dispatch(std::string_view text) {
  for (const auto dispatch : {Dispatch::shared, Dispatch::per_thread}) {
    if (text == to_string(dispatch)) return dispatch;
  }
  return std::nullopt;
}

std::optional<BlockingKind> parse_blocking_kind(std::string_view text) {
  for (const auto kind : {BlockingKind::sleep, BlockingKind::io}) {
    if (text == to_string(kind)) return kind;
  }
  return std::nullopt;
}

std::optional<SkipOnSuccess> parse_skip_on_success(std::string_view text) {
  for (const auto mode : {SkipOnSuccess::by_default, SkipOnSuccess::on, SkipOnSuccess::off}) {
    if (text == to_string(mode)) return mode;
  }
  return std::nullopt;
}

bool skip_on_success_asked(SkipOnSuccess mode, WorkloadKind workload) {
  if (mode == SkipOnSuccess::by_default) return workload == WorkloadKind::socket;
  return mode == SkipOnSuccess::on;
}

}  // namespace iocpbench
