#pragma once
// Where a set of threads runs: none (the OS decides), compact, spread, or a list of CPUs, as
// DiskSpd's -a/-n, fio's cpus_allowed and NTttcp's -m offer. Thread i of a placement goes to
// the i-th CPU of its cycle (wrapping around), one CPU per thread.
//
//   compact: a core's SMT siblings first, then the next core of the socket, then the next socket.
//   spread:  one thread of every core, the sockets taking turns, before any core's second one.
//   LIST:    "0,2-3": those CPUs, ascending.
//
// The orders come from the machine's topology (platform/cpu_topology.hpp), over the CPUs that
// are online and allowed to this process; without a topology compact and spread are CPU-number
// order, and the placement says why. Nothing here pins a thread except check_pinnable().

#include <optional>
#include <string>
#include <string_view>

#include "platform/cpu_topology.hpp"

namespace iocpbench::platform {

enum class PlacementKind { none, compact, spread, list };

struct PlacementSpec {
  PlacementKind kind = PlacementKind::none;
  std::string text = "none";  // as the user wrote it
  CpuSet list;                // kind list: its CPUs, ascending, each once
  bool pins() const { return kind != PlacementKind::none; }
};

// none | compact | spread | a CPU list; nullopt with the reason in `why` otherwise.
std::optional<PlacementSpec> parse_placement(std::string_view text, std::string& why);

// The orders over a topology's CPUs; nullopt when the facts have no cores. Without sockets the
// machine counts as one socket.
std::optional<CpuSet> compact_order(const TopologyFacts& facts);
std::optional<CpuSet> spread_order(const TopologyFacts& facts);

// What a placement needs to know about a machine.
struct MachineCpus {
  CpuSet online;                  // the CPUs that exist, ascending
  std::optional<CpuSet> allowed;  // those this process may use; nullopt: not told (all online)
  TopologyFacts topology;
};

// This machine's, read on the first call (before any thread is pinned) and kept.
const MachineCpus& this_machine_cpus();

struct Placement {
  PlacementSpec spec;
  CpuSet cycle;        // thread i -> cycle[i % size]; empty for none
  std::string order;   // "topology", "cpu number (topology unavailable: WHY)", "list"; "" for none
  unsigned cpu_for(unsigned thread) const { return cycle[thread % cycle.size()]; }
};

// The placement of `spec` on `machine`; nullopt with the reason in `why` when a CPU of a list
// does not exist or is not allowed to this process, or no CPU is left to place on.
std::optional<Placement> place(const PlacementSpec& spec, const MachineCpus& machine,
                               std::string& why);

// Pins a scratch thread to each CPU in turn: "" when the OS took every one, else
// "CPU N: the OS's reason" for the first it refused.
std::string check_pinnable(const CpuSet& cpus);

}  // namespace iocpbench::platform
