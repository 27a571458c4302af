#include "engine/affinity.hpp"

#include "core/errors.hpp"
#include "platform/thread_affinity.hpp"

namespace iocpbench::engine {

platform::PlacementSpec parse_affinity_flag(const std::string& text, const std::string& flag) {
  std::string why;
  const auto spec = platform::parse_placement(text, why);
  if (!spec) throw BadInput{flag, why};
  affinity_placement(*spec, flag);
  return *spec;
}

platform::Placement affinity_placement(const platform::PlacementSpec& spec, const std::string& flag) {
  if (!spec.pins()) return platform::Placement{spec, {}, {}};  // none: no question to the OS
  std::string why;
  auto placement = platform::place(spec, platform::this_machine_cpus(), why);
  if (!placement) throw BadInput{flag, why};
  // Checked before any run, so that the OS's refusal is bad input (exit 2, nothing written)
  // rather than a worker's failure halfway through a sweep.
  if (const std::string refused = platform::check_pinnable(placement->cycle); !refused.empty()) {
    throw BadInput{flag, refused};
  }
  return std::move(*placement);
}

ThreadPlacer::ThreadPlacer(platform::Placement placement, std::string flag, unsigned slots)
    : placement_(std::move(placement)), flag_(std::move(flag)), cpus_(slots) {}

unsigned ThreadPlacer::reserve(const std::string& name) {
  std::lock_guard lock(mutex_);
  cpus_.emplace_back();
  threads_.push_back(name);
  return static_cast<unsigned>(cpus_.size() - 1);
}

void ThreadPlacer::pin_current(unsigned index) {
  if (!pins()) return;
  const unsigned cpu = placement_.cpu_for(index);
  const std::string refused = platform::pin_current_thread(cpu);
  const auto back = refused.empty() ? platform::current_thread_cpus() : std::nullopt;
  std::lock_guard lock(mutex_);
  if (index >= cpus_.size()) cpus_.resize(index + 1);
  if (back && back->size() == 1) cpus_[index] = back->front();
  if (!refused.empty() && failure_.empty()) {
    const std::string who =
        index < threads_.size() ? threads_[index] : "worker " + std::to_string(index);
    failure_ = flag_ + ": " + who + " could not be pinned to CPU " + std::to_string(cpu) + ": " + refused;
  }
}

PlacementRecord ThreadPlacer::record() const {
  std::lock_guard lock(mutex_);
  PlacementRecord r;
  r.spec = placement_.spec.text;
  r.order = placement_.order;
  if (pins()) {
    r.cpus = cpus_;
    r.threads = threads_;
  }
  return r;
}

std::string ThreadPlacer::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

}  // namespace iocpbench::engine
