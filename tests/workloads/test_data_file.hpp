#pragma once
// The data file the real-I/O tests of workloads_test read: one per test process (ctest starts
// each test in its own), in a directory of its own under the temp directory, removed when the
// program ends.

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

#include <gtest/gtest.h>

namespace iocpbench::test_support {

inline std::string test_data_file() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("iocpbench-workloads-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / "data.bin").string();
}

class TestDataFileCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(test_data_file()).parent_path(), ec);
  }
};
// Registered once per program, whichever files include this.
inline const auto* const kTestDataFileCleanup = ::testing::AddGlobalTestEnvironment(new TestDataFileCleanup);

}  // namespace iocpbench::test_support
