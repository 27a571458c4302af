#include <gtest/gtest.h>

#include "core/count_spec.hpp"

namespace iocpbench::core {
namespace {

CountSpec parse_ok(const char* text, bool allow_zero = false) {
  std::string reason;
  auto spec = parse_count_spec(text, allow_zero, &reason);
  EXPECT_TRUE(spec.has_value()) << text << ": " << reason;
  return spec.value_or(CountSpec{});
}

TEST(CountSpec, ResolvesAgainstTheMachine) {
  EXPECT_EQ(parse_ok("N").resolve(2), 2u);
  EXPECT_EQ(parse_ok("2N").resolve(2), 4u);
  EXPECT_EQ(parse_ok("2N+2").resolve(2), 6u);
  EXPECT_EQ(parse_ok("2N+2").resolve(64), 130u);
  EXPECT_EQ(parse_ok("N-1").resolve(2), 1u);
  EXPECT_EQ(parse_ok("N-4").resolve(2), 1u) << "N-relative values are at least 1";
  EXPECT_EQ(parse_ok("7").resolve(64), 7u);
  EXPECT_EQ(parse_ok("0", true).resolve(8), 0u);
}

TEST(CountSpec, NormalisesTheText) {
  EXPECT_EQ(parse_ok(" 2n + 2 ").text, "2N+2");
  EXPECT_EQ(parse_ok("1N").text, "N");
  EXPECT_EQ(parse_ok("3N-1").text, "3N-1");
  EXPECT_EQ(parse_ok("04").text, "4");
}

TEST(CountSpec, RejectsMalformedSpecsWithAReason) {
  for (const char* bad : {"", "2N+", "N+-1", "-1", "x", "2.5N", "N2", "0N", "-N", "2N+2+2", "1e3",
                          "99999"}) {
    std::string reason;
    EXPECT_FALSE(parse_count_spec(bad, true, &reason).has_value()) << bad;
    EXPECT_FALSE(reason.empty()) << bad;
  }
  std::string reason;
  EXPECT_FALSE(parse_count_spec("0", false, &reason).has_value()) << "a pool of 0 threads";
}

}  // namespace
}  // namespace iocpbench::core
