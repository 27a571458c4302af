#pragma once
// The bound on one step of a port test (a thread's remove, a close, a state waited for): past
// it the step has failed, so a wrong port fails its test instead of hanging it. Shared by the
// tests that make up port_test (one program, compiled as one unit: tests/CMakeLists.txt).

#include <chrono>

namespace iocpbench::port {

inline constexpr std::chrono::seconds kStepBound{10};

}  // namespace iocpbench::port
