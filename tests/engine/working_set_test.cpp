// engine/working_set: the per-thread buffer --working-set-kib touches on every packet.

#include <gtest/gtest.h>

#include "engine/working_set.hpp"

namespace iocpbench::engine {
namespace {

TEST(WorkingSet, TouchesEveryLineOnce) {
  WorkingSet set(4);  // 4 KiB = 64 lines of 64 bytes
  EXPECT_EQ(set.bytes(), 4096u);
  set.touch();
  EXPECT_EQ(set.lines_touched(), 64u);
  set.touch();
  EXPECT_EQ(set.lines_touched(), 128u);
}

TEST(WorkingSet, ZeroTouchesNothing) {
  WorkingSet set(0);
  EXPECT_EQ(set.bytes(), 0u);
  set.touch();
  EXPECT_EQ(set.lines_touched(), 0u);
}

}  // namespace
}  // namespace iocpbench::engine
