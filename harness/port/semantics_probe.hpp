#pragma once
// Probes of the six scheduling properties that make a completion port an IOCP, each answered
// with the evidence that decided it. Every probe is bounded in time: a platform whose close does
// not wake its waiters (Wine) reports false instead of hanging.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "port/completion_port.hpp"

namespace iocpbench::port {

struct ProbeFinding {
  std::string name;  // fifo_packets, lifo_wakeup, ...
  bool value = false;
  std::string evidence;
};

using PortFactory = std::function<std::unique_ptr<CompletionPort>(unsigned concurrency)>;

std::vector<ProbeFinding> probe_semantics(const PortFactory& make);

}  // namespace iocpbench::port
