// The OS-neutral half of placement: the spec, the compact and spread orders over the topology,
// a placement checked against the machine, and the trial pin (platform/thread_affinity.hpp does
// the OS's part).

#include "platform/cpu_placement.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <thread>

#include "platform/thread_affinity.hpp"

namespace iocpbench::platform {
namespace {

using Cores = std::vector<CpuSet>;  // one socket's cores, each its SMT siblings ascending

// Each socket's cores, sockets and cores ordered by their lowest CPU. A core whose socket is
// not known (the facts list no sockets) goes with the others into one socket.
std::vector<Cores> cores_by_socket(const TopologyFacts& facts) {
  std::map<unsigned, unsigned> socket_of;  // CPU -> the lowest CPU of its socket
  for (const CpuSet& package : facts.packages) {
    if (package.empty()) continue;
    const unsigned first = *std::min_element(package.begin(), package.end());
    for (unsigned cpu : package) socket_of[cpu] = first;
  }
  std::map<unsigned, std::map<unsigned, CpuSet>> sockets;  // socket -> lowest CPU -> core
  for (CpuSet core : facts.cores) {
    if (core.empty()) continue;
    std::sort(core.begin(), core.end());
    const auto socket = socket_of.find(core.front());
    sockets[socket == socket_of.end() ? 0 : socket->second][core.front()] = core;
  }
  std::vector<Cores> out;
  for (auto& [socket, cores] : sockets) {
    out.emplace_back();
    for (auto& [first, core] : cores) out.back().push_back(std::move(core));
  }
  return out;
}

void append_once(unsigned cpu, CpuSet& order, std::set<unsigned>& seen) {
  if (seen.insert(cpu).second) order.push_back(cpu);
}

// The CPUs this process may place threads on: online, and allowed when the OS says which.
CpuSet usable_cpus(const MachineCpus& machine) {
  if (!machine.allowed) return machine.online;
  CpuSet usable;
  std::set_intersection(machine.online.begin(), machine.online.end(), machine.allowed->begin(),
                        machine.allowed->end(), std::back_inserter(usable));
  return usable;
}

bool contains(const CpuSet& cpus, unsigned cpu) {
  return std::binary_search(cpus.begin(), cpus.end(), cpu);
}

// A list's CPUs must exist and be allowed: "" when they are, else the reason for the first.
std::string check_list(const CpuSet& list, const MachineCpus& machine) {
  for (unsigned cpu : list) {
    if (!contains(machine.online, cpu)) {
      return "CPU " + std::to_string(cpu) + " does not exist (this machine has CPUs " +
             format_cpu_list(machine.online) + ")";
    }
    if (machine.allowed && !contains(*machine.allowed, cpu)) {
      return "CPU " + std::to_string(cpu) +
             " is not allowed to this process (its affinity mask or cgroup allows CPUs " +
             format_cpu_list(*machine.allowed) + ")";
    }
  }
  return {};
}

// compact's or spread's order over `usable`: the topology's order without the CPUs this process
// may not use, then any usable CPU the topology left out; CPU-number order without a topology.
CpuSet order_over(const std::optional<CpuSet>& topology_order, const CpuSet& usable) {
  if (!topology_order) return usable;
  CpuSet cycle;
  std::set<unsigned> seen;
  for (unsigned cpu : *topology_order) {
    if (contains(usable, cpu)) append_once(cpu, cycle, seen);
  }
  for (unsigned cpu : usable) append_once(cpu, cycle, seen);
  return cycle;
}

std::string topology_missing(const TopologyFacts& facts) {
  const auto reason = facts.unavailable.find("physical_cores");
  return reason != facts.unavailable.end() ? reason->second : "the OS listed no cores";
}

}  // namespace

std::optional<PlacementSpec> parse_placement(std::string_view text, std::string& why) {
  PlacementSpec spec;
  spec.text = std::string(text);
  if (text == "none") return spec;
  if (text == "compact" || text == "spread") {
    spec.kind = text == "compact" ? PlacementKind::compact : PlacementKind::spread;
    return spec;
  }
  // Digits, commas and dashes only (parse_cpu_list itself forgives the trailing blanks sysfs writes).
  const bool list_chars = !text.empty() && text.find_first_not_of("0123456789,-") == std::string_view::npos;
  const auto cpus = list_chars ? parse_cpu_list(text) : std::nullopt;
  if (!cpus || cpus->empty()) {
    why = "'" + spec.text + "' is not none, compact, spread or a CPU list such as 0,2-3";
    return std::nullopt;
  }
  spec.kind = PlacementKind::list;
  spec.list = *cpus;
  return spec;
}

std::optional<CpuSet> compact_order(const TopologyFacts& facts) {
  if (facts.cores.empty()) return std::nullopt;
  CpuSet order;
  std::set<unsigned> seen;
  for (const Cores& socket : cores_by_socket(facts)) {
    for (const CpuSet& core : socket) {
      for (unsigned cpu : core) append_once(cpu, order, seen);
    }
  }
  return order;
}

std::optional<CpuSet> spread_order(const TopologyFacts& facts) {
  if (facts.cores.empty()) return std::nullopt;
  const std::vector<Cores> sockets = cores_by_socket(facts);
  std::size_t most_cores = 0, most_siblings = 0;
  for (const Cores& socket : sockets) {
    most_cores = std::max(most_cores, socket.size());
    for (const CpuSet& core : socket) most_siblings = std::max(most_siblings, core.size());
  }
  CpuSet order;
  std::set<unsigned> seen;
  // Sibling by sibling; within one, core by core with the sockets taking turns.
  for (std::size_t sibling = 0; sibling < most_siblings; ++sibling) {
    for (std::size_t core = 0; core < most_cores; ++core) {
      for (const Cores& socket : sockets) {
        if (core < socket.size() && sibling < socket[core].size()) {
          append_once(socket[core][sibling], order, seen);
        }
      }
    }
  }
  return order;
}

const MachineCpus& this_machine_cpus() {
  static const MachineCpus machine = [] {
    MachineCpus m;
    m.online = online_cpus();
    std::string why;  // not told: every online CPU counts as allowed
    m.allowed = allowed_cpus(why);
    m.topology = gather_topology_facts();
    return m;
  }();
  return machine;
}

std::optional<Placement> place(const PlacementSpec& spec, const MachineCpus& machine,
                               std::string& why) {
  Placement placement;
  placement.spec = spec;
  if (!spec.pins()) return placement;
  if (spec.kind == PlacementKind::list) {
    why = check_list(spec.list, machine);
    if (!why.empty()) return std::nullopt;
    placement.cycle = spec.list;
    placement.order = "list";
    return placement;
  }
  const auto topology_order = spec.kind == PlacementKind::compact ? compact_order(machine.topology)
                                                                  : spread_order(machine.topology);
  placement.cycle = order_over(topology_order, usable_cpus(machine));
  placement.order = topology_order ? "topology"
                                   : "cpu number (topology unavailable: " +
                                         topology_missing(machine.topology) + ")";
  if (placement.cycle.empty()) {
    why = "no CPU is both online and allowed to this process";
    return std::nullopt;
  }
  return placement;
}

std::string check_pinnable(const CpuSet& cpus) {
  std::string problem;
  // A scratch thread, so that the caller's own mask is never touched.
  std::thread trial([&] {
    for (unsigned cpu : std::set<unsigned>(cpus.begin(), cpus.end())) {
      const std::string refused = pin_current_thread(cpu);
      if (!refused.empty()) {
        problem = "CPU " + std::to_string(cpu) + ": " + refused;
        return;
      }
    }
  });
  trial.join();
  return problem;
}

}  // namespace iocpbench::platform
