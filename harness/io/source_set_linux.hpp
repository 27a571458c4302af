#pragma once
// Linux only: the completion sources of one workload run (the rings of completion_source_linux.hpp), so
// that the file and socket workloads build, route, pump, count and describe them in one place.
//
// A shared port gets one source (with its completion thread, or read by the port itself on the
// port path). Per-thread dispatch (DiskSpd's model) gets one source per worker that owns a unit
// of work (a file slot, a connection), at most one per worker port: unit i goes to source
// i mod R, and worker w pumps source w itself (no completion thread), so a unit's I/O never
// leaves the thread that issued it. Workers beyond the unit count get no source.
//
// close() keeps the counters and the description, so that stats() and describe() still answer
// after the rings are gone (a workload writes its JSON after close()).

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/async_io.hpp"
#include "io/completion_source_linux.hpp"

namespace iocpbench::io {

struct SourceSetOptions {
  port::CompletionPort* port = nullptr;             // the shared port
  std::vector<port::CompletionPort*> worker_ports;  // per-thread dispatch; empty: shared
  metrics::RoleRegistry* roles = nullptr;
  std::size_t units = 1;           // slots or connections, numbered by IoOp::index
  unsigned ops_per_unit = 1;       // operations one unit keeps in flight at once, at most
  bool port_reads = false;         // SourceOptions::port_reads (shared port only)
  bool readiness_receives = false;  // SourceOptions::readiness_receives
  std::string unit_name = "slot";  // in the description: "slot i -> worker i mod S"
};

class SourceSet {
 public:
  SourceSet() = default;
  ~SourceSet() { close(); }
  SourceSet(const SourceSet&) = delete;
  SourceSet& operator=(const SourceSet&) = delete;

  // Starts the sources. Throws what make_completion_source throws.
  void open(const SourceSetOptions& options);
  // Snapshots the counters and the description, then stops every source (cancelling what is
  // still in flight). Idempotent.
  void close();
  bool live() const { return !sources_.empty(); }
  bool per_thread() const { return per_thread_; }

  // The source of an operation: its unit (IoOp::index) mod the number of sources.
  CompletionSource& source_for(const IoOp& op) { return *sources_[op.index % sources_.size()]; }
  void submit(IoOp& op) { source_for(op).submit(op); }

  // Per-thread dispatch: worker w reaps source w itself (port::WorkerIo::fetches / fetch).
  bool pumps(unsigned worker) const { return per_thread_ && worker < sources_.size(); }
  int pump(unsigned worker, unsigned wait_us) {
    return worker < sources_.size() ? sources_[worker]->pump(wait_us) : -1;
  }
  // Whether any source has operations in flight (false once closed).
  bool in_flight() const {
    for (const auto& source : sources_) {
      if (source->in_flight()) return true;
    }
    return false;
  }

  // The watchdog's counts (Transport::progress): false once closed.
  bool progress(TransportProgress& out) const {
    if (!live()) return false;
    const SourceStats s = stats();
    out.completions = s.completions;
    out.posted = s.posted;
    return true;
  }
  // Every source's counters summed (live), or as they were at close().
  SourceStats stats() const;
  std::size_t rings() const { return live() ? sources_.size() : closed_rings_; }
  std::string describe() const;
  // The results' `completion_source` block: design, rings and the summed counters.
  nlohmann::json to_json() const;

 private:
  std::string describe_live() const;

  std::vector<std::unique_ptr<CompletionSource>> sources_;
  bool per_thread_ = false;
  std::string unit_name_;
  std::size_t closed_rings_ = 0;
  SourceStats closed_stats_;
  std::string closed_description_;
};

// The Transport answers of a ring-backed transport (file_io_linux.cpp, socket_io_linux.cpp),
// over its SourceSet: `Base` is FileIo or SocketIo.
template <typename Base>
class RingTransport : public Base {
 public:
  std::uint64_t errors() const override { return sources_.stats().post_failures; }
  bool progress(TransportProgress& out) const override { return sources_.progress(out); }
  // The pool's view (port::WorkerIo). Per-thread dispatch: worker w reaps its own ring.
  bool fetches(unsigned worker) const override { return sources_.pumps(worker); }
  int fetch(unsigned worker, unsigned wait_us) override { return sources_.pump(worker, wait_us); }
  // The port path: the workers submit the I/O, which io_uring ties to the submitting thread
  // and cancels when it exits; any worker may have submitted what is in flight. (The thread
  // path's completion thread is the only submitter.)
  bool io_pending(unsigned) const override { return workers_submit_ && sources_.in_flight(); }
  // The workers' waits in their own rings (io_uring_enter calls that waited).
  std::uint64_t fetch_waits() const override {
    return sources_.per_thread() ? sources_.stats().parks : 0;
  }

 protected:
  void open_sources(const SourceSetOptions& options) {
    workers_submit_ = options.port_reads && options.worker_ports.empty();
    sources_.open(options);
  }

  SourceSet sources_;  // one ring, or one per worker port (per-thread dispatch)

 private:
  bool workers_submit_ = false;
};

}  // namespace iocpbench::io
