// SPDX-License-Identifier: Apache-2.0
// RankRunner: forward and backward of this rank's model chunks. A block follows Megatron-LM's
// tensor parallelism (Shoeybi et al. 2019, section 3, fig. 3): Q/K/V and the MLP up-projection
// are column parallel, the attention output and MLP down-projection row parallel, with one
// all-reduce after each in the forward (g) and one before each LayerNorm in the backward (f).
#include <stdexcept>

#include "runner/rank_runner.hpp"
#include "runner/rank_runner_detail.hpp"
#include "runner/synthetic_data.hpp"

namespace hetsim::exec {
void RankRunner::forward(int micro_batch, int chunk) {
  const ChunkPlace& cp = layout_.chunks(place_.replica, place_.stage)[chunk];
  const int t = tokens_per_micro_batch_;
  const int h = model_.hidden;
  auto* acts = new ChunkActs;
  saved_[{micro_batch, chunk}] = acts;
  acts->input = DeviceArray<float>(backend_, static_cast<std::size_t>(t) * h);
  if (cp.has_embedding || cp.has_head) {
    const int first = layout_.first_sequence(place_.replica, plan_.micro_batch) + micro_batch * plan_.micro_batch;
    const TokenBatch batch = synthetic_batch(options_.seed, first, plan_.micro_batch, model_.seq_len, model_.vocab);
    acts->tokens = DeviceArray<int>(backend_, batch.tokens.size());
    acts->targets = DeviceArray<int>(backend_, batch.targets.size());
    backend_.upload(acts->tokens.get(), batch.tokens.data(), batch.tokens.size());
    backend_.upload(acts->targets.get(), batch.targets.data(), batch.targets.size());
  }
  if (cp.has_embedding) {
    OpTimer timer(*this, "forward", "embedding", OpClass::kCompute, micro_batch, chunk, gemm_shape(t, h, 1));
    backend_.embedding_forward(acts->tokens.get(), t, model_.seq_len, h, param("embed.wte"), param("embed.wpe"),
                               acts->input.get());
  } else {
    const int src_stage = layout_.stage_of_model_chunk(cp.model_chunk - 1);
    OpTimer timer(*this, "forward", "recv_activation", OpClass::kPpComm, micro_batch, chunk,
                  bytes_shape(acts->input.size()));
    comm_.recv(acts->input.get(), acts->input.size(), layout_.p2p_source(place_.replica, src_stage, place_.tp_rank),
               RankLayout::activation_tag(cp.model_chunk));
  }
  run_chunk_forward(*acts, micro_batch, chunk, true);
  if (cp.has_head) {
    head_forward(*acts, acts->output(), micro_batch, chunk);
  } else {
    const int dst_stage = layout_.stage_of_model_chunk(cp.model_chunk + 1);
    OpTimer timer(*this, "forward", "send_activation", OpClass::kPpComm, micro_batch, chunk,
                  bytes_shape(acts->input.size()));
    for (int dst : layout_.p2p_destinations(place_.replica, place_.stage, place_.tp_rank, dst_stage)) {
      comm_.send(acts->output(), acts->input.size(), dst, RankLayout::activation_tag(cp.model_chunk + 1));
    }
  }
  // Full recompute (Chen et al. 2016; Korthikanti et al. 2022): keep only the chunk input.
  if (plan_.recompute == models::Recompute::kFull) acts->layers.clear();
}

void RankRunner::run_chunk_forward(ChunkActs& acts, int micro_batch, int chunk, bool) {
  const ChunkPlace& cp = layout_.chunks(place_.replica, place_.stage)[chunk];
  acts.layers.clear();
  acts.layers.resize(static_cast<std::size_t>(cp.layers));
  const float* x = acts.input.get();
  for (int l = 0; l < cp.layers; ++l) {
    LayerActs& la = acts.layers[l];
    la.out = DeviceArray<float>(backend_, acts.input.size());
    layer_forward(cp.first_layer + l, x, la.out.get(), la, micro_batch, chunk);
    x = la.out.get();
  }
}

void RankRunner::backward(int micro_batch, int chunk) {
  const ChunkPlace& cp = layout_.chunks(place_.replica, place_.stage)[chunk];
  auto it = saved_.find({micro_batch, chunk});
  if (it == saved_.end()) throw std::logic_error("backward before forward");
  ChunkActs& acts = *it->second;
  if (plan_.recompute == models::Recompute::kFull) run_chunk_forward(acts, micro_batch, chunk, true);
  const std::size_t n = acts.input.size();
  DeviceArray<float> dout(backend_, n), din(backend_, n);
  if (cp.has_head) {
    head_backward(acts, dout.get(), micro_batch, chunk);
  } else {
    const int src_stage = layout_.stage_of_model_chunk(cp.model_chunk + 1);
    OpTimer timer(*this, "backward", "recv_gradient", OpClass::kPpComm, micro_batch, chunk, bytes_shape(n));
    comm_.recv(dout.get(), n, layout_.p2p_source(place_.replica, src_stage, place_.tp_rank),
               RankLayout::gradient_tag(cp.model_chunk));
  }
  for (int l = cp.layers - 1; l >= 0; --l) {
    layer_backward(cp.first_layer + l, acts.layers[l], dout.get(), din.get(), micro_batch, chunk);
    std::swap(dout, din);
  }
  // dout now holds the gradient of the chunk input.
  if (cp.has_embedding) {
    OpTimer timer(*this, "backward", "embedding", OpClass::kCompute, micro_batch, chunk,
                  gemm_shape(tokens_per_micro_batch_, model_.hidden, 1));
    backend_.embedding_backward(acts.tokens.get(), tokens_per_micro_batch_, model_.seq_len, model_.hidden, dout.get(),
                                grad("embed.wte"), grad("embed.wpe"));
  } else {
    const int dst_stage = layout_.stage_of_model_chunk(cp.model_chunk - 1);
    OpTimer timer(*this, "backward", "send_gradient", OpClass::kPpComm, micro_batch, chunk, bytes_shape(n));
    for (int dst : layout_.p2p_destinations(place_.replica, place_.stage, place_.tp_rank, dst_stage)) {
      comm_.send(dout.get(), n, dst, RankLayout::gradient_tag(cp.model_chunk - 1));
    }
  }
  delete it->second;
  saved_.erase(it);
}

}  // namespace hetsim::exec
