// Windows (run under Wine here): each workload runs briefly through engine::run_point against the
// kernel's port (`win32`: files and sockets associated with it, the kernel queues their
// completions) and against the emulated port (completions forwarded from a private IOCP), and
// what must be conserved is checked: packets, bytes per I/O, every echoed byte, one stop packet
// per thread, nothing left in the port. Plus the tagged-event I/Os of --skip-port-share,
// --skip-on-success on and off, and "unavailable" context switches under Wine. Never absolute
// timings.

#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>
#include <string>

#include "platform/platform.hpp"
#include "results/run_blocks.hpp"
#include "results/write.hpp"
#include "engine/run_point.hpp"
#include "echo_checks.hpp"

namespace {

using iocpbench::port::Backend;
using iocpbench::engine::PointSpec;
using iocpbench::engine::RunResult;

PointSpec spec_for(Backend port, iocpbench::WorkloadKind workload, nlohmann::json params) {
  PointSpec spec;
  spec.workload = workload;
  spec.workload_params = iocpbench::workloads::parse_workload_params(workload, params);
  spec.port = port;
  spec.concurrency = {"2", 0, 2};
  spec.concurrency_value = 2;
  spec.pool = iocpbench::core::CountSpec{"3", 0, 3};
  spec.pool_value = 3;
  spec.duration_s = 0.3;
  spec.warmup_s = 0.1;
  return spec;
}

std::string test_file() {
  const auto dir = std::filesystem::temp_directory_path() / "iocpbench-windows-workload-test";
  std::filesystem::create_directories(dir);
  return (dir / "data.bin").string();
}

void expect_clean_accounting(const RunResult& r, unsigned pool) {
  EXPECT_EQ(r.errors, 0u) << iocpbench::results::error_detail_json(r.error_detail).dump() << "\n" << r.workload_stats.dump();
  EXPECT_TRUE(r.drained);
  EXPECT_EQ(r.stop_packets_taken, pool) << "each thread takes exactly one stop packet";
  EXPECT_EQ(r.left_in_port, 0u);
  EXPECT_GT(r.ops, 0u);
  ASSERT_EQ(r.thread_shares.size(), pool);
  EXPECT_NEAR(std::accumulate(r.thread_shares.begin(), r.thread_shares.end(), 0.0), 1.0, 1e-9);
}

class WindowsWorkload : public ::testing::TestWithParam<Backend> {};

TEST_P(WindowsWorkload, PostAccountsForEveryPacket) {
  PointSpec spec = spec_for(GetParam(), iocpbench::WorkloadKind::post, {{"posters", 1}, {"in_flight", 16}});
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_clean_accounting(r, spec.pool_value);
  EXPECT_EQ(r.packets_posted_total, r.packets_handled_total) << "posted = handled, none lost";
  // The port's lists: kept by the emulated port, never by the kernel's (null with the reason).
  EXPECT_EQ(r.port_lists.has_value(), GetParam() == Backend::emulated) << r.port_lists_unavailable_because;
  if (GetParam() == Backend::win32) {
    EXPECT_NE(r.port_lists_unavailable_because.find("kernel's IOCP"), std::string::npos);
  }
}

TEST_P(WindowsWorkload, FileReadsMoveBlockSizeBytesPerOp) {
  PointSpec spec = spec_for(GetParam(), iocpbench::WorkloadKind::file,
                            {{"file", test_file()},
                             {"file_size_mib", 8},
                             {"block_size", 4096},
                             {"outstanding", 8}});
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_clean_accounting(r, spec.pool_value);
  EXPECT_EQ(r.bytes, r.ops * 4096) << "bytes = ops x block size";
  // The Windows-only keys of workload_stats keep their schema-v1 spelling (docs/windows.md).
  for (const char* key : {"sector_size", "immediate_successes", "immediate_failures", "direct_io_flag"}) {
    EXPECT_TRUE(r.workload_stats.contains(key)) << key << " missing: " << r.workload_stats.dump();
  }
  const auto& source = r.workload_stats.at("completion_source");
  EXPECT_EQ(source.at("kernel_queues_into_run_port").get<bool>(), GetParam() == Backend::win32);
  if (GetParam() != Backend::win32) {
    EXPECT_GT(source.at("forwarded").get<std::uint64_t>(), 0u) << "the completion thread";
  }
}

TEST_P(WindowsWorkload, FileMixedSequentialBufferedKeepsTheBlockInvariant) {
  PointSpec spec = spec_for(GetParam(), iocpbench::WorkloadKind::file,
                            {{"file", test_file()},
                             {"file_size_mib", 8},
                             {"block_size", 8192},
                             {"pattern", "sequential"},
                             {"op", "mixed"},
                             {"buffered", true},
                             // the fixed test file may predate iocpbench's marker (docs/reliability.md)
                             {"overwrite", true},
                             {"outstanding", 4}});
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_clean_accounting(r, spec.pool_value);
  EXPECT_EQ(r.bytes, r.ops * 8192);
}

// Half the I/Os carry a tagged event handle: they complete without a packet and are waited on
// by the issuing worker; none may reach the port.
TEST_P(WindowsWorkload, FileSkipPortShareKeepsTaggedIosOutOfThePort) {
  PointSpec spec = spec_for(GetParam(), iocpbench::WorkloadKind::file,
                            {{"file", test_file()},
                             {"file_size_mib", 8},
                             {"block_size", 4096},
                             {"outstanding", 4},
                             {"skip_port_share", 0.5}});
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_clean_accounting(r, spec.pool_value);
  const auto& skip = r.workload_stats.at("skip_port");
  EXPECT_GT(skip.at("ops").get<std::uint64_t>(), 0u);
  EXPECT_EQ(skip.at("packets_seen").get<std::uint64_t>(), 0u) << "a tagged I/O queued a packet";
  EXPECT_EQ(skip.at("errors").get<std::uint64_t>(), 0u);
  // About half of all I/Os (a wide band: short window, random draws).
  const double share = static_cast<double>(skip.at("ops").get<std::uint64_t>()) /
                       static_cast<double>(skip.at("ops").get<std::uint64_t>() + r.ops);
  EXPECT_GT(share, 0.2);
  EXPECT_LT(share, 0.8);
}

std::uint64_t count(const nlohmann::json& block, const char* key) {
  return block.at(key).get<std::uint64_t>();
}

// --skip-on-success on: an I/O that succeeds at once queues no packet; a worker's re-issue is
// handed back and handled by that worker, every completion counted once (packet or inline).
TEST_P(WindowsWorkload, FileSkipOnSuccessCountsEveryCompletionOnce) {
  PointSpec spec = spec_for(GetParam(), iocpbench::WorkloadKind::file,
                            {{"file", test_file()},
                             {"file_size_mib", 8},
                             {"block_size", 4096},
                             {"outstanding", 8}});
  spec.skip_on_success = iocpbench::SkipOnSuccess::on;
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_clean_accounting(r, spec.pool_value);
  EXPECT_EQ(r.bytes, r.ops * 4096) << "bytes = ops x block size";
  const auto& block = r.workload_stats.at("skip_on_success");
  EXPECT_EQ(block.at("requested"), "on");
  EXPECT_TRUE(block.at("asked").get<bool>());
  EXPECT_EQ(count(block, "granted"), 1u) << block.dump();
  EXPECT_EQ(count(block, "immediate"),
            count(block, "handled_inline") + count(block, "posted_by_issuer"));
  EXPECT_EQ(r.completions_inline_total, count(block, "handled_inline"));
  EXPECT_EQ(r.completions_handled_total, r.packets_handled_total + r.completions_inline_total)
      << "each completion once: a packet or inline";
  EXPECT_LE(count(block, "immediate"), count(r.workload_stats, "immediate_successes"));
}

TEST_P(WindowsWorkload, FileSkipOnSuccessOffIsOnePacketPerIo) {
  PointSpec spec = spec_for(GetParam(), iocpbench::WorkloadKind::file,
                            {{"file", test_file()},
                             {"file_size_mib", 8},
                             {"block_size", 4096},
                             {"outstanding", 8}});
  spec.skip_on_success = iocpbench::SkipOnSuccess::off;
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_clean_accounting(r, spec.pool_value);
  const auto& block = r.workload_stats.at("skip_on_success");
  EXPECT_FALSE(block.at("asked").get<bool>());
  EXPECT_EQ(count(block, "granted"), 0u);
  EXPECT_EQ(count(block, "immediate"), 0u);
  EXPECT_EQ(r.completions_inline_total, 0u);
  EXPECT_EQ(r.completions_handled_total, r.packets_handled_total);
}

// --skip-on-success off on the socket: the mode is not asked for, so nothing completes inline.
TEST_P(WindowsWorkload, SocketSkipOnSuccessOffQueuesEverySendAndReceive) {
  PointSpec spec = spec_for(GetParam(), iocpbench::WorkloadKind::socket,
                            {{"connections", 4}, {"message_size", 100}});
  spec.skip_on_success = iocpbench::SkipOnSuccess::off;
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_clean_accounting(r, spec.pool_value);
  iocpbench::test::expect_every_byte_verified(r, 100);
  const auto& block = r.workload_stats.at("skip_on_success");
  EXPECT_FALSE(block.at("asked").get<bool>());
  EXPECT_EQ(count(block, "granted"), 0u);
  EXPECT_EQ(count(r.workload_stats, "skip_completion_port_on_success_sockets"), 0u);
  const auto& immediate = r.workload_stats.at("immediate");
  EXPECT_EQ(count(immediate, "sends_completed_inline"), 0u);
  EXPECT_EQ(count(immediate, "recvs_completed_inline_posted"), 0u);
  EXPECT_EQ(count(block, "immediate"), 0u);
}

TEST_P(WindowsWorkload, SocketEchoesEveryByteIntact) {
  PointSpec spec = spec_for(GetParam(), iocpbench::WorkloadKind::socket, {{"connections", 4}, {"message_size", 100}});
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_clean_accounting(r, spec.pool_value);
  iocpbench::test::expect_every_byte_verified(r, 100);
  EXPECT_GT(r.latency.p50, 0) << "round trips measured by the load generator";
  // The Windows-only keys of workload_stats keep their schema-v1 spelling (docs/windows.md).
  EXPECT_TRUE(r.workload_stats.contains("short_sends")) << r.workload_stats.dump();
  const auto& immediate = r.workload_stats.at("immediate");
  for (const char* key : {"sends_completed_inline", "sends_pending", "recvs_completed_inline_posted",
                          "recvs_pending", "failures"}) {
    EXPECT_TRUE(immediate.contains(key)) << key << " missing: " << immediate.dump();
  }
}

TEST_P(WindowsWorkload, SocketSeveralMessagesInFlight) {
  PointSpec spec = spec_for(GetParam(), iocpbench::WorkloadKind::socket,
                            {{"connections", 2}, {"message_size", 64}, {"messages_in_flight", 4}});
  const RunResult r = iocpbench::engine::run_point(spec, nullptr);
  expect_clean_accounting(r, spec.pool_value);
  iocpbench::test::expect_every_echo_verified(r);
}

INSTANTIATE_TEST_SUITE_P(Ports, WindowsWorkload,
                         ::testing::Values(Backend::win32, Backend::emulated),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

// Where Windows cannot count (Wine reads 0), the run's JSON says "unavailable": null counts and
// the reason, never 0. On real Windows the counts are numbers.
TEST(WindowsMetrics, ContextSwitchesAreNullWithAReasonUnderWine) {
  PointSpec spec = spec_for(Backend::win32, iocpbench::WorkloadKind::post, {{"posters", 1}, {"in_flight", 8}});
  spec.duration_s = 0.1;
  const nlohmann::json run = iocpbench::results::run_record(iocpbench::engine::run_point(spec, nullptr)).fields;
  const auto& switches = run.at("context_switches");
  if (iocpbench::platform::wine_version()) {
    EXPECT_TRUE(run.at("context_switches_per_kop").is_null());
    EXPECT_TRUE(switches.at("voluntary").is_null());
    EXPECT_TRUE(switches.at("by_role").at("workers").at("voluntary").is_null());
    ASSERT_TRUE(switches.at("unavailable").is_string());
    EXPECT_NE(switches.at("unavailable").get<std::string>().find("Wine"), std::string::npos);
  } else {
    EXPECT_TRUE(run.at("context_switches_per_kop").is_number());
    EXPECT_TRUE(switches.at("voluntary").is_number());
    EXPECT_FALSE(switches.contains("unavailable"));
  }
}

class Cleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(test_file()).parent_path(), ec);
  }
};
const auto* const kCleanup = ::testing::AddGlobalTestEnvironment(new Cleanup);

}  // namespace
