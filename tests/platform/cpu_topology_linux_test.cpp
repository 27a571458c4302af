// The sysfs reader (platform/cpu_topology_linux.hpp) on trees written into a temp dir: a
// two-socket SMT server with NUMA and cpufreq, a VM that describes no caches, NUMA or clocks,
// and an empty root; then on this machine's real /sys.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "platform/cpu_placement.hpp"
#include "platform/cpu_topology_linux.hpp"

namespace {

namespace fs = std::filesystem;
using namespace iocpbench::platform;

class FakeRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            ("iocpbench-topology-" + std::to_string(getpid()) + "-" + test->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void put(const std::string& file, const std::string& text) {
    const fs::path path = root_ / file;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text << '\n';
  }
  void put_cpu(unsigned cpu, const std::string& package, const std::string& siblings) {
    const std::string dir = "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    put(dir + "physical_package_id", package);
    put(dir + "thread_siblings_list", siblings);
  }
  void put_cache(unsigned cpu, unsigned index, const std::string& level, const std::string& type,
                 const std::string& size, const std::string& shared) {
    const std::string dir = "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index" +
                            std::to_string(index) + "/";
    put(dir + "level", level);
    put(dir + "type", type);
    put(dir + "size", size);
    put(dir + "shared_cpu_list", shared);
  }

  // 2 sockets x 2 cores x 2 threads, numbered as Linux does (a core's siblings are n and n+4),
  // 2 NUMA nodes (one a socket) and intel_pstate's cpufreq files.
  void write_server() {
    put("sys/devices/system/cpu/online", "0-7");
    for (unsigned cpu = 0; cpu < 8; ++cpu) {
      const unsigned core = cpu % 4;
      const std::string siblings = std::to_string(core) + "," + std::to_string(core + 4);
      put_cpu(cpu, core < 2 ? "0" : "1", siblings);
      put_cache(cpu, 0, "1", "Data", "32K", siblings);
      put_cache(cpu, 1, "1", "Instruction", "32K", siblings);
      put_cache(cpu, 2, "2", "Unified", "1024K", siblings);
      put_cache(cpu, 3, "3", "Unified", "32768K", core < 2 ? "0-1,4-5" : "2-3,6-7");
    }
    put("sys/devices/system/node/node0/cpulist", "0-1,4-5");
    put("sys/devices/system/node/node1/cpulist", "2-3,6-7");
    put("sys/devices/system/node/possible", "0-1");  // not a node
    put("sys/devices/system/cpu/cpu0/cpufreq/base_frequency", "2100000");
    put("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3900000");
    put("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "1800400");
    put("proc/cpuinfo", "processor\t: 0\nmodel name\t: Fake CPU 9000\ncpu MHz\t\t: 1234.567\n");
  }

  fs::path root_;
};

TEST_F(FakeRoot, ATwoSocketSmtServer) {
  write_server();
  const CpuTopology t = read_linux_topology(root_);
  EXPECT_EQ(t.sockets, 2u);
  EXPECT_EQ(t.physical_cores, 4u);
  EXPECT_EQ(t.logical_cpus, 8u);
  EXPECT_EQ(t.threads_per_core, 2u);
  EXPECT_EQ(t.numa_nodes, 2u);
  EXPECT_EQ(t.cpu_model, "Fake CPU 9000");
  EXPECT_EQ(t.base_mhz, 2100u);
  EXPECT_EQ(t.max_mhz, 3900u);
  EXPECT_EQ(t.current_mhz, 1800u);  // cpufreq's, not /proc/cpuinfo's
  EXPECT_TRUE(t.unavailable.empty()) << to_json(t).dump();
  const nlohmann::json j = to_json(t);
  EXPECT_EQ(j.at("numa_node_cpus"), (nlohmann::json{{"0", "0-1,4-5"}, {"1", "2-3,6-7"}}));
  const nlohmann::json caches = {
      {{"level", 1}, {"type", "Data"}, {"size_kib", 32}, {"shared_by_cpus", 2}, {"count", 4}},
      {{"level", 1},
       {"type", "Instruction"},
       {"size_kib", 32},
       {"shared_by_cpus", 2},
       {"count", 4}},
      {{"level", 2}, {"type", "Unified"}, {"size_kib", 1024}, {"shared_by_cpus", 2}, {"count", 4}},
      {{"level", 3},
       {"type", "Unified"},
       {"size_kib", 32768},
       {"shared_by_cpus", 4},
       {"count", 2}}};
  EXPECT_EQ(j.at("caches"), caches);
}

// What a small VM often shows: CPUs and their siblings, nothing else but /proc/cpuinfo.
// The placement orders from the tree as sysfs lays it out: siblings 4 apart, two sockets.
TEST_F(FakeRoot, TheServersPlacementOrdersFollowItsCoresAndSockets) {
  write_server();
  const TopologyFacts facts = read_linux_topology_facts(root_);
  EXPECT_EQ(compact_order(facts), (CpuSet{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(spread_order(facts), (CpuSet{0, 2, 1, 3, 4, 6, 5, 7}));
}

TEST_F(FakeRoot, AVmWithoutCachesNumaOrCpufreq) {
  put("sys/devices/system/cpu/online", "0-1");
  put_cpu(0, "0", "0");
  put_cpu(1, "0", "1");
  put("proc/cpuinfo", "model name\t: Fake vCPU\ncpu MHz\t\t: 2299.998\n");
  const CpuTopology t = read_linux_topology(root_);
  EXPECT_EQ(t.sockets, 1u);
  EXPECT_EQ(t.physical_cores, 2u);
  EXPECT_EQ(t.threads_per_core, 1u);
  EXPECT_EQ(t.current_mhz, 2300u);  // /proc/cpuinfo's "cpu MHz", rounded
  EXPECT_FALSE(t.caches);
  EXPECT_FALSE(t.numa_nodes);
  EXPECT_FALSE(t.base_mhz);
  EXPECT_FALSE(t.max_mhz);
  EXPECT_NE(t.unavailable.at("caches").find("/sys/devices/system/cpu/cpu0/cache"),
            std::string::npos);
  EXPECT_NE(t.unavailable.at("numa_nodes").find("/sys/devices/system/node"), std::string::npos);
  EXPECT_NE(t.unavailable.at("numa_node_cpus").find("NUMA"), std::string::npos);
  EXPECT_EQ(t.unavailable.at("max_mhz"),
            "no /sys/devices/system/cpu/cpu0/cpufreq on this kernel (a VM often has none)");
}

TEST_F(FakeRoot, ACpuWithoutSiblingsLeavesTheCoreCountsNull) {
  put("sys/devices/system/cpu/online", "0-1");
  put_cpu(0, "0", "0");
  put("sys/devices/system/cpu/cpu1/topology/physical_package_id", "0");
  const CpuTopology t = read_linux_topology(root_);
  EXPECT_EQ(t.sockets, 1u);
  EXPECT_FALSE(t.physical_cores);
  EXPECT_EQ(t.unavailable.at("physical_cores"),
            "no /sys/devices/system/cpu/cpu1/topology/thread_siblings_list");
  EXPECT_EQ(t.unavailable.at("threads_per_core"), t.unavailable.at("physical_cores"));
}

TEST_F(FakeRoot, AnEmptyRootGivesEveryFieldAReason) {
  fs::create_directories(root_);
  const CpuTopology t = read_linux_topology(root_);
  EXPECT_FALSE(t.sockets || t.physical_cores || t.logical_cpus || t.caches || t.cpu_model ||
               t.current_mhz);
  EXPECT_EQ(t.unavailable.size(), 11u) << to_json(t).dump();
  EXPECT_EQ(t.unavailable.at("sockets"),
            "no list of online CPUs in /sys/devices/system/cpu/online");
  for (const auto& [field, reason] : t.unavailable)
    EXPECT_NE(reason, "the OS reported none") << field;
}

// This machine's /sys: counts that hold on any machine.
TEST(RealSys, CountsAreConsistentWithWhatTheProcessSees) {
  const CpuTopology t = read_linux_topology("/");
  ASSERT_TRUE(t.logical_cpus && t.physical_cores && t.sockets) << to_json(t).dump();
  EXPECT_EQ(*t.logical_cpus, static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_GE(*t.sockets, 1u);
  EXPECT_GE(*t.physical_cores, *t.sockets);
  EXPECT_LE(*t.physical_cores, *t.logical_cpus);
  if (t.numa_nodes) {
    EXPECT_GE(*t.numa_nodes, 1u);
  }
  if (t.caches) {
    for (const CacheGroup& c : *t.caches) {
      EXPECT_GE(c.level, 1u);
      EXPECT_GE(c.size_kib, 1u);
      EXPECT_GE(c.shared_by_cpus, 1u);
      EXPECT_LE(c.shared_by_cpus, *t.logical_cpus);
    }
  }
}

}  // namespace
