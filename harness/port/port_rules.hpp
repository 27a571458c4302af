#pragma once
// The rules of the NT kernel queue that the emulated port reproduces, one switch each. All on
// (the default) is the faithful port. Turning one off gives a *mutant*: the conformance suite
// must fail on every one of them (tests/port/mutants.cmake), and three are also products,
// `--port emulated-fifo-wakeup`, `emulated-no-cap` and `emulated-no-block-release`, so a user
// can measure what each property is worth.
//
// Why a struct read once at construction and not a template policy: the core copies the rules
// into const members; the cap becomes the gate value it already compares against (M, or
// "no limit"), so the faithful hot path does the same compare as before, and the other rules
// are branches on a const member next to the lock, taken the same way on every packet
// (predicted). A template would double the core's code and make the thread association
// polymorphic for the sake of a few branches (docs/port-semantics.md, "Cost of the rules":
// post executes the same instructions as before, remove 11 more of about 160).

#include <optional>
#include <span>
#include <string_view>

namespace iocpbench::port {

struct PortRules {
  bool lifo_wakeup = true;           // off: the oldest waiter gets the packet (FIFO wake-up)
  bool concurrency_cap = true;       // off: no C < M gate anywhere
  bool release_on_block = true;      // off: a thread that blocks stays counted
  bool block_releases_within_cap = true;  // off: a block hands a queued packet to every waiter
  bool block_activates = true;       // off: a block counts down but hands nothing out
  bool timeout_counts = true;        // off: a thread that timed out is not counted
  bool resume_over_limit = true;     // off: resume waits for a free slot (no over-limit window)
  bool batch_one_slot = true;        // off: a batch takes one slot per entry
  bool close_wakes_waiters = true;   // off: close leaves its waiters to their timeouts
  // The two deviations once found and fixed (docs/port-semantics.md), kept as mutants so that T23 and T24 are shown to fail
  // on them: off, the port behaves as it did before the fix.
  bool closed_check_first = true;    // off (D1): leave the old port before checking for close
  bool batch_entry_status = true;    // off (D2): a batch of one fails for a failed packet

  bool operator==(const PortRules&) const = default;
};

// A mutant: its name (as --mutant and in docs/port-semantics.md), what it changes, its rules.
struct Mutant {
  std::string_view name;
  std::string_view change;
  PortRules rules;
};

// Every mutant, in the order of docs/port-semantics.md's table.
std::span<const Mutant> mutants();
std::optional<PortRules> mutant_rules(std::string_view name);

}  // namespace iocpbench::port
