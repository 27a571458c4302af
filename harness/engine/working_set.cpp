#include "engine/working_set.hpp"

namespace iocpbench::engine {
namespace {
constexpr std::size_t kLineBytes = 64;
constexpr std::size_t kWordsPerLine = kLineBytes / sizeof(std::uint64_t);
}  // namespace

// Allocated (and so first touched) on the worker thread that owns it: its pages are local to
// that thread's NUMA node.
WorkingSet::WorkingSet(std::uint32_t kib) : words_(std::size_t{kib} * 1024 / sizeof(std::uint64_t)) {}

void WorkingSet::touch() noexcept {
  std::uint64_t* const words = words_.data();
  const std::size_t n = words_.size();
  for (std::size_t i = 0; i < n; i += kWordsPerLine) words[i] += 1;
  lines_touched_ += n / kWordsPerLine;
}

}  // namespace iocpbench::engine
