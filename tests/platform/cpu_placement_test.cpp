// Placement on scripted machines (platform/cpu_placement.hpp): the spec's parser, the compact
// and spread orders over topologies numbered as Intel (a core's siblings n apart) and AMD
// (siblings adjacent) number them and over a hybrid CPU, the CPUs a process may not use left
// out, CPU-number order without a topology, and the reasons a list is refused.

#include <string>

#include <gtest/gtest.h>

#include "platform/cpu_placement.hpp"

namespace {

using namespace iocpbench::platform;

// 2 sockets x 2 cores x 2 threads, numbered as Linux numbers a two-socket Intel server: the
// first threads of every core first (socket 0's cores 0-1, socket 1's 2-3), their siblings 4 on.
TopologyFacts intel_two_sockets() {
  TopologyFacts f;
  f.packages = {{0, 1, 4, 5}, {2, 3, 6, 7}};
  f.cores = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  return f;
}

MachineCpus machine_of(TopologyFacts facts, CpuSet online, std::optional<CpuSet> allowed = std::nullopt) {
  MachineCpus m;
  m.topology = std::move(facts);
  m.online = std::move(online);
  m.allowed = std::move(allowed);
  return m;
}

PlacementSpec spec_of(const std::string& text) {
  std::string why;
  const auto spec = parse_placement(text, why);
  EXPECT_TRUE(spec) << text << ": " << why;
  return spec.value_or(PlacementSpec{});
}

TEST(PlacementSpec, NamesAndListsParse) {
  EXPECT_EQ(spec_of("none").kind, PlacementKind::none);
  EXPECT_FALSE(spec_of("none").pins());
  EXPECT_EQ(spec_of("compact").kind, PlacementKind::compact);
  EXPECT_EQ(spec_of("spread").kind, PlacementKind::spread);
  const PlacementSpec list = spec_of("0,2-3");
  EXPECT_EQ(list.kind, PlacementKind::list);
  EXPECT_EQ(list.list, (CpuSet{0, 2, 3}));
  EXPECT_EQ(list.text, "0,2-3");
  EXPECT_EQ(spec_of("5,1,1").list, (CpuSet{1, 5})) << "ascending, each CPU once";
  EXPECT_EQ(spec_of("7").list, (CpuSet{7}));
}

TEST(PlacementSpec, AnythingElseIsRefusedWithTheReason) {
  for (const char* bad : {"", "Compact", "all", "0,,1", "3-1", "0 ", " 0", "-1", "0-", ",", "1;2",
                          "0x1", "99999999999"}) {
    std::string why;
    EXPECT_FALSE(parse_placement(bad, why)) << "'" << bad << "' accepted";
    EXPECT_NE(why.find("not none, compact, spread or a CPU list"), std::string::npos) << why;
  }
}

TEST(PlacementOrder, CompactFillsACoreThenTheSocketThenTheNext) {
  EXPECT_EQ(compact_order(intel_two_sockets()), (CpuSet{0, 4, 1, 5, 2, 6, 3, 7}));
  TopologyFacts amd;  // one socket, a core's siblings adjacent
  amd.packages = {{0, 1, 2, 3}};
  amd.cores = {{0, 1}, {2, 3}};
  EXPECT_EQ(compact_order(amd), (CpuSet{0, 1, 2, 3}));
}

TEST(PlacementOrder, SpreadTakesEveryCoreSocketsAlternatingBeforeAnySecondSibling) {
  EXPECT_EQ(spread_order(intel_two_sockets()), (CpuSet{0, 2, 1, 3, 4, 6, 5, 7}));
  TopologyFacts amd;
  amd.packages = {{0, 1, 2, 3}};
  amd.cores = {{0, 1}, {2, 3}};
  EXPECT_EQ(spread_order(amd), (CpuSet{0, 2, 1, 3}));
  TopologyFacts hybrid;  // two SMT performance cores, two single-thread efficiency cores
  hybrid.packages = {{0, 1, 2, 3, 4, 5}};
  hybrid.cores = {{0, 1}, {2, 3}, {4}, {5}};
  EXPECT_EQ(spread_order(hybrid), (CpuSet{0, 2, 4, 5, 1, 3}));
  EXPECT_EQ(compact_order(hybrid), (CpuSet{0, 1, 2, 3, 4, 5}));
}

TEST(PlacementOrder, WithoutSocketsTheMachineIsOneSocket) {
  TopologyFacts f = intel_two_sockets();
  f.packages.clear();
  EXPECT_EQ(compact_order(f), (CpuSet{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(spread_order(f), (CpuSet{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(PlacementOrder, WithoutCoresThereIsNoOrder) {
  TopologyFacts f;
  f.packages = {{0, 1}};
  EXPECT_FALSE(compact_order(f));
  EXPECT_FALSE(spread_order(f));
}

TEST(Place, ThreadsWrapAroundTheTopologyOrder) {
  std::string why;
  const auto p = place(spec_of("spread"), machine_of(intel_two_sockets(), {0, 1, 2, 3, 4, 5, 6, 7}), why);
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->order, "topology");
  EXPECT_EQ(p->cycle, (CpuSet{0, 2, 1, 3, 4, 6, 5, 7}));
  EXPECT_EQ(p->cpu_for(0), 0u);
  EXPECT_EQ(p->cpu_for(1), 2u);
  EXPECT_EQ(p->cpu_for(9), 2u) << "worker 9 wraps to the order's second CPU";
}

TEST(Place, TheCpusThisProcessMayNotUseAreLeftOut) {
  std::string why;
  const auto p = place(spec_of("compact"),
                       machine_of(intel_two_sockets(), {0, 1, 2, 3, 4, 5, 6, 7}, CpuSet{1, 2, 3, 5}), why);
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->cycle, (CpuSet{1, 5, 2, 3}));
}

TEST(Place, WithoutATopologyCompactAndSpreadAreCpuNumberOrderAndSaySo) {
  TopologyFacts none;
  none.unavailable["physical_cores"] = "no /sys/devices/system/cpu/cpu0/topology/thread_siblings_list";
  for (const char* text : {"compact", "spread"}) {
    std::string why;
    const auto p = place(spec_of(text), machine_of(none, {0, 1, 2, 3}, CpuSet{0, 2, 3}), why);
    ASSERT_TRUE(p) << why;
    EXPECT_EQ(p->cycle, (CpuSet{0, 2, 3}));
    EXPECT_EQ(p->order,
              "cpu number (topology unavailable: no /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)");
  }
}

TEST(Place, AListIsTakenAsGivenWhenEveryCpuExistsAndIsAllowed) {
  std::string why;
  const auto p = place(spec_of("0,2-3"), machine_of(intel_two_sockets(), {0, 1, 2, 3, 4, 5, 6, 7}), why);
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->order, "list");
  EXPECT_EQ(p->cycle, (CpuSet{0, 2, 3}));
  EXPECT_EQ(p->cpu_for(4), 2u);
}

TEST(Place, AListCpuThatDoesNotExistOrIsNotAllowedIsRefused) {
  std::string why;
  EXPECT_FALSE(place(spec_of("0,7"), machine_of({}, {0, 1}), why));
  EXPECT_EQ(why, "CPU 7 does not exist (this machine has CPUs 0-1)");
  why.clear();
  EXPECT_FALSE(place(spec_of("1-2"), machine_of({}, {0, 1, 2, 3}, CpuSet{0, 1}), why));
  EXPECT_EQ(why, "CPU 2 is not allowed to this process (its affinity mask or cgroup allows CPUs 0-1)");
}

TEST(Place, NoneNeedsNothingOfTheMachine) {
  std::string why;
  const auto p = place(spec_of("none"), MachineCpus{}, why);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->cycle.empty());
  EXPECT_EQ(p->order, "");
}

TEST(Place, ThisMachineHasOnlineCpusAndEveryPlacementFindsOne) {
  const MachineCpus& m = this_machine_cpus();
  ASSERT_FALSE(m.online.empty());
  for (const char* text : {"compact", "spread"}) {
    std::string why;
    const auto p = place(spec_of(text), m, why);
    ASSERT_TRUE(p) << why;
    EXPECT_FALSE(p->cycle.empty());
  }
}

}  // namespace
