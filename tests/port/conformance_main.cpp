// The conformance suite's main: plain GoogleTest, plus --mutant=NAME, which runs the suite
// against the emulated port with one kernel rule changed (port_rules.hpp). The backends under
// test are chosen in conformance_test.cpp (every backend built for this OS).
#include <gtest/gtest.h>

#include <cstdio>
#include <string_view>

#include "conformance_rules.hpp"

namespace iocpbench::port {
namespace {
PortRules g_rules;
bool g_mutant = false;
}  // namespace

PortRules& conformance_rules() { return g_rules; }
bool conformance_mutant_selected() { return g_mutant; }

// Before InitGoogleTest: it registers the parameterized tests, whose backends depend on this.
bool select_mutant(std::string_view name) {
  const auto rules = mutant_rules(name);
  if (!rules) return false;
  g_rules = *rules;
  g_mutant = true;
  return true;
}

}  // namespace iocpbench::port

int main(int argc, char** argv) {
  constexpr std::string_view kFlag = "--mutant=";
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--list-mutants") {
      for (const auto& mutant : iocpbench::port::mutants()) {
        std::printf("%.*s\n", static_cast<int>(mutant.name.size()), mutant.name.data());
      }
      return 0;
    }
    if (arg.starts_with(kFlag)) {
      if (!iocpbench::port::select_mutant(arg.substr(kFlag.size()))) {
        std::fprintf(stderr, "--mutant: unknown mutant '%s'\n", argv[i] + kFlag.size());
        return 2;
      }
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
