#include "results/dequeue_batch_json.hpp"

namespace iocpbench::results {

nlohmann::json dequeue_batch_json(const engine::DequeueBatchRecord& record) {
  const engine::BatchSizes& sizes = record.sizes;
  nlohmann::json histogram = nlohmann::json::array();
  for (const engine::BatchSizes::Bucket& b : sizes.buckets()) {
    histogram.push_back({{"min_packets", b.min_packets}, {"max_packets", b.max_packets}, {"removes", b.removes}});
  }
  const nlohmann::json mean =
      sizes.removes() == 0 ? nlohmann::json()
                           : nlohmann::json(static_cast<double>(sizes.packets()) /
                                            static_cast<double>(sizes.removes()));
  return {{"requested", sizes.requested()},
          {"removes", sizes.removes()},
          {"packets", sizes.packets()},
          {"mean_packets_per_remove", mean},
          {"histogram", histogram},
          {"stop_packets_reposted", record.stop_packets_reposted},
          {"scope", "removes, packets, histogram: the measured window's removes that took packets "
                    "(every packet, counted completions or not); stop_packets_reposted: the whole run"}};
}

}  // namespace iocpbench::results
