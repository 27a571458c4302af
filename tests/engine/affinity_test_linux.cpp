// Placement in real runs (engine/affinity.hpp), on Linux where the pins can be read back: a
// run's workers and its load generator's threads are pinned where the placement says and the
// record holds what the OS read back, as the point's JSON does; none calls nothing; the flags'
// bad values are BadInput naming the flag.

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "engine/affinity.hpp"
#include "engine/run_point.hpp"
#include "platform/thread_affinity.hpp"
#include "results/write.hpp"

namespace {

using namespace iocpbench;

engine::PointSpec pinned_post_point() {
  engine::PointSpec spec;
  spec.workload = WorkloadKind::post;
  spec.workload_params = iocpbench::workloads::parse_workload_params(spec.workload, {{"posters", 2}, {"in_flight", 64}});
  spec.port = port::Backend::emulated;
  spec.concurrency = {"2", 0, 2};
  spec.concurrency_value = 2;
  spec.pool = core::CountSpec{"3", 0, 3};
  spec.pool_value = 3;
  spec.work_us = 5;
  spec.duration_s = 0.1;
  spec.warmup_s = 0.02;
  return spec;
}

platform::CpuSet allowed() {
  std::string why;
  return platform::allowed_cpus(why).value_or(platform::CpuSet{});
}

BadInput bad_input_of(const std::string& text, const std::string& flag) {
  try {
    engine::parse_affinity_flag(text, flag);
  } catch (const BadInput& e) {
    return e;
  }
  ADD_FAILURE() << "'" << text << "' accepted";
  return {};
}

TEST(Affinity, ARunPinsItsWorkersAndLoadThreadsAndRecordsTheCpusReadBack) {
  const platform::CpuSet cpus = allowed();
  ASSERT_FALSE(cpus.empty());
  engine::PointSpec spec = pinned_post_point();
  spec.affinity = engine::parse_affinity_flag(std::to_string(cpus.front()), "--affinity");
  spec.load_affinity = engine::parse_affinity_flag("spread", "--load-affinity");
  const engine::RunResult r = engine::run_point(spec, nullptr);
  ASSERT_GT(r.ops, 0u);
  const engine::PlacementRecord& workers = r.affinity.workers;
  EXPECT_EQ(workers.spec, std::to_string(cpus.front()));
  EXPECT_EQ(workers.order, "list");
  ASSERT_TRUE(workers.cpus);
  ASSERT_EQ(workers.cpus->size(), 3u) << "one per worker";
  for (const auto& cpu : *workers.cpus) EXPECT_EQ(cpu, cpus.front());
  const engine::PlacementRecord& load = r.affinity.load;
  EXPECT_EQ(load.spec, "spread");
  ASSERT_TRUE(load.cpus);
  EXPECT_EQ(load.threads, (std::vector<std::string>{"poster 0", "poster 1"}));
  const platform::Placement spread = engine::affinity_placement(spec.load_affinity, "--load-affinity");
  ASSERT_EQ(load.cpus->size(), 2u);
  EXPECT_EQ((*load.cpus)[0], spread.cpu_for(0));
  EXPECT_EQ((*load.cpus)[1], spread.cpu_for(1));

  const nlohmann::json point = results::to_json(results::point_result(spec, {r}));
  EXPECT_EQ(point.at("affinity").at("workers").at("cpus"), nlohmann::json({cpus.front(), cpus.front(), cpus.front()}));
  EXPECT_EQ(point.at("affinity").at("load").at("threads"), nlohmann::json({"poster 0", "poster 1"}));
}

TEST(Affinity, NonePinsNothingAndRecordsNoCpus) {
  const engine::PointSpec spec = pinned_post_point();
  const engine::RunResult r = engine::run_point(spec, nullptr);
  EXPECT_EQ(r.affinity.workers.spec, "none");
  EXPECT_FALSE(r.affinity.workers.cpus);
  EXPECT_FALSE(r.affinity.load.cpus);
  const nlohmann::json point = results::to_json(results::point_result(spec, {r}));
  EXPECT_EQ(point.at("affinity"),
            nlohmann::json::parse(R"({"workers": {"spec": "none", "order": null, "cpus": null},
                                      "load": {"spec": "none", "order": null, "cpus": null, "threads": null}})"));
}

TEST(Affinity, BadValuesAreBadInputNamingTheFlag) {
  const unsigned beyond = platform::online_cpus().back() + 1;
  const BadInput missing = bad_input_of(std::to_string(beyond), "--affinity");
  EXPECT_EQ(missing.flag, "--affinity");
  EXPECT_EQ(missing.reason.rfind("CPU " + std::to_string(beyond) + " does not exist (this machine has CPUs ", 0), 0u)
      << missing.reason;
  const BadInput unknown = bad_input_of("everywhere", "--load-affinity");
  EXPECT_EQ(unknown.flag, "--load-affinity");
  EXPECT_NE(unknown.reason.find("'everywhere' is not none, compact, spread or a CPU list"), std::string::npos);
  EXPECT_EQ(bad_input_of("1-0", "--affinity").flag, "--affinity");
}

TEST(Affinity, AThreadPlacerOfNoneDoesNothing) {
  engine::ThreadPlacer placer(engine::affinity_placement(platform::PlacementSpec{}, "--affinity"), "--affinity", 2);
  EXPECT_FALSE(placer.pins());
  placer.pin_current(0);
  EXPECT_FALSE(placer.record().cpus);
  EXPECT_EQ(placer.failure(), "");
}

}  // namespace
