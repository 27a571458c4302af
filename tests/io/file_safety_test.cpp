// File safety (docs/reliability.md) on every OS (Windows under Wine): the results-file lock (platform/file_lock.hpp) and
// the data file's rules (io/data_file.hpp), on real files in a fresh temporary folder.
// tests/integration/test_file_safety.py drives the same through the binary on Linux, with the
// cases that need another process (a second writer, a writer killed with SIGKILL).

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "core/errors.hpp"
#include "platform/file_lock.hpp"
#include "io/data_file.hpp"

namespace {

namespace fs = std::filesystem;
using iocpbench::BadInput;
using iocpbench::platform::FileLock;
using iocpbench::platform::try_lock_file;

class Folder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("iocpbench-file-safety-" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The flag of the BadInput that `call` throws, or "" when it throws none.
template <typename Call>
std::string refusal_flag(Call&& call) {
  try {
    call();
  } catch (const BadInput& bad) {
    return bad.flag;
  }
  return "";
}

using FileLockTest = Folder;

TEST_F(FileLockTest, ASecondTryIsBusyAndNamesTheHolder) {
  const fs::path lock = dir_ / "r.json.lock";
  auto first = try_lock_file(lock);
  ASSERT_TRUE(first.lock.held()) << first.error;
  std::optional<std::uint64_t> pid;
  ASSERT_TRUE(iocpbench::platform::parse_lock_file_text(read_text(lock), pid));
  ASSERT_TRUE(pid.has_value()) << "the lock file names its holder";
  auto second = try_lock_file(lock);
  EXPECT_FALSE(second.lock.held());
  EXPECT_TRUE(second.busy);
  EXPECT_EQ(second.holder_pid, pid);
  std::string problem;
  const FileLock refused = iocpbench::platform::lock_results_file(dir_ / "r.json", problem);
  EXPECT_FALSE(refused.held());
  EXPECT_NE(problem.find("another iocpbench process (pid " + std::to_string(*pid)),
            std::string::npos)
      << problem;
}

TEST_F(FileLockTest, ReleaseRemovesTheFileAndFreesTheLock) {
  const fs::path lock = dir_ / "r.json.lock";
  {
    auto attempt = try_lock_file(lock);
    ASSERT_TRUE(attempt.lock.held());
    FileLock moved = std::move(attempt.lock);
    EXPECT_FALSE(attempt.lock.held());
    EXPECT_TRUE(moved.held());
  }
  EXPECT_FALSE(fs::exists(lock));
  auto again = try_lock_file(lock);
  EXPECT_TRUE(again.lock.held()) << again.error;
}

TEST_F(FileLockTest, AStaleLockFileBlocksNothing) {
  const fs::path lock = dir_ / "r.json.lock";
  write_text(lock, "iocpbench pid 4000000001\n");  // left by a holder that died
  auto attempt = try_lock_file(lock);
  ASSERT_TRUE(attempt.lock.held()) << attempt.error;
  EXPECT_EQ(read_text(lock).find("4000000001"), std::string::npos) << "the stale pid replaced";
}

TEST_F(FileLockTest, AForeignFileAtTheLockNameIsNeverWritten) {
  const fs::path lock = dir_ / "r.json.lock";
  write_text(lock, "my own notes\n");
  auto attempt = try_lock_file(lock);
  EXPECT_FALSE(attempt.lock.held());
  EXPECT_FALSE(attempt.busy);
  EXPECT_NE(attempt.error.find("not an iocpbench lock file"), std::string::npos) << attempt.error;
  EXPECT_EQ(read_text(lock), "my own notes\n");
}

TEST(FileLockText, ParsesOnlyItsOwnFormat) {
  std::optional<std::uint64_t> pid;
  EXPECT_TRUE(iocpbench::platform::parse_lock_file_text("iocpbench pid 42\n", pid));
  EXPECT_EQ(pid, 42u);
  EXPECT_TRUE(iocpbench::platform::parse_lock_file_text("", pid));
  EXPECT_FALSE(pid.has_value());
  EXPECT_FALSE(iocpbench::platform::parse_lock_file_text("iocpbench pid x\n", pid));
  EXPECT_FALSE(iocpbench::platform::parse_lock_file_text("hello\n", pid));
  EXPECT_EQ(iocpbench::platform::lock_file_text(7), "iocpbench pid 7\n");
}

using DataFileTest = Folder;

iocpbench::io::DataFileRequest request_for(const fs::path& path, std::uint64_t create_bytes) {
  iocpbench::io::DataFileRequest r;
  r.path = path.string();
  r.named = true;
  r.create_bytes = create_bytes;
  r.block_bytes = 4096;
  r.direct = false;  // the temporary folder may refuse direct I/O; the binary tests cover it
  return r;
}

TEST_F(DataFileTest, ACreatedFileHasAMarkerAndIsNeverResizedLater) {
  auto r = request_for(dir_ / "new.dat", 1 << 20);
  const auto made = iocpbench::io::prepare_data_file(r);
  EXPECT_TRUE(made.created && made.created_now);
  EXPECT_EQ(fs::file_size(r.path), 1u << 20);
  EXPECT_TRUE(fs::exists(iocpbench::io::data_file_marker(r.path)));
  EXPECT_FALSE(fs::exists(r.path + ".lock")) << "the creation lock is released and removed";
  for (const auto& entry : fs::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name == "new.dat" || name == "new.dat.iocpbench")
        << name << ": no probe or temporary file left";
  }
  r.create_bytes = 2 << 20;
  r.writes = true;  // our own file: no --overwrite needed
  const auto reused = iocpbench::io::prepare_data_file(r);
  EXPECT_TRUE(reused.created);
  EXPECT_FALSE(reused.created_now);
  EXPECT_EQ(reused.bytes, 1u << 20);
  EXPECT_EQ(fs::file_size(r.path), 1u << 20) << "an existing --file keeps its size";
}

TEST_F(DataFileTest, WritingAUsersFileNeedsOverwrite) {
  const fs::path path = dir_ / "user.dat";
  write_text(path, std::string(64 << 10, 'u'));
  auto r = request_for(path, 1 << 20);
  EXPECT_EQ(refusal_flag([&] { iocpbench::io::check_data_file(r); }), "") << "reads are fine";
  const auto used = iocpbench::io::prepare_data_file(r);
  EXPECT_FALSE(used.created);
  EXPECT_EQ(used.bytes, 64u << 10) << "I/O stays within the file";
  r.writes = true;
  EXPECT_EQ(refusal_flag([&] { iocpbench::io::check_data_file(r); }), "--overwrite");
  r.overwrite = true;
  EXPECT_EQ(refusal_flag([&] { iocpbench::io::check_data_file(r); }), "");
  EXPECT_EQ(read_text(path), std::string(64 << 10, 'u'));
  EXPECT_FALSE(fs::exists(iocpbench::io::data_file_marker(path.string())));
}

TEST_F(DataFileTest, UnusablePathsAreRefusedNamingFile) {
  write_text(dir_ / "notes.txt", "my notes\n");
  fs::create_directories(dir_ / "folder");
  for (const fs::path& path : {dir_ / "notes.txt", dir_ / "folder", dir_ / "missing" / "x.dat"}) {
    auto r = request_for(path, 1 << 20);
    EXPECT_EQ(refusal_flag([&] { iocpbench::io::check_data_file(r); }), "--file") << path;
  }
  EXPECT_EQ(read_text(dir_ / "notes.txt"), "my notes\n");
  EXPECT_FALSE(fs::exists(dir_ / "missing"));
}

TEST_F(DataFileTest, OnlyOurOwnDefaultFileIsRecreated) {
  const fs::path path = dir_ / "iocpbench-1mib.dat";
  auto r = request_for(path, 1 << 20);
  r.named = false;  // the default data file
  iocpbench::io::prepare_data_file(r);
  fs::resize_file(path, 512 << 10);
  const auto remade = iocpbench::io::prepare_data_file(r);
  EXPECT_TRUE(remade.created_now) << "ours, of the wrong size: recreated";
  EXPECT_EQ(fs::file_size(path), 1u << 20);
  fs::remove(iocpbench::io::data_file_marker(path.string()));  // now nobody's: never replaced
  fs::resize_file(path, 512 << 10);
  const auto kept = iocpbench::io::prepare_data_file(r);
  EXPECT_FALSE(kept.created);
  EXPECT_EQ(kept.bytes, 512u << 10);
  EXPECT_EQ(fs::file_size(path), 512u << 10);
}

}  // namespace
