// The OS-neutral topology: the CPU list format, facts summarized into counts, and this
// machine's topology as gathered (on Windows under Wine too, where parts may be missing): every
// field present, each either a value or null with a reason.

#include <algorithm>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "platform/cpu_topology.hpp"
#include "platform/machine_info.hpp"
#include "platform/platform.hpp"

namespace {

using namespace iocpbench::platform;

constexpr const char* kFields[] = {
    "sockets", "physical_cores", "logical_cpus", "threads_per_core", "numa_nodes", "numa_node_cpus",
    "caches",  "cpu_model",      "base_mhz",     "max_mhz",          "current_mhz"};

// Each field is in the JSON; null exactly when `unavailable` gives a reason for it.
void expect_value_or_reason(const nlohmann::json& topology) {
  const auto& unavailable = topology.at("unavailable");
  for (const char* field : kFields) {
    SCOPED_TRACE(field);
    ASSERT_TRUE(topology.contains(field));
    if (topology.at(field).is_null()) {
      ASSERT_TRUE(unavailable.contains(field));
      EXPECT_FALSE(unavailable.at(field).get<std::string>().empty());
    } else {
      EXPECT_FALSE(unavailable.contains(field)) << unavailable.dump();
    }
  }
  const auto nulls = std::count_if(std::begin(kFields), std::end(kFields),
                                   [&](const char* f) { return topology.at(f).is_null(); });
  EXPECT_EQ(unavailable.size(), static_cast<std::size_t>(nulls));
}

TEST(CpuList, ParsesRangesAndSingles) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (CpuSet{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), (CpuSet{5}));
  EXPECT_EQ(parse_cpu_list(""), CpuSet{});  // a memory-only NUMA node has no CPUs
}

TEST(CpuList, RefusesMalformedText) {
  EXPECT_FALSE(parse_cpu_list("3-1"));
  EXPECT_FALSE(parse_cpu_list("a"));
  EXPECT_FALSE(parse_cpu_list("1-"));
  EXPECT_FALSE(parse_cpu_list("0 1"));
}

TEST(CpuList, WritesRunsAsRanges) {
  EXPECT_EQ(format_cpu_list({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpu_list({4}), "4");
  EXPECT_EQ(format_cpu_list({}), "");
}

TEST(Summarize, CountsPackagesCoresAndSharedCaches) {
  TopologyFacts facts;
  facts.packages = {{0, 1, 2, 3}};
  facts.cores = {{0, 2}, {1, 3}};
  facts.numa_nodes = {{0, {0, 1, 2, 3}}};
  facts.caches = {
      {1, "Data", 48, {0, 2}}, {1, "Data", 48, {1, 3}}, {3, "Unified", 16384, {0, 1, 2, 3}}};
  facts.cpu_model = "Test CPU";
  facts.unavailable["base_mhz"] = "not here";
  const CpuTopology t = summarize(facts);
  EXPECT_EQ(t.sockets, 1u);
  EXPECT_EQ(t.physical_cores, 2u);
  EXPECT_EQ(t.logical_cpus, 4u);
  EXPECT_EQ(t.threads_per_core, 2u);
  EXPECT_EQ(t.numa_nodes, 1u);
  ASSERT_TRUE(t.caches);
  ASSERT_EQ(t.caches->size(), 2u);
  EXPECT_EQ((*t.caches)[0].count, 2u);
  EXPECT_EQ((*t.caches)[0].shared_by_cpus, 2u);
  EXPECT_EQ((*t.caches)[1].size_kib, 16384u);
  const nlohmann::json j = to_json(t);
  EXPECT_EQ(j.at("numa_node_cpus").at("0"), "0-3");
  EXPECT_EQ(j.at("unavailable").at("base_mhz"), "not here");
  EXPECT_EQ(j.at("unavailable").at("max_mhz"), "the OS reported none");
  expect_value_or_reason(j);
}

TEST(Summarize, CoresOfDifferentWidthsLeaveThreadsPerCoreNull) {
  TopologyFacts facts;
  facts.packages = {{0, 1, 2, 3}};
  facts.cores = {{0, 1}, {2}, {3}};  // a hybrid CPU: one SMT core, two without
  const CpuTopology t = summarize(facts);
  EXPECT_EQ(t.physical_cores, 3u);
  EXPECT_EQ(t.logical_cpus, 4u);
  EXPECT_FALSE(t.threads_per_core);
  EXPECT_EQ(t.unavailable.at("threads_per_core"), "the cores differ: 1 to 2 threads per core");
}

TEST(Summarize, AMissingCoreListExplainsTheCountsDerivedFromIt) {
  TopologyFacts facts;
  facts.unavailable["physical_cores"] = "no core list";
  const CpuTopology t = summarize(facts);
  EXPECT_EQ(t.unavailable.at("threads_per_core"), "no core list");
  EXPECT_EQ(t.unavailable.at("logical_cpus"), "no core list");
  expect_value_or_reason(to_json(t));
}

// This machine, as `iocpbench info` reports it.
TEST(ThisMachine, EveryFieldIsAValueOrNullWithAReason) {
  const nlohmann::json machine = to_json(gather_machine_info());
  ASSERT_TRUE(machine.contains("topology")) << machine.dump();
  const nlohmann::json& t = machine.at("topology");
  expect_value_or_reason(t);
  if (!t.at("physical_cores").is_null()) {
    EXPECT_EQ(machine.at("cores"), t.at("physical_cores"));
  }
  if (!t.at("logical_cpus").is_null()) {
    const unsigned logical = t.at("logical_cpus").get<unsigned>();
    EXPECT_GE(logical, 1u);
    EXPECT_GE(logical, logical_cpus());  // the process may be confined to fewer
    if (!t.at("physical_cores").is_null()) {
      EXPECT_LE(t.at("physical_cores").get<unsigned>(), logical);
    }
    if (!t.at("threads_per_core").is_null()) {
      EXPECT_EQ(t.at("threads_per_core").get<unsigned>() * t.at("physical_cores").get<unsigned>(),
                logical);
    }
  }
  if (!t.at("sockets").is_null() && !t.at("physical_cores").is_null()) {
    EXPECT_GE(t.at("sockets").get<unsigned>(), 1u);
    EXPECT_LE(t.at("sockets").get<unsigned>(), t.at("physical_cores").get<unsigned>());
  }
}

}  // namespace
