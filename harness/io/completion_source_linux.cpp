// Linux only: which io_uring completion source a run gets (completion_source_linux.hpp). The
// two paths are in thread_source_linux.cpp and feed_source_linux.cpp; what they share, in
// uring_ring_linux.cpp.

#include "io/completion_source_linux.hpp"

#include <stdexcept>
#include <string>

#include "io/feed_source_linux.hpp"
#include "io/thread_source_linux.hpp"

namespace iocpbench::io {

std::unique_ptr<CompletionSource> make_completion_source(const SourceOptions& options) {
  if (!options.own_thread || !options.port_reads) return make_thread_source(options);
  std::string why;
  try {
    auto feed = std::make_unique<FeedSource>(options);
    if (feed->attach()) return feed;
    why = "the port takes no I/O feed";
  } catch (const std::runtime_error& e) {
    why = e.what();
  }
  // The thread path, saying why (describe()).
  return make_thread_source(options, "--completion-path port not available (" + why + "): ");
}

}  // namespace iocpbench::io
