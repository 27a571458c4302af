// A file point's fio and DiskSpd command lines (harness/results/peer_commands.cpp): exact
// strings for a few parameter sets, the per-thread split and what the notes say.

#include <gtest/gtest.h>

#include "results/peer_commands.hpp"

namespace iocpbench::results {
namespace {

using workloads::FileOp;
using workloads::FilePattern;

TEST(PeerCommands, TheDefaultFileRandomDirectReads) {
  FileJob job;
  job.path = "/tmp/iocpbench-256mib.dat";
  job.duration_s = 0.7;
  job.warmup_s = 0.5;
  EXPECT_EQ(
      fio_command(job),
      "fio --name=iocpbench-file --filename=/tmp/iocpbench-256mib.dat --ioengine=io_uring "
      "--direct=1 "
      "--rw=randread --bs=4096 --iodepth=32 --numjobs=1 --norandommap --size=256M --time_based "
      "--runtime=700ms --ramp_time=500ms");
  EXPECT_EQ(
      diskspd_command(job),
      "diskspd.exe -b4096 -o32 -t1 -d1 -W1 -r -Su -w0 -n -L -c256M /tmp/iocpbench-256mib.dat");
}

TEST(PeerCommands, ANamedFileBufferedMixedSequentialOverThreads) {
  FileJob job;
  job.path = "/data/my file.dat";
  job.default_file = false;
  job.block_bytes = 65536;
  job.direct = false;
  job.op = FileOp::mixed;
  job.pattern = FilePattern::sequential;
  job.jobs = 4;
  job.depth_per_job = 8;
  job.duration_s = 2;
  job.warmup_s = 1;
  EXPECT_EQ(fio_command(job),
            "fio --name=iocpbench-file --filename='/data/my file.dat' --ioengine=io_uring "
            "--direct=0 --rw=rw "
            "--rwmixread=50 --bs=65536 --iodepth=8 --numjobs=4 --time_based --runtime=2000ms "
            "--ramp_time=1000ms "
            "--group_reporting");
  EXPECT_EQ(diskspd_command(job),
            "diskspd.exe -b65536 -o8 -t4 -d2 -W1 -si -w50 -n -L \"/data/my file.dat\"");
}

TEST(PeerCommands, RandomWritesQuoteAQuote) {
  FileJob job;
  job.path = "/d/it's.dat";
  job.default_file = false;
  job.op = FileOp::write;
  job.depth_per_job = 1;
  job.duration_s = 3;
  job.warmup_s = 0;
  EXPECT_EQ(fio_command(job),
            "fio --name=iocpbench-file --filename='/d/it'\\''s.dat' --ioengine=io_uring --direct=1 "
            "--rw=randwrite "
            "--bs=4096 --iodepth=1 --numjobs=1 --norandommap --time_based --runtime=3000ms");
  EXPECT_EQ(diskspd_command(job),
            "diskspd.exe -b4096 -o1 -t1 -d3 -W0 -r -Su -w100 -n -L /d/it's.dat");
}

engine::PointSpec file_spec() {
  engine::PointSpec spec;
  spec.workload = WorkloadKind::file;
  spec.pool_value = 3;
  spec.duration_s = 1;
  spec.warmup_s = 0.5;
  return spec;
}

TEST(PeerCommands, PerThreadDispatchSplitsTheSlotsAndSaysWhereUneven) {
  engine::PointSpec spec = file_spec();
  spec.dispatch = Dispatch::per_thread;
  workloads::FileParams params;
  params.path = "/f.dat";
  const auto peers = peer_commands(spec, workloads::WorkloadParams{WorkloadKind::file, params});
  ASSERT_TRUE(peers.has_value());
  EXPECT_NE(peers->fio.find("--iodepth=11 --numjobs=3"), std::string::npos) << peers->fio;
  EXPECT_NE(peers->diskspd.find("-o11 -t3"), std::string::npos) << peers->diskspd;
  ASSERT_EQ(peers->notes.size(), 2u);  // the uneven split, DiskSpd's whole seconds
  EXPECT_NE(peers->notes[0].find("unevenly"), std::string::npos);
}

TEST(PeerCommands, TheHandlerAndTheDefaultFileAreNamed) {
  engine::PointSpec spec = file_spec();
  spec.work_us = 100;
  spec.warmup_s = 1;
  const auto peers =
      peer_commands(spec, workloads::WorkloadParams{WorkloadKind::file, workloads::FileParams{}});
  ASSERT_TRUE(peers.has_value());
  EXPECT_NE(peers->fio.find("iocpbench-256mib.dat"), std::string::npos) << peers->fio;
  EXPECT_NE(peers->fio.find("--size=256M"), std::string::npos);
  ASSERT_EQ(peers->notes.size(), 1u);
  EXPECT_NE(peers->notes[0].find("work"), std::string::npos);
  const nlohmann::json j = to_json(*peers);
  EXPECT_EQ(j["fio"], peers->fio);
  EXPECT_EQ(j["diskspd"], peers->diskspd);
  EXPECT_EQ(j["notes"].size(), 1u);
}

TEST(PeerCommands, APinnedPoolIsNamedInTheNotes) {
  engine::PointSpec spec = file_spec();
  spec.warmup_s = 1;
  std::string why;
  spec.affinity = *platform::parse_placement("compact", why);
  const auto peers =
      peer_commands(spec, workloads::WorkloadParams{WorkloadKind::file, workloads::FileParams{}});
  ASSERT_TRUE(peers.has_value());
  ASSERT_EQ(peers->notes.size(), 1u);
  EXPECT_EQ(peers->notes[0].rfind("--affinity compact is not in the lines", 0), 0u) << peers->notes[0];
  EXPECT_NE(peers->diskspd.find(" -n "), std::string::npos) << "the lines themselves as without it";
}

TEST(PeerCommands, OnlyFilePoints) {
  engine::PointSpec spec = file_spec();
  spec.workload = WorkloadKind::post;
  EXPECT_FALSE(peer_commands(spec, workloads::WorkloadParams{}).has_value());
}

}  // namespace
}  // namespace iocpbench::results
