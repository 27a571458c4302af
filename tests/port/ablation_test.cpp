// The three ablation backends (the emulated port without one IOCP property): each is a real
// port under its own name, and `probe` reports exactly the property it removes as false, so a
// user who measures one knows what was taken away.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "port/completion_port.hpp"
#include "port/semantics_probe.hpp"

namespace iocpbench::port {
namespace {

struct Ablation {
  const char* name;
  const char* removed;  // the probe finding that must read false
};

class AblationTest : public ::testing::TestWithParam<Ablation> {};

TEST_P(AblationTest, NamedParsedAndMade) {
  const auto backend = parse_backend(GetParam().name);
  ASSERT_TRUE(backend.has_value());
  EXPECT_EQ(to_string(*backend), GetParam().name);
  EXPECT_TRUE(backend_available(*backend));
  auto port = make_port(*backend, {.concurrency = 2});
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->backend(), GetParam().name);
  EXPECT_EQ(port->concurrency(), 2u);
  EXPECT_NE(backend_names().find(GetParam().name), std::string::npos);
}

TEST_P(AblationTest, ProbeReportsExactlyTheRemovedPropertyFalse) {
  const Backend backend = *parse_backend(GetParam().name);
  const auto findings =
      probe_semantics([backend](unsigned m) { return make_port(backend, {.concurrency = m}); });
  ASSERT_EQ(findings.size(), 6u);
  for (const ProbeFinding& finding : findings) {
    const bool removed = finding.name == GetParam().removed;
    EXPECT_EQ(finding.value, !removed) << finding.name << ": " << finding.evidence;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ports, AblationTest,
    ::testing::Values(Ablation{"emulated-fifo-wakeup", "lifo_wakeup"},
                      Ablation{"emulated-no-cap", "concurrency_cap"},
                      Ablation{"emulated-no-block-release", "blocking_releases_waiter"}),
    [](const auto& param_info) {
      std::string name = param_info.param.name;
      for (char& c : name) c = c == '-' ? '_' : c;
      return name;
    });

// The faithful port, for contrast: every property holds.
TEST(AblationTest, TheEmulatedPortHasEveryProperty) {
  const auto findings = probe_semantics(
      [](unsigned m) { return make_port(Backend::emulated, {.concurrency = m}); });
  for (const ProbeFinding& finding : findings) {
    EXPECT_TRUE(finding.value) << finding.name << ": " << finding.evidence;
  }
}

}  // namespace
}  // namespace iocpbench::port
