// The conformance suite's main: plain GoogleTest; the backends under test are chosen in
// conformance_test.cpp (every backend built for this OS).
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
