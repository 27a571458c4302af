// I/O-driven conformance: completions of real io_uring operations (loopback socket
// pairs, a real file) obey the port's rules as posted packets do, on the port path
// (`--completion-path port`, no completion thread: the emulated port reads the ring itself).
// - a completion that finds a waiter while C < M goes to it (nobody leaves it in the ring),
//   and to the newest waiter;
// - a completion that arrives while C = M waits, and a blocking handler releases a waiter for it;
// - whole runs (file and socket, C = N, pool 2N+2, b = 0): the N busiest threads take >= 95%
//   of the completions (the LIFO signature) and C never exceeds M (no resume window at b = 0).
// Every wait is bounded (a lost completion fails the test instead of hanging it); nothing
// asserts a duration.

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <string>

#include "test_data_file.hpp"
#include "core/errors.hpp"
#include "io/completion_source_linux.hpp"
#include "platform/platform.hpp"
#include "port/blocking_region.hpp"
#include "port/completion_port.hpp"
#include "port/port_actor.hpp"
#include "engine/run_point.hpp"
#include "engine/switch_attribution.hpp"
#include "results/run_blocks.hpp"
#include "sweep/completion_path_compat.hpp"
#include "sweep/grid.hpp"
#include "engine/workload_params.hpp"

namespace {

using namespace std::chrono_literals;
using iocpbench::io::IoOp;
using iocpbench::port::CompletionPort;
using iocpbench::port::Packet;
using iocpbench::port::PortActor;
using iocpbench::port::RemoveOutcome;
using iocpbench::port::RemoveStatus;

constexpr auto kBound = 10s;  // liveness bound on every wait; never a timing assertion

// A connected AF_UNIX stream pair: a receive armed on `server` completes when `client` writes.
struct SocketPair {
  int server = -1, client = -1;
  SocketPair() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw std::runtime_error("socketpair");
    server = fds[0];
    client = fds[1];
  }
  ~SocketPair() {
    ::close(server);
    ::close(client);
  }
  void send_byte() const {
    const char c = 'x';
    ASSERT_EQ(::write(client, &c, 1), 1);
  }
};

// An emulated port with concurrency M and the port-path source over it.
struct Rig {
  std::unique_ptr<CompletionPort> port;
  std::unique_ptr<iocpbench::io::CompletionSource> source;
  explicit Rig(unsigned m, bool readiness_receives = false) {
    iocpbench::port::PortOptions options;
    options.concurrency = m;
    options.check_invariants = true;
    port = iocpbench::port::make_port(iocpbench::port::Backend::emulated, options);
    iocpbench::io::SourceOptions so;
    so.port = port.get();
    so.max_ops = 16;
    so.port_reads = true;
    so.readiness_receives = readiness_receives;
    source = iocpbench::io::make_completion_source(so);
  }
  ~Rig() {
    source.reset();  // detaches from the port first
    port->close();
  }
};

IoOp recv_op(int fd, char* buf, std::uintptr_t key) {
  IoOp op;
  op.kind = IoOp::Kind::recv;
  op.fd = fd;
  op.buf = buf;
  op.len = 1;
  op.key = key;
  return op;
}

// Waits (bounded) until `n` threads sit in the port's wait stack: the port shows no depth of W,
// so the test gives each actor's remove time to block, then checks it has not returned.
void let_block(const std::future<RemoveOutcome>& f) {
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(f.wait_for(10ms), std::future_status::timeout) << "the remove returned early";
  }
}

// Both ways a receive can wait: armed in the ring (io_uring's poll, the file workload's and
// the old socket path) and by readiness in epoll (the socket workload's default).
class IoConformance : public ::testing::TestWithParam<bool> {};
std::string receive_wait_name(const ::testing::TestParamInfo<bool>& param) {
  return param.param ? "ByReadiness" : "InTheRing";
}
INSTANTIATE_TEST_SUITE_P(ReceiveWaits, IoConformance, ::testing::Values(false, true),
                         receive_wait_name);

TEST_P(IoConformance, SourceIsThePortItself) {
  Rig rig(2, GetParam());
  EXPECT_NE(rig.source->describe().find("read by the port itself"), std::string::npos)
      << rig.source->describe();
  EXPECT_EQ(rig.source->describe().find("readiness in epoll") != std::string::npos, GetParam())
      << rig.source->describe();
}

// C < M with a waiter: the completion must reach the waiter though no thread runs in the port
// (the old design's completion thread is gone; a design that left it in the ring fails here).
TEST_P(IoConformance, CompletionFindsTheWaitingThread) {
  Rig rig(2, GetParam());
  SocketPair pair;
  char buf[1];
  IoOp op = recv_op(pair.server, buf, 7);
  PortActor waiter;
  auto got = iocpbench::port::async_remove(waiter, *rig.port, std::chrono::duration_cast<iocpbench::port::Timeout>(kBound));
  let_block(got);
  rig.source->submit(op);  // armed after the thread waits: it was unwatched until now
  let_block(got);          // nothing to receive yet
  pair.send_byte();
  ASSERT_EQ(got.wait_for(kBound), std::future_status::ready);
  const RemoveOutcome out = got.get();
  EXPECT_EQ(out.status, RemoveStatus::ok);
  EXPECT_EQ(out.packet.key, 7u);
  EXPECT_EQ(out.packet.bytes, 1u);
  EXPECT_EQ(out.packet.context, &op);
  EXPECT_EQ(rig.port->counters().invariant_violations, 0u);
}

// Two waiters, first A then B: the completion goes to B, the newest, as a post would.
TEST_P(IoConformance, CompletionGoesToTheNewestWaiter) {
  Rig rig(2, GetParam());
  SocketPair pair;
  char buf[1];
  IoOp op = recv_op(pair.server, buf, 1);
  rig.source->submit(op);
  PortActor a, b;
  const auto bound = std::chrono::duration_cast<iocpbench::port::Timeout>(kBound);
  auto got_a = iocpbench::port::async_remove(a, *rig.port, 1500ms);
  let_block(got_a);
  auto got_b = iocpbench::port::async_remove(b, *rig.port, bound);
  let_block(got_b);
  pair.send_byte();
  ASSERT_EQ(got_b.wait_for(kBound), std::future_status::ready) << "the newest waiter got nothing";
  EXPECT_EQ(got_b.get().status, RemoveStatus::ok);
  ASSERT_EQ(got_a.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(got_a.get().status, RemoveStatus::timeout) << "the older waiter stays asleep";
  EXPECT_EQ(rig.port->counters().invariant_violations, 0u);
}

// M = 1: A holds the slot (it took a packet and runs); B waits. A completion arriving now waits
// (B must not get it: the cap). When A blocks, B is released for it.
TEST_P(IoConformance, BlockingHandlerReleasesAWaiterForAQueuedCompletion) {
  Rig rig(1, GetParam());
  SocketPair pair;
  char buf1[1];
  IoOp first = recv_op(pair.server, buf1, 1);
  PortActor a, b;
  rig.port->post(Packet{0, 0, 99, nullptr});
  auto took = iocpbench::port::async_remove(a, *rig.port, 1s);
  ASSERT_EQ(took.wait_for(kBound), std::future_status::ready);
  ASSERT_EQ(took.get().packet.key, 99u);  // A is released: C = 1 = M

  auto got_b = iocpbench::port::async_remove(b, *rig.port, std::chrono::duration_cast<iocpbench::port::Timeout>(kBound));
  let_block(got_b);
  rig.source->submit(first);
  pair.send_byte();
  // The completion is there (in the ring) but the cap holds: B stays asleep while A runs.
  for (int i = 0; i < 30; ++i) {
    ASSERT_EQ(got_b.wait_for(10ms), std::future_status::timeout) << "B ran over the cap";
  }
  std::promise<void> unblock;
  auto blocked = a.run([&unblock] {
    iocpbench::port::BlockingRegion region;  // A blocks: activate
    unblock.get_future().wait_for(kBound);
  });
  ASSERT_EQ(got_b.wait_for(kBound), std::future_status::ready) << "no waiter released";
  const RemoveOutcome out = got_b.get();
  EXPECT_EQ(out.status, RemoveStatus::ok);
  EXPECT_EQ(out.packet.context, &first);
  unblock.set_value();
  ASSERT_EQ(blocked.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(rig.port->counters().invariant_violations, 0u);
  EXPECT_LE(rig.port->counters().max_active, 2u) << "A's resume is the only way over M";
}

// A running thread that enters GQCS takes a completion that arrived meanwhile without
// sleeping, and a waiter stays asleep (M = 1, A holds the slot).
TEST_P(IoConformance, RunningThreadTakesTheCompletionItself) {
  Rig rig(1, GetParam());
  SocketPair pair;
  char buf[1];
  IoOp op = recv_op(pair.server, buf, 5);
  PortActor a, b;
  rig.port->post(Packet{0, 0, 99, nullptr});
  auto took = iocpbench::port::async_remove(a, *rig.port, 1s);
  ASSERT_EQ(took.wait_for(kBound), std::future_status::ready);
  auto got_b = iocpbench::port::async_remove(b, *rig.port, 1500ms);
  let_block(got_b);
  rig.source->submit(op);
  pair.send_byte();
  std::this_thread::sleep_for(50ms);  // (the completion lands in the ring; A still runs)
  auto next = iocpbench::port::async_remove(a, *rig.port, 0ms);
  ASSERT_EQ(next.wait_for(kBound), std::future_status::ready);
  const RemoveOutcome out = next.get();
  EXPECT_EQ(out.status, RemoveStatus::ok) << "A found nothing: the completion was not harvested";
  EXPECT_EQ(out.packet.key, 5u);
  ASSERT_EQ(got_b.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(got_b.get().status, RemoveStatus::timeout);
}

// What a self-sizing pool asks before a worker leaves (port::WorkerIo::io_pending, which the
// port path's transports answer from their sources): whether an operation is in flight, from
// its submit until its completion is taken from the port, and not after.
TEST_P(IoConformance, InFlightFromTheSubmitUntilTheCompletionIsTaken) {
  Rig rig(1, GetParam());
  SocketPair pair;
  char buf[1];
  IoOp op = recv_op(pair.server, buf, 7);
  EXPECT_FALSE(rig.source->in_flight()) << "nothing submitted";
  rig.source->submit(op);
  EXPECT_TRUE(rig.source->in_flight()) << "a receive waits for data";
  pair.send_byte();
  PortActor a;
  auto got = iocpbench::port::async_remove(a, *rig.port, 5s);
  ASSERT_EQ(got.wait_for(kBound), std::future_status::ready);
  const RemoveOutcome out = got.get();
  ASSERT_EQ(out.status, RemoveStatus::ok);
  EXPECT_EQ(out.packet.key, 7u);
  EXPECT_FALSE(rig.source->in_flight()) << "its completion was taken: nothing in flight";
}

// Data already there when the receive is armed (readiness: the socket's first arm adds it while
// readable), data a receive left behind (a 1-byte buffer, 2 bytes sent: no new edge comes for
// the second), then a receive that must wait for data: each completes, none early, none lost.
TEST_P(IoConformance, DataBeforeTheArmAndDataLeftBehindAreReceivedAtOnce) {
  Rig rig(2, GetParam());
  SocketPair pair;
  char buf[1];
  IoOp op = recv_op(pair.server, buf, 3);
  pair.send_byte();
  pair.send_byte();
  PortActor a;
  const auto bound = std::chrono::duration_cast<iocpbench::port::Timeout>(kBound);
  for (int i = 0; i < 2; ++i) {
    rig.source->submit(op);
    auto got = iocpbench::port::async_remove(a, *rig.port, bound);
    ASSERT_EQ(got.wait_for(kBound), std::future_status::ready);
    const RemoveOutcome out = got.get();
    ASSERT_EQ(out.status, RemoveStatus::ok) << "receive " << i;
    EXPECT_EQ(out.packet.bytes, 1u) << "receive " << i;
  }
  rig.source->submit(op);  // nothing left to receive: it waits
  auto early = iocpbench::port::async_remove(a, *rig.port, 300ms);
  ASSERT_EQ(early.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(early.get().status, RemoveStatus::timeout) << "a receive completed with no data";
  pair.send_byte();
  auto got = iocpbench::port::async_remove(a, *rig.port, bound);
  ASSERT_EQ(got.wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(got.get().status, RemoveStatus::ok);
  EXPECT_EQ(rig.port->counters().invariant_violations, 0u);
}

// ---- the attribution of counted switches (pure) ----

TEST(SwitchAttribution, SplitsTheCountsByTheirCause) {
  iocpbench::engine::SwitchCounts c;
  c.workers_voluntary = 1000;
  c.workers_involuntary = 400;
  c.source_voluntary = 300;
  c.source_involuntary = 20;
  c.other = 10;
  c.handoffs = 600;
  c.handler_blocks = 300;
  c.over_limit_s = 0.25;
  c.window_s = 1.0;
  const nlohmann::json a = iocpbench::results::attribution_json(iocpbench::engine::attribute_switches(c));
  EXPECT_EQ(a["iocp_model"]["port_waits"], 600);
  EXPECT_EQ(a["iocp_model"]["handler_blocks"], 300);
  EXPECT_EQ(a["iocp_model"]["preempted_over_limit"], 100);  // 400 x 0.25
  EXPECT_EQ(a["iocp_model"]["total"], 1000);
  EXPECT_EQ(a["emulation"]["completion_thread"], 320);
  EXPECT_EQ(a["emulation"]["workers_other_voluntary"], 100);
  EXPECT_EQ(a["emulation"]["workers_preempted_by_it"], 300);  // min(300, 300 + 100)
  EXPECT_EQ(a["emulation"]["total"], 720);
  EXPECT_EQ(a["outside_port"]["total"], 10);
  EXPECT_NEAR(a["emulation_share"].get<double>(), 720.0 / 1730.0, 1e-12);
}

// Per-thread ports: a worker's wait on its own ring is that model's port sleep, not the
// emulation's.
TEST(SwitchAttribution, OwnRingWaitsArePortWaits) {
  iocpbench::engine::SwitchCounts c;
  c.workers_voluntary = 900;
  c.own_io_waits = 1000;  // counted over the whole run: bounded by the window's switches
  const nlohmann::json a = iocpbench::results::attribution_json(iocpbench::engine::attribute_switches(c));
  EXPECT_EQ(a["iocp_model"]["port_waits"], 900);
  EXPECT_EQ(a["emulation"]["total"], 0);
}

// On a loaded machine workers are preempted by other processes: no emulation wake-up, no
// emulation preemption.
TEST(SwitchAttribution, PreemptionWithoutEmulationWakeUpsIsNotTheEmulations) {
  iocpbench::engine::SwitchCounts c;
  c.workers_voluntary = 10;
  c.workers_involuntary = 500;
  c.handoffs = 10;
  c.source_voluntary = 40;
  c.window_s = 1.0;
  const nlohmann::json a = iocpbench::results::attribution_json(iocpbench::engine::attribute_switches(c));
  EXPECT_EQ(a["emulation"]["workers_preempted_by_it"], 40);
  EXPECT_EQ(a["outside_port"]["workers_preempted_otherwise"], 460);
  EXPECT_EQ(a["emulation"]["total"], 80);
}

TEST(SwitchAttribution, HandoffsNeverClaimMoreThanTheWorkersSwitched) {
  iocpbench::engine::SwitchCounts c;
  c.workers_voluntary = 50;  // a handoff to a waiter that had not gone to sleep yet
  c.handoffs = 80;
  c.handler_blocks = 10;
  const nlohmann::json a = iocpbench::results::attribution_json(iocpbench::engine::attribute_switches(c));
  EXPECT_EQ(a["iocp_model"]["port_waits"], 50);
  EXPECT_EQ(a["iocp_model"]["handler_blocks"], 0);
  EXPECT_EQ(a["emulation"]["total"], 0);
  EXPECT_FALSE(iocpbench::engine::attribute_switches({}).emulation_share.has_value())
      << "nothing counted: no share, not 0";
}

// ---- the path in results: always in the params, in the id only when not the default ----

TEST(CompletionPathRecord, EveryIoPointRecordsItAndTheIdNamesItOnlyWhenNotTheDefault) {
  using iocpbench::workloads::parse_workload_params;
  using iocpbench::workloads::to_json;
  EXPECT_EQ(iocpbench::workloads::kDefaultCompletionPath, iocpbench::workloads::CompletionPath::port);
  const auto plain = to_json(parse_workload_params(iocpbench::WorkloadKind::socket, nlohmann::json::object()));
  EXPECT_EQ(plain.value("completion_path", ""), "port") << "the default, written out";
  const auto thread = to_json(parse_workload_params(iocpbench::WorkloadKind::file, {{"completion_path", "thread"}}));
  EXPECT_EQ(thread.value("completion_path", ""), "thread");
  EXPECT_FALSE(to_json(parse_workload_params(iocpbench::WorkloadKind::post, {{"completion_path", "thread"}}))
                   .contains("completion_path"))
      << "post has no I/O";
  try {
    parse_workload_params(iocpbench::WorkloadKind::file, {{"completion_path", "ring"}});
    ADD_FAILURE() << "a bad path was accepted";
  } catch (const iocpbench::BadInput& e) {
    EXPECT_EQ(e.flag, "--completion-path");
  }
  iocpbench::engine::PointSpec spec;
  spec.workload = iocpbench::WorkloadKind::socket;
  const std::string id = iocpbench::sweep::point_id(spec);
  spec.workload_params = iocpbench::workloads::parse_workload_params(spec.workload, {{"completion_path", "port"}});
  EXPECT_EQ(iocpbench::sweep::point_id(spec), id);
  spec.workload_params = iocpbench::workloads::parse_workload_params(spec.workload, {{"completion_path", "thread"}});
  EXPECT_EQ(iocpbench::sweep::point_id(spec), id + "/cp=thread");
  spec.workload = iocpbench::WorkloadKind::post;
  spec.workload_params = iocpbench::workloads::parse_workload_params(spec.workload, nlohmann::json::object());
  const std::string post_id = iocpbench::sweep::point_id(spec);
  spec.workload_params = iocpbench::workloads::parse_workload_params(spec.workload, {{"completion_path", "thread"}});
  EXPECT_EQ(iocpbench::sweep::point_id(spec), post_id) << "post ids never name a path";
}

// A results file as written before the change: no completion_path anywhere, thread measured.
nlohmann::json older_results(const iocpbench::sweep::Grid& grid) {
  nlohmann::json doc = {{"sweep", iocpbench::sweep::grid_to_json(grid)}, {"points", nlohmann::json::array()}};
  doc["sweep"]["workload_params"] = nlohmann::json::object();
  for (const auto& spec : iocpbench::sweep::expand(grid, 2)) {
    // The id of the time: no path named (thread was the default, and nothing said port).
    doc["points"].push_back({{"id", iocpbench::sweep::point_id(spec)},
                             {"workload", iocpbench::to_string(spec.workload)},
                             {"workload_params", nlohmann::json::object()},
                             {"runs", nlohmann::json::array({{{"repetition", 0}}})}});
  }
  return doc;
}

iocpbench::sweep::Grid small_grid(std::vector<iocpbench::WorkloadKind> workloads) {
  iocpbench::sweep::Grid grid = iocpbench::sweep::quick_grid();
  grid.workloads = std::move(workloads);
  grid.workload_params = nlohmann::json::object();
  return grid;
}

TEST(CompletionPathRecord, AnOlderFileResumesOnThreadWithIdsOfTheGridItExpandsTo) {
  nlohmann::json doc = older_results(small_grid({iocpbench::WorkloadKind::post, iocpbench::WorkloadKind::file, iocpbench::WorkloadKind::socket}));
  const std::string note = iocpbench::sweep::upgrade_completion_path(doc);
  EXPECT_NE(note.find("--completion-path"), std::string::npos) << note;
  EXPECT_NE(note.find("thread"), std::string::npos) << note;
  EXPECT_EQ(doc["sweep"]["workload_params"].value("completion_path", ""), "thread");
  // What the resume expands the file's grid to must meet the file's points one by one, or their
  // runs would be dropped (different ids) or mixed with port runs (same ids, other path).
  const auto grid = iocpbench::sweep::grid_from_json(doc["sweep"], "--resume");
  const auto specs = iocpbench::sweep::expand(grid, 2);
  ASSERT_EQ(specs.size(), doc["points"].size());
  std::size_t named = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const std::string id = iocpbench::sweep::point_id(specs[i]);
    EXPECT_EQ(doc["points"][i]["id"], id);
    if (specs[i].workload != iocpbench::WorkloadKind::post) {
      EXPECT_EQ(doc["points"][i]["workload_params"]["completion_path"], "thread");
      EXPECT_NE(id.find("/cp=thread"), std::string::npos) << id;
      ++named;
    } else {
      EXPECT_EQ(id.find("/cp="), std::string::npos) << id;
    }
  }
  EXPECT_GT(named, 0u);
  EXPECT_EQ(iocpbench::sweep::upgrade_completion_path(doc), "") << "once is enough";
}

TEST(CompletionPathRecord, ANewFileAndAnOlderPortFileResumeOnPort) {
  iocpbench::sweep::Grid grid = small_grid({iocpbench::WorkloadKind::post, iocpbench::WorkloadKind::file});
  iocpbench::sweep::record_completion_path(grid);
  EXPECT_EQ(grid.workload_params.value("completion_path", ""), "port");
  nlohmann::json doc = older_results(grid);
  doc["sweep"]["workload_params"]["completion_path"] = "port";
  for (auto& p : doc["points"]) {
    if (p["workload"] != "post") p["workload_params"]["completion_path"] = "port";
    // An older file's explicit port: the older point_id named it for every workload, post
    // included (a post point's spec carries the grid's workload_params).
    p["id"] = p["id"].get<std::string>() + "/cp=port";
  }
  EXPECT_EQ(iocpbench::sweep::upgrade_completion_path(doc), "");
  const auto specs = iocpbench::sweep::expand(iocpbench::sweep::grid_from_json(doc["sweep"], "--resume"), 2);
  ASSERT_EQ(specs.size(), doc["points"].size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(doc["points"][i]["id"], iocpbench::sweep::point_id(specs[i])) << "no /cp= for the default";
  }
  iocpbench::sweep::Grid posts = small_grid({iocpbench::WorkloadKind::post});
  iocpbench::sweep::record_completion_path(posts);
  EXPECT_FALSE(posts.workload_params.contains("completion_path")) << "no I/O, nothing to record";
}

// ---- whole runs ----


iocpbench::engine::PointSpec lifo_spec(iocpbench::WorkloadKind workload, nlohmann::json params) {
  iocpbench::engine::PointSpec spec;
  spec.workload = workload;
  params["completion_path"] = "port";
  spec.workload_params = iocpbench::workloads::parse_workload_params(workload, params);
  spec.concurrency = {"N", 1, 0};
  spec.concurrency_value = iocpbench::platform::logical_cpus();
  spec.pool = iocpbench::core::CountSpec{"2N+2", 2, 2};
  spec.pool_value = 2 * iocpbench::platform::logical_cpus() + 2;
  spec.duration_s = 1.0;
  spec.warmup_s = 0.2;
  spec.work_us = 100;
  return spec;
}

void expect_iocp_signature(const iocpbench::engine::RunResult& r) {
  ASSERT_EQ(r.errors, 0u) << iocpbench::results::error_detail_json(r.error_detail).dump();
  ASSERT_GT(r.ops, 0u);
  EXPECT_NE(r.workload_stats.at("completion_source").at("design").get<std::string>().find(
                "read by the port itself"),
            std::string::npos);
  double top = 0;
  for (unsigned i = 0; i < iocpbench::platform::logical_cpus() && i < r.thread_shares.size(); ++i) top += r.thread_shares[i];
  EXPECT_GE(top, 0.95) << "the N busiest threads took " << top << " of the completions";
  EXPECT_LE(r.port_counters.max_active, iocpbench::platform::logical_cpus()) << "b = 0: no resume window, C <= M";
}

TEST(IoConformanceRun, FileLifoSignatureAndCap) {
  expect_iocp_signature(iocpbench::engine::run_point(
      lifo_spec(iocpbench::WorkloadKind::file, {{"file", iocpbench::test_support::test_data_file()}, {"file_size_mib", 16}, {"outstanding", 32}}),
      nullptr));
}

TEST(IoConformanceRun, SocketLifoSignatureAndCap) {
  const auto r =
      iocpbench::engine::run_point(lifo_spec(iocpbench::WorkloadKind::socket, {{"connections", 16}}), nullptr);
  expect_iocp_signature(r);
  EXPECT_NE(r.workload_stats.at("completion_source").at("design").get<std::string>().find(
                "readiness in epoll"),
            std::string::npos)
      << "the socket workload's receives wait by readiness by default";
}

}  // namespace
