#pragma once
// Linux only: the thread path of completion_source_linux.hpp (thread_source_linux.cpp).

#include <memory>
#include <string>

#include "io/completion_source_linux.hpp"

namespace iocpbench::io {

// Starts the completion thread (or, with own_thread false, a ring its owner pumps). `note`
// goes in front of describe(): why this path was taken where another was asked for. Throws
// std::runtime_error when the OS refuses (with the reason).
std::unique_ptr<CompletionSource> make_thread_source(const SourceOptions& options,
                                                     const std::string& note = {});

}  // namespace iocpbench::io
