// The OS-neutral half of the topology: facts to counts, the JSON, the CPU list format.

#include "platform/cpu_topology.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <tuple>

namespace iocpbench::platform {
namespace {

using Json = nlohmann::json;

template <typename T>
Json or_null(const std::optional<T>& value) {
  return value ? Json(*value) : Json();
}

std::optional<unsigned> count_of(std::size_t n) {
  return n == 0 ? std::nullopt : std::optional<unsigned>(static_cast<unsigned>(n));
}

// Every CPU of the cores (else of the packages): those the OS has online.
std::optional<unsigned> logical_cpus_of(const TopologyFacts& facts) {
  std::set<unsigned> cpus;
  for (const auto* sets : {&facts.cores, &facts.packages}) {
    for (const CpuSet& set : *sets) cpus.insert(set.begin(), set.end());
    if (!cpus.empty()) break;
  }
  return count_of(cpus.size());
}

// The threads of a core when every core has as many; else empty, with the range as the reason
// (a hybrid CPU's cores differ, as do cores with SMT turned off for some).
std::optional<unsigned> threads_per_core(const std::vector<CpuSet>& cores, std::string& reason) {
  if (cores.empty()) return std::nullopt;
  const auto [fewest, most] =
      std::minmax_element(cores.begin(), cores.end(),
                          [](const CpuSet& a, const CpuSet& b) { return a.size() < b.size(); });
  if (fewest->size() == most->size()) return static_cast<unsigned>(most->size());
  reason = "the cores differ: " + std::to_string(fewest->size()) + " to " +
           std::to_string(most->size()) + " threads per core";
  return std::nullopt;
}

std::vector<CacheGroup> group_caches(const std::vector<CacheFact>& caches) {
  std::map<std::tuple<unsigned, std::string, std::uint64_t, unsigned>, unsigned> counts;
  for (const CacheFact& c : caches) {
    ++counts[{c.level, c.type, c.size_kib, static_cast<unsigned>(c.cpus.size())}];
  }
  std::vector<CacheGroup> groups;
  for (const auto& [key, count] : counts) {
    const auto& [level, type, size_kib, shared_by] = key;
    groups.push_back({level, type, size_kib, shared_by, count});
  }
  return groups;
}

void add_numa(const TopologyFacts& facts, CpuTopology& t) {
  if (facts.numa_nodes.empty()) return;
  t.numa_nodes = static_cast<unsigned>(facts.numa_nodes.size());
  t.numa_node_cpus.emplace();
  for (const auto& [node, cpus] : facts.numa_nodes) {
    (*t.numa_node_cpus)[node] = format_cpu_list(cpus);
  }
}

// A field derived from another that is missing gives that one's reason.
void same_reason(CpuTopology& t, const char* field, const char* from) {
  const auto reason = t.unavailable.find(from);
  if (reason != t.unavailable.end() && !t.unavailable.count(field)) {
    t.unavailable[field] = reason->second;
  }
}

// A null field keeps the reader's reason; one it gave none for (it found nothing) gets this.
void name_missing(CpuTopology& t) {
  const std::pair<const char*, bool> fields[] = {
      {"sockets", t.sockets.has_value()},
      {"physical_cores", t.physical_cores.has_value()},
      {"logical_cpus", t.logical_cpus.has_value()},
      {"threads_per_core", t.threads_per_core.has_value()},
      {"numa_nodes", t.numa_nodes.has_value()},
      {"numa_node_cpus", t.numa_node_cpus.has_value()},
      {"caches", t.caches.has_value()},
      {"cpu_model", t.cpu_model.has_value()},
      {"base_mhz", t.base_mhz.has_value()},
      {"max_mhz", t.max_mhz.has_value()},
      {"current_mhz", t.current_mhz.has_value()}};
  for (const auto& [name, present] : fields) {
    if (present) {
      t.unavailable.erase(name);
    } else if (!t.unavailable.count(name)) {
      t.unavailable[name] = "the OS reported none";
    }
  }
}

}  // namespace

CpuTopology summarize(const TopologyFacts& facts) {
  CpuTopology t;
  t.unavailable = facts.unavailable;
  t.sockets = count_of(facts.packages.size());
  t.physical_cores = count_of(facts.cores.size());
  t.logical_cpus = logical_cpus_of(facts);
  std::string mixed;
  t.threads_per_core = threads_per_core(facts.cores, mixed);
  if (!mixed.empty()) t.unavailable["threads_per_core"] = mixed;
  same_reason(t, "threads_per_core", "physical_cores");
  same_reason(t, "logical_cpus", "physical_cores");
  same_reason(t, "numa_node_cpus", "numa_nodes");
  add_numa(facts, t);
  if (!facts.caches.empty()) t.caches = group_caches(facts.caches);
  t.cpu_model = facts.cpu_model;
  t.base_mhz = facts.base_mhz;
  t.max_mhz = facts.max_mhz;
  t.current_mhz = facts.current_mhz;
  name_missing(t);
  return t;
}

Json to_json(const CpuTopology& t) {
  Json caches;  // null unless known
  if (t.caches) {
    caches = Json::array();
    for (const CacheGroup& c : *t.caches) {
      caches.push_back({{"level", c.level},
                        {"type", c.type},
                        {"size_kib", c.size_kib},
                        {"shared_by_cpus", c.shared_by_cpus},
                        {"count", c.count}});
    }
  }
  Json nodes;
  if (t.numa_node_cpus) {
    nodes = Json::object();
    for (const auto& [node, cpus] : *t.numa_node_cpus) nodes[std::to_string(node)] = cpus;
  }
  return {{"sockets", or_null(t.sockets)},
          {"physical_cores", or_null(t.physical_cores)},
          {"logical_cpus", or_null(t.logical_cpus)},
          {"threads_per_core", or_null(t.threads_per_core)},
          {"numa_nodes", or_null(t.numa_nodes)},
          {"numa_node_cpus", nodes},
          {"caches", caches},
          {"cpu_model", or_null(t.cpu_model)},
          {"base_mhz", or_null(t.base_mhz)},
          {"max_mhz", or_null(t.max_mhz)},
          {"current_mhz", or_null(t.current_mhz)},
          {"unavailable", t.unavailable}};
}

// Far above any machine's CPU count (Linux's NR_CPUS is at most 8192): a larger number is a
// malformed list, not a CPU to enumerate up to.
constexpr unsigned kMaxCpuNumber = 1u << 20;

std::optional<CpuSet> parse_cpu_list(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::set<unsigned> cpus;
  while (!text.empty()) {
    const std::string_view range = text.substr(0, text.find(','));
    text.remove_prefix(std::min(text.size(), range.size() + 1));
    unsigned first = 0, last = 0;
    const char* end = range.data() + range.size();
    auto read = std::from_chars(range.data(), end, first);
    last = first;
    if (read.ec == std::errc() && read.ptr != end && *read.ptr == '-') {
      read = std::from_chars(read.ptr + 1, end, last);
    }
    if (read.ec != std::errc() || read.ptr != end || last < first || last >= kMaxCpuNumber) {
      return std::nullopt;
    }
    for (unsigned cpu = first; cpu <= last; ++cpu) cpus.insert(cpu);
  }
  return CpuSet(cpus.begin(), cpus.end());
}

std::string format_cpu_list(const CpuSet& cpus) {
  std::string text;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(cpus[i]);
    if (j > i) text += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace iocpbench::platform
