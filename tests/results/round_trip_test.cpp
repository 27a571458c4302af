// Schema v1 has one owner (harness/results/): every results file the repository keeps
// (results/reference/, its before-blocking-fix/ copies, results/ablation/ and the analysis
// fixtures in tests/python/fixtures/) reads into a typed document and writes back as the same
// JSON document (nlohmann::json ==: the same keys and values, order aside). Nothing is
// normalised. The typed parts are checked too, so a field that only passed through `extra`
// would not go unnoticed.

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "results/read.hpp"
#include "results/write.hpp"

namespace {

namespace fs = std::filesystem;
using iocpbench::results::from_json;
using iocpbench::results::to_json;

nlohmann::json load(const fs::path& path) {
  std::ifstream in(path);
  nlohmann::json json;
  in >> json;
  return json;
}

// The results files (not the probe files beside them: no points, no schema_version).
std::vector<fs::path> results_files() {
  const fs::path root = IOCPBENCH_SOURCE_DIR;
  std::vector<fs::path> files;
  for (const char* dir : {"results/reference", "results/reference/before-blocking-fix",
                          "results/ablation", "tests/python/fixtures"}) {
    for (const auto& entry : fs::directory_iterator(root / dir)) {
      if (entry.path().extension() != ".json") continue;
      if (entry.path().filename().string().rfind("probe-", 0) == 0) continue;
      files.push_back(entry.path());
    }
  }
  return files;
}

TEST(ResultsRoundTrip, EveryFileInTheRepositoryWritesBackUnchanged) {
  const std::vector<fs::path> files = results_files();
  ASSERT_GE(files.size(), 8u) << "the reference files and fixtures are missing";
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const nlohmann::json original = load(path);
    const auto doc = from_json(original);
    EXPECT_EQ(to_json(doc), original);
    // The typed parts hold the file's values, not only its extras.
    EXPECT_EQ(doc.points.size(), original.at("points").size());
    EXPECT_TRUE(doc.extra.empty()) << doc.extra.dump();
    EXPECT_TRUE(doc.machine.extra.empty()) << doc.machine.extra.dump();
    EXPECT_EQ(doc.machine.info.hostname, original["machine"]["hostname"].get<std::string>());
    EXPECT_EQ(doc.tool.git, original["tool"]["git"].get<std::string>());
    ASSERT_TRUE(doc.sweep.complete.has_value());
    EXPECT_EQ(*doc.sweep.complete, original["sweep"]["complete"].get<bool>());
    for (std::size_t p = 0; p < doc.points.size(); ++p) {
      const auto& point = doc.points[p];
      EXPECT_TRUE(point.extra.empty()) << point.extra.dump();
      EXPECT_EQ(point.id, original["points"][p]["id"].get<std::string>());
      ASSERT_EQ(point.runs.size(), original["points"][p]["runs"].size());
      for (std::size_t r = 0; r < point.runs.size(); ++r) {
        EXPECT_EQ(point.runs[r].repetition(), original["points"][p]["runs"][r]["repetition"].get<unsigned>());
      }
    }
  }
}

// Read twice and written twice: the same document (from_json and to_json are inverses).
TEST(ResultsRoundTrip, ATypedDocumentReadsBackAsItself) {
  const fs::path fixture = fs::path(IOCPBENCH_SOURCE_DIR) / "tests/python/fixtures/auto_pool.json";
  const nlohmann::json once = to_json(from_json(load(fixture)));
  EXPECT_EQ(to_json(from_json(once)), once);
}

// The summary and the blocking fidelity of a point follow from its runs: recomputing them for
// a reference point (what --resume does) gives the file's values.
TEST(ResultsRoundTrip, SummariesRecomputeFromTheRuns) {
  const fs::path file = fs::path(IOCPBENCH_SOURCE_DIR) / "results/reference/linux-2cpu-kvm.json";
  auto doc = from_json(load(file));
  ASSERT_FALSE(doc.points.empty());
  for (auto& point : doc.points) {
    const nlohmann::json summary = point.summary;
    const auto fidelity = point.blocking_fidelity;
    iocpbench::results::summarize(point);
    EXPECT_EQ(point.summary, summary) << point.id.value_or("");
    EXPECT_EQ(point.blocking_fidelity, fidelity) << point.id.value_or("");
  }
}

TEST(ResultsRoundTrip, RefusesWhatIsNotSchemaV1) {
  EXPECT_THROW(from_json(nlohmann::json::array()), std::invalid_argument);
  EXPECT_THROW(from_json({{"schema_version", 2}, {"sweep", {}}, {"points", {}}, {"machine", {}}}),
               std::invalid_argument);
  EXPECT_THROW(from_json({{"schema_version", 1}, {"points", nlohmann::json::array()}}),
               std::invalid_argument);
}

}  // namespace
