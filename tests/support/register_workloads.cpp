// Linked into every test program that runs points: the built-in workloads registered with the
// engine before main() (the program does it in cli/main.cpp). An object file of the executable
// itself, so the linker cannot drop it as it could an unreferenced member of a static library.
#include "workloads/registry.hpp"

namespace {

const bool kRegistered = [] {
  iocpbench::workloads::register_builtin_workloads();
  return true;
}();

}  // namespace
