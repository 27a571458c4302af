#pragma once
// The rules the conformance suite gives the emulated port: the faithful port unless
// conformance_main.cpp was started with --mutant=NAME (tests/port/mutants.cmake runs the suite
// once per mutant and requires it to fail).

#include "port/port_rules.hpp"

namespace iocpbench::port {

PortRules& conformance_rules();
// True when a mutant is under test: only the emulated backend is instantiated then.
bool conformance_mutant_selected();

}  // namespace iocpbench::port
