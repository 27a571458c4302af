#include <array>

#include "port/asio_port.hpp"
#include "port/completion_port.hpp"
#include "port/condvar_port.hpp"
#include "port/emulated_port.hpp"
#include "port/native_port.hpp"

namespace iocpbench::port {

const char* to_string(RemoveStatus status) {
  switch (status) {
    case RemoveStatus::ok: return "ok";
    case RemoveStatus::io_failed: return "io_failed";
    case RemoveStatus::timeout: return "timeout";
    case RemoveStatus::abandoned: return "abandoned";
    case RemoveStatus::invalid_handle: return "invalid_handle";
    case RemoveStatus::invalid_parameter: return "invalid_parameter";
  }
  return "unknown";
}

namespace {
constexpr std::array<std::pair<Backend, std::string_view>, 7> kNames{{
    {Backend::emulated, "emulated"},
    {Backend::win32, "win32"},
    {Backend::condvar, "condvar"},
    {Backend::asio, "asio"},
    {Backend::emulated_fifo_wakeup, "emulated-fifo-wakeup"},
    {Backend::emulated_no_cap, "emulated-no-cap"},
    {Backend::emulated_no_block_release, "emulated-no-block-release"},
}};

constexpr PortRules kFifoWakeup{.lifo_wakeup = false};
constexpr PortRules kNoCap{.concurrency_cap = false};
constexpr PortRules kNoBlockRelease{.release_on_block = false};

constexpr std::array<Mutant, 11> kMutants{{
    {"fifo_wakeup", "the oldest waiter gets a packet, not the newest", kFifoWakeup},
    {"no_cap", "no C < M gate: every waiter may run", kNoCap},
    {"no_block_release", "a thread that blocks stays counted: no waiter is released",
     kNoBlockRelease},
    {"release_all_on_block", "a block hands a queued packet to every waiter, over M",
     {.block_releases_within_cap = false}},
    {"block_skips_activate", "a block counts down but hands nothing out (breaks the invariant)",
     {.block_activates = false}},
    {"timeout_not_counted", "a thread that timed out is not counted",
     {.timeout_counts = false}},
    {"resume_waits_for_slot", "resume waits for a free slot: no over-limit window",
     {.resume_over_limit = false}},
    {"batch_slot_per_entry", "a batch takes one slot per entry", {.batch_one_slot = false}},
    {"close_does_not_wake", "close leaves its waiters to their timeouts",
     {.close_wakes_waiters = false}},
    {"d1_leave_before_closed_check",
     "D1 unfixed: a GQCS on a closed port leaves the caller's old port first",
     {.closed_check_first = false}},
    {"d2_batch_of_one_fails", "D2 unfixed: a batch of one reports a failed packet as io_failed",
     {.batch_entry_status = false}},
}};

// The emulated port's rules for an emulated backend; nullopt for every other backend.
std::optional<PortRules> emulated_rules(Backend backend) {
  switch (backend) {
    case Backend::emulated: return PortRules{};
    case Backend::emulated_fifo_wakeup: return kFifoWakeup;
    case Backend::emulated_no_cap: return kNoCap;
    case Backend::emulated_no_block_release: return kNoBlockRelease;
    default: return std::nullopt;
  }
}
}  // namespace

std::span<const Mutant> mutants() { return kMutants; }

std::optional<PortRules> mutant_rules(std::string_view name) {
  for (const Mutant& mutant : kMutants) {
    if (mutant.name == name) return mutant.rules;
  }
  return std::nullopt;
}

std::string backend_names() {
  std::string text;
  for (const auto& [backend, name] : kNames) {
    if (!text.empty()) text += ", ";
    text += name;
  }
  return text;
}

std::optional<Backend> parse_backend(std::string_view name) {
  for (const auto& [backend, text] : kNames) {
    if (text == name) return backend;
  }
  return std::nullopt;
}

std::string_view to_string(Backend backend) {
  for (const auto& [candidate, text] : kNames) {
    if (candidate == backend) return text;
  }
  return "unknown";
}

Backend default_backend() { return native_port_available() ? Backend::win32 : Backend::emulated; }

bool backend_available(Backend backend) {
  switch (backend) {
    case Backend::emulated: return true;
    case Backend::win32: return native_port_available();
    case Backend::condvar:
    case Backend::asio: return true;  // comparison dispatchers, built on every OS
    case Backend::emulated_fifo_wakeup:
    case Backend::emulated_no_cap:
    case Backend::emulated_no_block_release: return true;
  }
  return false;
}

std::unique_ptr<CompletionPort> make_port(Backend backend, const PortOptions& options) {
  if (const auto rules = emulated_rules(backend); rules && backend != Backend::emulated) {
    PortOptions ablation = options;  // an ablation product: its one rule off, the rest as given
    ablation.rules = *rules;
    return std::make_unique<EmulatedPort>(ablation, to_string(backend));
  }
  switch (backend) {
    case Backend::emulated: return std::make_unique<EmulatedPort>(options, "emulated");
    case Backend::win32: return make_native_port(options);
    case Backend::condvar: return std::make_unique<CondvarPort>(options);
    case Backend::asio: return std::make_unique<AsioPort>(options);
    default: break;
  }
  return nullptr;
}

}  // namespace iocpbench::port
