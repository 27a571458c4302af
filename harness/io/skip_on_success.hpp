#pragma once
// What a file or socket transport did with --skip-on-success in one run: the
// workload_stats.skip_on_success block, the same on every OS so the results read alike.
//
// Windows: FILE_SKIP_COMPLETION_PORT_ON_SUCCESS, asked for per handle with
// SetFileCompletionNotificationModes; an I/O that then succeeds at once queues no packet, and
// the issuer hands it to its worker (inline) or posts it into the port itself. Linux has no such
// mode: every completion is queued as a packet, nothing is asked and nothing granted.

#include <atomic>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/kinds.hpp"

namespace iocpbench::io {

struct SkipOnSuccessCounts {
  SkipOnSuccess requested = SkipOnSuccess::by_default;
  bool asked = false;          // the transport asked the OS for the mode
  unsigned handles = 0;        // handles that could take it (the file; the server sockets)
  unsigned granted = 0;        // ... on which the OS granted it
  unsigned not_asked_non_ifs = 0;  // sockets whose provider lacks IFS handles: not asked
  std::uint32_t refusal_error = 0;  // the last error of a refused SetFileCompletionNotificationModes
  // Over the whole run: I/Os that succeeded at once on a granted handle (no packet queued),
  // handed to the issuing worker to handle inline, or posted into the port by the issuer.
  std::atomic<std::uint64_t> immediate{0}, handled_inline{0}, posted_by_issuer{0};
};

// The block; `scope` says what the counts cover for this workload.
nlohmann::json to_json(const SkipOnSuccessCounts& counts, const char* scope);

}  // namespace iocpbench::io
