#include "run/pool.hpp"

#include <cmath>

#include "metrics/clock.hpp"
#include "platform/platform.hpp"
#include "port/blocking_region.hpp"
#include "run/blocking_io.hpp"

namespace iocpbench::run {

using workloads::kMeasuring;
using workloads::kStopKey;

Pool::Pool(std::vector<port::CompletionPort*> ports, workloads::Workload& workload,
           const HandlerSpec& handler, unsigned threads, metrics::RoleRegistry& roles,
           const std::atomic<int>& phase)
    : ports_(std::move(ports)),
      workload_(workload),
      handler_(handler),
      work_(handler.work_us),
      block_ns_target_(static_cast<std::uint64_t>(std::llround(handler.block_us() * 1e3))),
      roles_(roles),
      phase_(phase),
      stats_(threads) {}

Pool::~Pool() {
  stop();
}

void Pool::start() {
  threads_.reserve(stats_.size());
  for (unsigned i = 0; i < stats_.size(); ++i) threads_.emplace_back([this, i] { worker(i); });
  while (enrolled_.load(std::memory_order_acquire) < stats_.size()) std::this_thread::yield();
}

void Pool::stop() {
  if (stopped_) return;
  stopped_ = true;
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    port::Packet stop;
    stop.key = kStopKey;
    // false only if the port is closed, and then every remove fails
    ports_[ports_.size() == 1 ? 0 : i]->post(stop);
  }
  for (auto& thread : threads_) thread.join();
}

void Pool::block(WorkerStats& stats, workloads::WorkerContext& context, void* buffer) {
  port::BlockingRegion region;
  if (handler_.kind == BlockingKind::sleep) {
    platform::precise_sleep(std::chrono::nanoseconds(block_ns_target_));
    return;
  }
  // io: synchronous O_DIRECT reads of random blocks until the blocking time is reached (at
  // least one), so the achieved ratio can track b while every wait really is the device.
  const std::uint64_t begin = metrics::now_ns();
  const std::uint64_t blocks = handler_.io_file_bytes / handler_.io_block;
  do {
    const std::uint64_t offset = (context.next_random() % blocks) * handler_.io_block;
    if (!blocking_read(handler_.io_fd, buffer, handler_.io_block, offset))
      ++stats.block_read_errors;
    ++stats.block_reads;
  } while (metrics::now_ns() - begin < block_ns_target_);
}

void Pool::worker(unsigned index) {
  WorkerStats& stats = stats_[index];
  workloads::WorkerContext context;
  context.index = index;
  context.rng = 0x9E3779B97F4A7C15ull * (index + 1) | 1;
  roles_.enrol(metrics::Role::workers);
  const bool blocks = block_ns_target_ > 0;
  const bool works = work_.iterations() != 0 || blocks;
  void* buffer = nullptr;
  if (blocks && handler_.kind == BlockingKind::sleep) platform::set_fine_timer_slack();
  if (blocks && handler_.kind == BlockingKind::io) buffer = aligned_block(handler_.io_block);
  enrolled_.fetch_add(1, std::memory_order_release);

  port::CompletionPort& port = *ports_[ports_.size() == 1 ? 0 : index];
  const bool timed = handler_.metrics;
  // Per-thread ports where the worker reaps its own ring: take what its port holds, and when
  // it is empty pump the ring (which posts into this port), so no other thread is involved.
  const bool pumps = ports_.size() > 1 && workload_.pumps(index);
  for (;;) {
    port::Packet packet;
    port::RemoveStatus status = port.remove(packet, pumps ? port::Timeout{0} : port::kInfinite);
    if (pumps && status == port::RemoveStatus::timeout) {
      const int posted = workload_.pump(index, 2000);
      if (posted > 0) continue;
      if (posted < 0) {
        // Nothing in flight (start-up, drain): wait on the port for a stop packet, briefly.
        status = port.remove(packet, port::Timeout{1});
      }
      if (status == port::RemoveStatus::timeout) continue;
    }
    if (status != port::RemoveStatus::ok && status != port::RemoveStatus::io_failed) {
      ++stats.remove_failures;  // the port was closed under us: nothing more will come
      break;
    }
    if (packet.key == kStopKey) {
      ++stats.stop_packets;
      break;  // never remove again: each thread takes exactly one stop packet
    }
    // Clock reads per completion: at most two (remove, handler end), none with metrics off
    // and no handler work.
    const std::uint64_t t_remove = timed || works ? metrics::now_ns() : 0;
    const bool measuring = phase_.load(std::memory_order_relaxed) == kMeasuring;
    ++stats.packets_total;
    if (board_ != nullptr) {
      board_->took(index);
      board_->at(index, ProgressBoard::kInHandler);
    }
    const workloads::Completion c = workload_.on_packet(packet, context);

    std::uint64_t t_done = t_remove;  // no handler work: the remove time ends it (one read)
    if (works) {
      work_();
      if (blocks) {
        const std::uint64_t t_block = metrics::now_ns();
        if (board_ != nullptr) board_->at(index, ProgressBoard::kBlocking);
        block(stats, context, buffer);
        if (board_ != nullptr) board_->at(index, ProgressBoard::kInHandler);
        t_done = metrics::now_ns();
        if (measuring) {
          stats.work_ns += t_block - t_remove;
          stats.block_ns += t_done - t_block;
        }
      } else {
        t_done = metrics::now_ns();
        if (measuring) stats.work_ns += t_done - t_remove;
      }
    }

    if (c.counted) ++stats.handled_total;
    if (measuring) {
      if (c.error) ++stats.errors;
      if (c.counted && !c.error) {
        ++stats.completions;
        stats.bytes += c.bytes;
        if (timed && c.t_insert_ns != 0 && t_remove >= c.t_insert_ns) {
          stats.queue_delay.record(t_remove - c.t_insert_ns);
        }
        if (timed && c.t_start_ns != 0 && t_done >= c.t_start_ns) {
          stats.latency.record(t_done - c.t_start_ns);
        }
      }
    }
    workload_.after_handler(packet, c, t_done, context);
    if (board_ != nullptr) board_->at(index, ProgressBoard::kInPort);
  }
  if (board_ != nullptr) board_->at(index, ProgressBoard::kExited);
  free_block(buffer);
}

}  // namespace iocpbench::run
