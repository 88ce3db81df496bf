// SPDX-License-Identifier: Apache-2.0
// The pipeline sends' load on each node's NICs, per (send, node): a dense table for the plans
// of every day, a hash map for very deep pipelines over many nodes, where the table would be
// sends x nodes entries of which a few per send are used (32,000 one-layer stages on 4,000
// nodes asked for 4 GB per table and ran out of memory).
#pragma once
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>

#include "scratch_vector.hpp"

namespace hetsim::models {

/// The tensors of one send leaving (or entering) a node, and those on its busiest rail; a flow of
/// a TP-t stage counts 1/t (Evaluation::boundary_out).
struct NicLoad {
  double tensors = 0, on_busiest_rail = 0;
};

class SendNodeLoads {
 public:
  /// Entries of a dense table at most (16 MiB of NicLoad); beyond, a hash map of the used ones.
  static constexpr std::size_t kMaxDenseEntries = std::size_t{1} << 20;

  /// Empties the loads for `sends` sends over `nodes` nodes, all zero; a table of more than
  /// `max_dense_entries` entries is kept as a hash map.
  void reset(std::size_t sends, std::size_t nodes, std::size_t max_dense_entries = kMaxDenseEntries) {
    nodes_ = nodes;
    active_ = true;
    dense_.clear();
    sparse_.clear();
    dense_mode_ = sends * nodes <= max_dense_entries;
    if (dense_mode_) dense_.assign(sends * nodes, NicLoad{});
  }
  /// No loads counted (count_pipeline_nic_senders found nothing to count).
  bool empty() const { return !active_; }

  /// The load of `send` at `node`, created zero when absent.
  NicLoad& at(std::size_t send, std::size_t node) {
    const std::size_t k = send * nodes_ + node;
    return dense_mode_ ? dense_[k] : sparse_[k];
  }
  /// The load of `send` at `node`, zero when absent.
  NicLoad get(std::size_t send, std::size_t node) const {
    const std::size_t k = send * nodes_ + node;
    if (dense_mode_) return dense_[k];
    const auto it = sparse_.find(k);
    return it == sparse_.end() ? NicLoad{} : it->second;
  }
  /// Calls f(send, node, load) for every entry (the dense table's zero ones too).
  template <class F>
  void for_each(F&& f) const {
    if (dense_mode_)
      for (std::size_t k = 0; k < dense_.size(); ++k) f(k / nodes_, k % nodes_, dense_[k]);
    else
      for (const auto& [k, load] : sparse_) f(k / nodes_, k % nodes_, load);
  }
  void swap(SendNodeLoads& other) noexcept {
    std::swap(nodes_, other.nodes_);
    std::swap(active_, other.active_);
    std::swap(dense_mode_, other.dense_mode_);
    dense_.swap(other.dense_);
    sparse_.swap(other.sparse_);
  }

 private:
  std::size_t nodes_ = 0;
  bool active_ = false, dense_mode_ = true;
  ScratchVector<NicLoad> dense_;  // the predictor's per-evaluation tables reuse their storage
  std::unordered_map<std::size_t, NicLoad> sparse_;
};

}  // namespace hetsim::models
