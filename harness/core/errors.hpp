#pragma once
// The error every layer throws for bad input, kept free of CLI11 so that engine/, io/, sweep/
// and workloads/ need no CLI headers: cli/main.cpp turns it into one line naming the flag and exit 2.

#include <string>

namespace iocpbench {

// Bad input found after parsing (a flag's value, a --grid or --resume file, a value the machine
// refuses): one line on stderr, exit status 2. `flag` names what the user wrote ("--pool",
// "--resume"), `reason` says what is wrong with it.
struct BadInput {
  std::string flag;
  std::string reason;
};

}  // namespace iocpbench
