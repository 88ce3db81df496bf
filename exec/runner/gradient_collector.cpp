// SPDX-License-Identifier: Apache-2.0
// Gathers TP shards and DP replicas of named tensors onto rank 0.
#include "runner/gradient_collector.hpp"

#include "runner/parameters.hpp"

namespace hetsim::exec {
namespace {

// A shard counts once: TP-sharded tensors from every TP rank, replicated ones from TP rank 0,
// never the tied LM-head copy (its gradient equals the embedding's after the tie sync).
bool contributes(const ParamSpec& p, const RankPlace& place, int replica) {
  if (!p.canonical) return false;
  if (!p.tp_sharded && place.tp_rank != 0) return false;
  return replica == kSumReplicas || place.replica == replica;
}

}  // namespace

NamedTensors collect_named(const RankLayout& layout, const models::ModelSpec& model_in, const std::vector<float>& flat,
                           int replica, Communicator& comm) {
  models::ModelSpec model = model_in;
  if (model.kv_heads <= 0) model.kv_heads = model.heads;
  if (model.ffn_hidden <= 0) model.ffn_hidden = 4 * model.hidden;
  const int me = comm.get_rank();
  if (me != 0) {
    const RankParameters rp = rank_parameters(layout, model, me);
    for (const auto& p : rp.params) {
      if (!contributes(p, layout.place(me), replica)) continue;
      comm.send(flat.data() + p.offset, p.count(), 0, layout.collect_tag());
    }
    return {};
  }
  NamedTensors out;
  std::vector<float> buf;
  for (int r = 0; r < layout.get_world_size(); ++r) {
    const RankParameters rp = rank_parameters(layout, model, r);
    for (const auto& p : rp.params) {
      if (!contributes(p, layout.place(r), replica)) continue;
      const float* src = flat.data() + p.offset;
      if (r != 0) {
        buf.resize(p.count());
        comm.recv(buf.data(), p.count(), r, layout.collect_tag());
        src = buf.data();
      }
      auto& full = out[p.name];
      full.resize(static_cast<std::size_t>(p.full_rows) * p.full_cols, 0.0f);
      for (int i = 0; i < p.rows; ++i) {
        for (int j = 0; j < p.cols; ++j) {
          full[static_cast<std::size_t>(p.row_offset + i) * p.full_cols + p.col_offset + j] +=
              src[static_cast<std::size_t>(i) * p.cols + j];
        }
      }
    }
  }
  return out;
}

}  // namespace hetsim::exec
