#include <gtest/gtest.h>

#include "core/units.hpp"

namespace iocpbench::core {
namespace {

double seconds(const char* text) {
  std::string reason;
  auto value = parse_duration(text, 1, &reason);
  EXPECT_TRUE(value.has_value()) << text << ": " << reason;
  return value.value_or(-1);
}

std::string duration_refused(const char* text, double base_s = 1) {
  std::string reason;
  EXPECT_FALSE(parse_duration(text, base_s, &reason).has_value()) << text;
  return reason;
}

std::uint64_t bytes(const char* text, std::uint64_t base = 1) {
  std::string reason;
  auto value = parse_size(text, base, &reason);
  EXPECT_TRUE(value.has_value()) << text << ": " << reason;
  return value.value_or(0);
}

std::string size_refused(const char* text, std::uint64_t base = 1) {
  std::string reason;
  EXPECT_FALSE(parse_size(text, base, &reason).has_value()) << text;
  return reason;
}

TEST(Duration, APlainNumberKeepsTheFlagsOwnUnit) {
  EXPECT_EQ(seconds("0.7"), 0.7);
  EXPECT_EQ(seconds("2"), 2.0);
  std::string reason;
  EXPECT_EQ(parse_duration("100", 1e-6, &reason).value_or(-1), 100.0) << "--work-us 100 stays 100 us";
}

TEST(Duration, UnitsConvertExactly) {
  EXPECT_EQ(seconds("0.3s"), 0.3);
  EXPECT_EQ(seconds("500ms"), 0.5);
  EXPECT_EQ(seconds("2m"), 120.0);
  EXPECT_EQ(seconds("1h"), 3600.0);
  EXPECT_EQ(seconds("250us"), 0.00025);
  EXPECT_EQ(seconds(" 1.5 S "), 1.5) << "spaces and case do not matter";
  std::string reason;
  EXPECT_EQ(parse_duration("100us", 1e-6, &reason).value_or(-1), 100.0);
  EXPECT_EQ(parse_duration("0.1ms", 1e-6, &reason).value_or(-1), 100.0);
  EXPECT_EQ(parse_duration("2s", 1e-6, &reason).value_or(-1), 2e6);
}

TEST(Duration, UnknownUnitsAndBadNumbersAreRefusedWithTheReason) {
  EXPECT_NE(duration_refused("3fortnights").find("unknown unit 'fortnights'"), std::string::npos);
  EXPECT_NE(duration_refused("3fortnights").find("ms"), std::string::npos) << "names the units it knows";
  EXPECT_NE(duration_refused("5x").find("unknown unit"), std::string::npos);
  EXPECT_NE(duration_refused("ms").find("not a number"), std::string::npos);
  EXPECT_NE(duration_refused("").find("not a number"), std::string::npos);
  EXPECT_NE(duration_refused("-1s").find("non-negative"), std::string::npos);
  EXPECT_NE(duration_refused("inf").find("finite"), std::string::npos);
  EXPECT_NE(duration_refused("nan").find("finite"), std::string::npos);
}

TEST(Size, APlainNumberKeepsTheFlagsOwnUnit) {
  EXPECT_EQ(bytes("4096"), 4096u);
  EXPECT_EQ(bytes("256", 1u << 20), 256u) << "--file-size-mib 256 stays 256 MiB";
}

TEST(Size, UnitsArePowersOf1024) {
  EXPECT_EQ(bytes("4k"), 4096u);
  EXPECT_EQ(bytes("4K"), 4096u);
  EXPECT_EQ(bytes("4KiB"), 4096u);
  EXPECT_EQ(bytes("4kb"), 4096u);
  EXPECT_EQ(bytes("64MiB"), 64u << 20);
  EXPECT_EQ(bytes("1g"), 1u << 30);
  EXPECT_EQ(bytes("512b"), 512u);
  EXPECT_EQ(bytes("64MiB", 1u << 20), 64u);
  EXPECT_EQ(bytes("1GiB", 1u << 20), 1024u);
  EXPECT_EQ(bytes("2MiB", 1024), 2048u);
}

TEST(Size, UnknownUnitsAndFractionsAreRefused) {
  EXPECT_NE(size_refused("3fortnights").find("unknown unit 'fortnights'"), std::string::npos);
  EXPECT_NE(size_refused("4q").find("KiB"), std::string::npos) << "names the units it knows";
  EXPECT_NE(size_refused("1.5").find("whole number of bytes"), std::string::npos);
  EXPECT_NE(size_refused("4k", 1u << 20).find("whole number of MiB"), std::string::npos);
  EXPECT_NE(size_refused("-4k").find("non-negative"), std::string::npos);
  EXPECT_NE(size_refused("k").find("not a number"), std::string::npos);
}

}  // namespace
}  // namespace iocpbench::core
