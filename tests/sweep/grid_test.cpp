#include <gtest/gtest.h>

#include <set>

#include "core/errors.hpp"
#include "sweep/grid.hpp"
#include "sweep/schedule.hpp"

namespace iocpbench::sweep {
namespace {

TEST(Grid, DefaultGridExpandsEveryCombinationWithSpecsKept) {
  Grid grid = default_grid();
  grid.ports = {port::Backend::emulated};
  const auto points = expand(grid, 2);
  EXPECT_EQ(points.size(), 3u * 3 * 3 * 4);
  std::set<std::string> ids;
  for (const auto& p : points) ids.insert(point_id(p));
  EXPECT_EQ(ids.size(), points.size()) << "point ids must be unique";
  const auto& last = points.back();
  EXPECT_EQ(last.workload, WorkloadKind::socket);
  EXPECT_EQ(last.concurrency.text, "2N");
  EXPECT_EQ(last.concurrency_value, 4u);
  EXPECT_EQ(last.pool.text, "2N+2");
  EXPECT_EQ(last.pool_value, 6u);
  EXPECT_DOUBLE_EQ(last.blocking_ratio, 0.75);
}

TEST(Grid, SameSpecsGiveSameIdsOnDifferentMachines) {
  Grid grid = quick_grid();
  grid.ports = {port::Backend::emulated};
  const auto small = expand(grid, 2), big = expand(grid, 64);
  ASSERT_EQ(small.size(), big.size());
  for (std::size_t i = 0; i < small.size(); ++i) {
    EXPECT_EQ(point_id(small[i]), point_id(big[i]));
    EXPECT_NE(small[i].pool_value, big[i].pool_value);
  }
}

TEST(Grid, JsonRoundTrip) {
  Grid grid = quick_grid();
  grid.ports = {port::Backend::emulated};
  grid.seed = 77;
  const Grid back = grid_from_json(grid_to_json(grid), "--grid");
  EXPECT_EQ(grid_to_json(back), grid_to_json(grid));
}

TEST(Grid, DispatchModelsSideBySideAndRoundTrip) {
  Grid grid = quick_grid();
  grid.ports = {port::Backend::emulated};
  grid.workloads = {WorkloadKind::post};
  const std::size_t shared_only = expand(grid, 2).size();
  EXPECT_EQ(grid_to_json(grid).count("dispatch"), 0u) << "the default stays out of the JSON";
  grid.dispatch = parse_dispatch_list("shared,per-thread", "--dispatch");
  const auto points = expand(grid, 2);
  // per-thread collapses the concurrency axis to "1": pools x ratios more points.
  EXPECT_EQ(points.size(), shared_only + grid.pool.size() * grid.blocking.size());
  std::set<std::string> ids;
  for (const auto& p : points) {
    ids.insert(point_id(p));
    if (p.dispatch == Dispatch::per_thread) {
      EXPECT_EQ(p.concurrency.text, "1");
      EXPECT_NE(point_id(p).find("/d=per-thread"), std::string::npos);
    } else {
      EXPECT_EQ(point_id(p).find("/d="), std::string::npos) << "shared ids unchanged";
    }
  }
  EXPECT_EQ(ids.size(), points.size());
  const Grid back = grid_from_json(grid_to_json(grid), "--grid");
  EXPECT_EQ(back.dispatch, grid.dispatch);
  EXPECT_EQ(grid_to_json(back), grid_to_json(grid));
  EXPECT_THROW(parse_dispatch_list("shared,diskspd", "--dispatch"), BadInput);
  // The kinds are parsed once, where the text comes in, naming the flag (exit 2 in the CLI).
  try {
    parse_blocking_kind_flag("spin", "--blocking-kind");
    ADD_FAILURE() << "spin accepted";
  } catch (const BadInput& bad) {
    EXPECT_EQ(bad.flag, "--blocking-kind");
    EXPECT_EQ(bad.reason, "'spin' is not sleep or io");
  }
  EXPECT_EQ(parse_blocking_kind_flag("io", "--blocking-kind"), BlockingKind::io);
  for (const auto w : {WorkloadKind::post, WorkloadKind::file, WorkloadKind::socket}) {
    EXPECT_EQ(parse_workload_kind(to_string(w)), w) << "the spelling reads back";
  }
  EXPECT_EQ(parse_dispatch(to_string(Dispatch::per_thread)), Dispatch::per_thread);
  EXPECT_STREQ(to_string(Dispatch::per_thread), "per-thread") << "the results file's spelling";
  EXPECT_FALSE(parse_workload_kind("disk"));
}

TEST(Grid, DequeueBatchIsAnAxisNamedInTheIdOnlyAboveOne) {
  Grid grid = quick_grid();
  grid.ports = {port::Backend::emulated};
  grid.workloads = {WorkloadKind::post};
  const auto unbatched = expand(grid, 2);
  EXPECT_EQ(grid_to_json(grid).count("dequeue_batch"), 0u) << "the default stays out of the JSON";
  for (const auto& p : unbatched) {
    EXPECT_EQ(p.dequeue_batch_value, 1u);
    EXPECT_EQ(point_id(p).find("/batch="), std::string::npos) << "ids from before batches unchanged";
  }
  grid.dequeue_batch = parse_dequeue_batch_list("1, 8, N", "--dequeue-batch");
  const auto points = expand(grid, 4);
  ASSERT_EQ(points.size(), 3 * unbatched.size());
  std::set<std::string> ids;
  std::set<unsigned> values;
  for (const auto& p : points) {
    ids.insert(point_id(p));
    values.insert(p.dequeue_batch_value);
    const bool named = point_id(p).find("/batch=" + p.dequeue_batch.text) != std::string::npos;
    EXPECT_EQ(named, p.dequeue_batch.text != "1") << point_id(p);
  }
  EXPECT_EQ(ids.size(), points.size()) << "batches keep points apart";
  EXPECT_EQ(values, (std::set<unsigned>{1, 4, 8})) << "N resolved on this machine";
  const Grid back = grid_from_json(grid_to_json(grid), "--grid");
  ASSERT_EQ(back.dequeue_batch.size(), 3u);
  EXPECT_EQ(back.dequeue_batch[2].text, "N");
  EXPECT_EQ(grid_to_json(back), grid_to_json(grid));
  // A --grid file may give the batches as numbers.
  nlohmann::json j = grid_to_json(grid);
  j["dequeue_batch"] = nlohmann::json::array({1, 16});
  EXPECT_EQ(grid_from_json(j, "--grid").dequeue_batch[1].text, "16");
}

TEST(Grid, DequeueBatchRefusesZeroAndMoreThanTheMaximum) {
  for (const char* bad : {"0", "1025", "8,0", "", "x", "-1"}) {
    try {
      parse_dequeue_batch_list(bad, "--dequeue-batch");
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const BadInput& e) {
      EXPECT_EQ(e.flag, "--dequeue-batch");
    }
  }
  EXPECT_EQ(parse_dequeue_batch_list("1024", "--dequeue-batch").front().offset, 1024);
  nlohmann::json j = grid_to_json(quick_grid());
  j["dequeue_batch"] = nlohmann::json::array({2000});
  EXPECT_THROW(grid_from_json(j, "--grid"), BadInput);
}

TEST(Grid, SkipOnSuccessGoesToFileAndSocketPointsAndIsNamedOnlyWhenAsked) {
  Grid grid = quick_grid();
  grid.ports = {port::Backend::emulated};
  grid.workloads = {WorkloadKind::post, WorkloadKind::file, WorkloadKind::socket};
  EXPECT_EQ(grid_to_json(grid).count("skip_on_success"), 0u) << "the default stays out of the JSON";
  for (const auto& p : expand(grid, 2)) {
    EXPECT_EQ(p.skip_on_success, SkipOnSuccess::by_default);
    EXPECT_EQ(point_id(p).find("/skip="), std::string::npos) << "ids as before the flag";
  }
  grid.skip_on_success = parse_skip_on_success_flag("off", "--skip-on-success");
  std::set<std::string> named;
  for (const auto& p : expand(grid, 2)) {
    const bool post = p.workload == WorkloadKind::post;
    EXPECT_EQ(p.skip_on_success, post ? SkipOnSuccess::by_default : SkipOnSuccess::off);
    const bool has = point_id(p).find("/skip=off") != std::string::npos;
    EXPECT_EQ(has, !post) << point_id(p);
    if (has) named.insert(to_string(p.workload));
  }
  EXPECT_EQ(named, (std::set<std::string>{"file", "socket"}));
  const Grid back = grid_from_json(grid_to_json(grid), "--grid");
  EXPECT_EQ(back.skip_on_success, SkipOnSuccess::off);
  EXPECT_EQ(grid_to_json(back), grid_to_json(grid));
  for (const char* bad : {"yes", "", "ON", "on,off"}) {
    try {
      parse_skip_on_success_flag(bad, "--skip-on-success");
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const BadInput& e) {
      EXPECT_EQ(e.flag, "--skip-on-success");
    }
  }
  EXPECT_EQ(parse_skip_on_success_flag("default", "--skip-on-success"), SkipOnSuccess::by_default);
  EXPECT_EQ(parse_skip_on_success_flag("on", "--skip-on-success"), SkipOnSuccess::on);
}

TEST(Grid, SkipOnSuccessDefaultIsEachWorkloadsOwn) {
  EXPECT_TRUE(skip_on_success_asked(SkipOnSuccess::by_default, WorkloadKind::socket));
  EXPECT_FALSE(skip_on_success_asked(SkipOnSuccess::by_default, WorkloadKind::file));
  EXPECT_TRUE(skip_on_success_asked(SkipOnSuccess::on, WorkloadKind::file));
  EXPECT_FALSE(skip_on_success_asked(SkipOnSuccess::off, WorkloadKind::socket));
}

TEST(Grid, PlacementsAreNamedInTheIdAndTheGridOnlyWhenTheyPin) {
  Grid grid = quick_grid();
  grid.ports = {port::Backend::emulated};
  grid.workloads = {WorkloadKind::post};
  EXPECT_EQ(grid_to_json(grid).count("affinity"), 0u) << "the default stays out of the JSON";
  EXPECT_EQ(grid_to_json(grid).count("load_affinity"), 0u);
  const auto unpinned = expand(grid, 4);
  for (const auto& p : unpinned) {
    EXPECT_FALSE(p.affinity.pins());
    EXPECT_EQ(point_id(p).find("affinity"), std::string::npos) << "ids from before placements unchanged";
  }
  grid.affinity = parse_placement_text("compact", "--grid");
  grid.load_affinity = parse_placement_text("0,2-3", "--grid");
  const auto pinned = expand(grid, 4);
  ASSERT_EQ(pinned.size(), unpinned.size()) << "one placement for the grid, not an axis";
  for (std::size_t i = 0; i < pinned.size(); ++i) {
    EXPECT_EQ(pinned[i].affinity.text, "compact");
    EXPECT_EQ(pinned[i].load_affinity.list, (platform::CpuSet{0, 2, 3}));
    // Before the completion path, which --resume's upgrade cuts from the end.
    EXPECT_EQ(point_id(pinned[i]), point_id(unpinned[i]) + "/affinity=compact/load-affinity=0,2-3");
  }
  const nlohmann::json j = grid_to_json(grid);
  EXPECT_EQ(j.at("affinity"), "compact");
  EXPECT_EQ(j.at("load_affinity"), "0,2-3");
  const Grid back = grid_from_json(j, "--grid");
  EXPECT_EQ(back.affinity.text, "compact");
  EXPECT_EQ(back.load_affinity.list, (platform::CpuSet{0, 2, 3}));
  EXPECT_EQ(grid_to_json(back), j);
  nlohmann::json bad = j;
  bad["affinity"] = "compactly";
  try {
    grid_from_json(bad, "--grid");
    ADD_FAILURE() << "a bad placement in a --grid file accepted";
  } catch (const BadInput& e) {
    EXPECT_EQ(e.flag, "--grid");
    EXPECT_NE(e.reason.find("'compactly'"), std::string::npos) << e.reason;
  }
}

TEST(Grid, ListsRejectBadItemsNamingTheFlag) {
  try {
    parse_ratio_list("0,1", "--blocking");
    FAIL() << "1 is not in [0,1)";
  } catch (const BadInput& bad) {
    EXPECT_EQ(bad.flag, "--blocking");
  }
  EXPECT_THROW(parse_ratio_list("0.5,", "--blocking"), BadInput);
  EXPECT_THROW(parse_ratio_list("abc", "--blocking"), BadInput);
  EXPECT_THROW(parse_count_list("N,2N+", false, "--pool"), BadInput);
  EXPECT_THROW(parse_workload_list("post,disk", "--workload"), BadInput);
  EXPECT_THROW(parse_port_list("iocp", "--port"), BadInput);
  EXPECT_EQ(parse_count_list("0,N", true, "--concurrency").size(), 2u);
}

TEST(Schedule, EveryRunOnceRoundsInOrderShuffledWithinRounds) {
  const auto schedule = make_schedule(20, 3, 5, nullptr);
  ASSERT_EQ(schedule.size(), 60u);
  std::set<std::pair<std::size_t, unsigned>> seen;
  for (std::size_t i = 0; i < schedule.size(); ++i) {
    seen.insert({schedule[i].point, schedule[i].repetition});
    EXPECT_EQ(schedule[i].repetition, i / 20) << "rounds run in order";
  }
  EXPECT_EQ(seen.size(), 60u);
  bool shuffled = false;
  for (std::size_t i = 0; i < 20; ++i) shuffled |= schedule[i].point != i;
  EXPECT_TRUE(shuffled);
  const auto other_seed = make_schedule(20, 1, 6, nullptr);
  bool differs = false;
  for (std::size_t i = 0; i < 20; ++i) differs |= other_seed[i].point != schedule[i].point;
  EXPECT_TRUE(differs) << "another seed, another order";
}

TEST(Schedule, ResumeSkipsDoneRunsAndKeepsTheOrder) {
  const auto full = make_schedule(10, 2, 9, nullptr);
  const auto rest = make_schedule(10, 2, 9, [](std::size_t p, unsigned r) { return r == 0 && p < 5; });
  EXPECT_EQ(rest.size(), 15u);
  std::vector<RunSlot> expected;
  for (const auto& slot : full) {
    if (!(slot.repetition == 0 && slot.point < 5)) expected.push_back(slot);
  }
  ASSERT_EQ(rest.size(), expected.size());
  for (std::size_t i = 0; i < rest.size(); ++i) {
    EXPECT_EQ(rest[i].point, expected[i].point);
    EXPECT_EQ(rest[i].repetition, expected[i].repetition);
  }
}

// The id's path part, one rule for point_id and for --resume's rewrite of older ids.
TEST(PointId, CompletionPathSuffixOnlyForIoAndOnlyWhenNotTheDefault) {
  const nlohmann::json thread = {{"completion_path", "thread"}}, port = {{"completion_path", "port"}};
  EXPECT_EQ(completion_path_id_suffix(WorkloadKind::file, thread), "/cp=thread");
  EXPECT_EQ(completion_path_id_suffix(WorkloadKind::socket, thread), "/cp=thread");
  EXPECT_EQ(completion_path_id_suffix(WorkloadKind::file, port), "") << "the default is not named";
  EXPECT_EQ(completion_path_id_suffix(WorkloadKind::socket, nlohmann::json::object()), "");
  EXPECT_EQ(completion_path_id_suffix(WorkloadKind::socket, nlohmann::json()), "") << "no params: none";
  EXPECT_EQ(completion_path_id_suffix(WorkloadKind::post, thread), "") << "post ids never name a path";
  engine::PointSpec spec;
  spec.workload = WorkloadKind::file;
  spec.workload_params = workloads::parse_workload_params(spec.workload, thread);
  const std::string id = point_id(spec);
  ASSERT_GE(id.size(), 10u);
  EXPECT_EQ(id.substr(id.size() - 10), "/cp=thread") << "point_id ends with the suffix";
}

}  // namespace
}  // namespace iocpbench::sweep
