// Linux only: see source_set_linux.hpp.

#include "io/source_set_linux.hpp"

#include <algorithm>

namespace iocpbench::io {

void SourceSet::open(const SourceSetOptions& options) {
  close();
  per_thread_ = !options.worker_ports.empty();
  unit_name_ = options.unit_name;
  const std::size_t rings =
      per_thread_ ? std::min<std::size_t>(options.worker_ports.size(), options.units) : 1;
  // Units r, r+R, r+2R, ... share ring r.
  const auto units_per_ring = static_cast<unsigned>((options.units + rings - 1) / rings);
  for (std::size_t r = 0; r < rings; ++r) {
    SourceOptions source;
    source.port = per_thread_ ? options.worker_ports[r] : options.port;
    source.max_ops = options.ops_per_unit * units_per_ring;
    source.roles = options.roles;
    source.own_thread = !per_thread_;
    // Shared port only: per-thread ports are already read by their own worker (pump).
    source.port_reads = options.port_reads;
    source.readiness_receives = options.readiness_receives;
    sources_.push_back(make_completion_source(source));
  }
}

void SourceSet::close() {
  if (sources_.empty()) return;
  closed_stats_ = stats();
  closed_rings_ = sources_.size();
  closed_description_ = describe_live();
  sources_.clear();  // stops the completion threads; cancels anything left in flight
}

SourceStats SourceSet::stats() const {
  if (!live()) return closed_stats_;
  SourceStats sum;
  for (const auto& source : sources_) sum += source->stats();
  return sum;
}

std::string SourceSet::describe() const { return live() ? describe_live() : closed_description_; }

std::string SourceSet::describe_live() const {
  std::string text = sources_.front()->describe();
  if (per_thread_) {
    text = "per-thread ports: one ring per worker (" + unit_name_ +
           " i -> worker i mod S), submitted and reaped by that worker itself into its own "
           "port; " + text;
  }
  return text;
}

nlohmann::json SourceSet::to_json() const {
  const SourceStats s = stats();
  return {{"design", describe()},
          {"rings", rings()},
          {"completions", s.completions},
          {"posted", s.posted},
          {"io_uring_enter_calls", s.enters},
          {"parks", s.parks},
          {"doorbells", s.doorbells},
          {"max_batch", s.max_batch},
          {"post_failures", s.post_failures},
          {"dropped_at_stop", s.dropped_at_stop}};
}

}  // namespace iocpbench::io
