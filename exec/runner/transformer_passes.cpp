// SPDX-License-Identifier: Apache-2.0
// RankRunner: forward and backward of this rank's model chunks, and the activations exchanged at
// chunk boundaries. With sequence parallelism (Korthikanti et al. 2022, section 4.2.2) a stage's
// activations between blocks are split by rows (tokens) over its TP ranks; between two such
// stages of equal TP each rank sends its own rows, otherwise the full activation is gathered.
#include <stdexcept>

#include "runner/rank_runner.hpp"
#include "runner/rank_runner_detail.hpp"
#include "runner/synthetic_data.hpp"

namespace hetsim::exec {

bool RankRunner::sequence_parallel(int stage) const {
  return plan_.sequence_parallel && layout_.stage_tp(place_.replica, stage) > 1;
}

int RankRunner::local_rows() const {
  return sequence_parallel(place_.stage) ? tokens_per_micro_batch_ / place_.tp : tokens_per_micro_batch_;
}

void RankRunner::tp_all_gather_rows(const float* local, float* full, int mb, int chunk, const char* phase,
                                    const char* op) {
  const std::size_t n = static_cast<std::size_t>(local_rows()) * model_.hidden;
  OpTimer t(*this, phase, op, OpClass::kTpComm, mb, chunk, bytes_shape(n * place_.tp));
  device_all_gather(local, full, n, layout_.tp_group(place_.replica, place_.stage));
}

void RankRunner::send_boundary(const float* local, int peer_stage, int tag, int mb, int chunk, const char* phase,
                               const char* op) {
  const int h = model_.hidden;
  const std::size_t local_n = static_cast<std::size_t>(local_rows()) * h;
  const std::size_t full_n = static_cast<std::size_t>(tokens_per_micro_batch_) * h;
  const bool me_sp = sequence_parallel(place_.stage), peer_sp = sequence_parallel(peer_stage);
  if (me_sp && peer_sp && layout_.stage_tp(place_.replica, peer_stage) == place_.tp) {
    OpTimer t(*this, phase, op, OpClass::kPpComm, mb, chunk, bytes_shape(local_n));
    device_send(local, local_n, layout_.rank_of(place_.replica, peer_stage, place_.tp_rank), tag);
    return;
  }
  DeviceArray<float> gathered;
  const float* full = local;
  if (me_sp) {
    gathered = DeviceArray<float>(backend_, full_n);
    tp_all_gather_rows(local, gathered.get(), mb, chunk, phase, "tp_ag_boundary");
    full = gathered.get();
  }
  OpTimer t(*this, phase, op, OpClass::kPpComm, mb, chunk, bytes_shape(full_n));
  for (int dst : layout_.p2p_destinations(place_.replica, place_.stage, place_.tp_rank, peer_stage)) {
    device_send(full, full_n, dst, tag);
  }
}

void RankRunner::recv_boundary(float* local, int peer_stage, int tag, int mb, int chunk, const char* phase,
                               const char* op) {
  const int h = model_.hidden;
  const std::size_t local_n = static_cast<std::size_t>(local_rows()) * h;
  const std::size_t full_n = static_cast<std::size_t>(tokens_per_micro_batch_) * h;
  const bool me_sp = sequence_parallel(place_.stage), peer_sp = sequence_parallel(peer_stage);
  const bool sliced = me_sp && peer_sp && layout_.stage_tp(place_.replica, peer_stage) == place_.tp;
  const int src = sliced ? layout_.rank_of(place_.replica, peer_stage, place_.tp_rank)
                         : layout_.p2p_source(place_.replica, peer_stage, place_.tp_rank);
  {
    // Waiting for the sender is pipeline bubble, not communication (models/report.hpp Breakdown).
    OpTimer w(*this, phase, std::string(op).append("_wait").c_str(), OpClass::kBubble, mb, chunk, "");
    comm_.probe(src, tag);
  }
  if (sliced) {
    OpTimer t(*this, phase, op, OpClass::kPpComm, mb, chunk, bytes_shape(local_n));
    device_recv(local, local_n, src, tag);
    return;
  }
  OpTimer t(*this, phase, op, OpClass::kPpComm, mb, chunk, bytes_shape(full_n));
  if (!me_sp) {
    device_recv(local, full_n, src, tag);
    return;
  }
  DeviceArray<float> full(backend_, full_n);
  device_recv(full.get(), full_n, src, tag);
  backend_.copy_bytes(local, full.get() + local_n * place_.tp_rank, local_n * sizeof(float));
}

void RankRunner::forward(int micro_batch, int chunk) {
  const ChunkPlace& cp = layout_.chunks(place_.replica, place_.stage)[chunk];
  const int t = tokens_per_micro_batch_;
  const int h = model_.hidden;
  auto* acts = new ChunkActs;
  saved_[{micro_batch, chunk}] = acts;
  acts->input = DeviceArray<float>(backend_, static_cast<std::size_t>(local_rows()) * h);
  if (zero3()) gather_chunk_weights(micro_batch, chunk, "forward");
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
    if (sequence_parallel(place_.stage)) {  // embed every token, keep this rank's rows
      DeviceArray<float> full(backend_, static_cast<std::size_t>(t) * h);
      backend_.embedding_forward(acts->tokens.get(), t, model_.seq_len, h, param("embed.wte"), param("embed.wpe"),
                                 full.get());
      backend_.copy_bytes(acts->input.get(), full.get() + acts->input.size() * place_.tp_rank,
                          acts->input.size() * sizeof(float));
    } else {
      backend_.embedding_forward(acts->tokens.get(), t, model_.seq_len, h, param("embed.wte"), param("embed.wpe"),
                                 acts->input.get());
    }
  } else {
    recv_boundary(acts->input.get(), layout_.stage_of_model_chunk(place_.replica, cp.model_chunk - 1),
                  RankLayout::activation_tag(cp.model_chunk), micro_batch, chunk, "forward", "recv_activation");
  }
  run_chunk_forward(*acts, micro_batch, chunk);
  if (cp.has_head) {
    head_forward(*acts, acts->output(), micro_batch, chunk);
  } else {
    send_boundary(acts->output(), layout_.stage_of_model_chunk(place_.replica, cp.model_chunk + 1),
                  RankLayout::activation_tag(cp.model_chunk + 1), micro_batch, chunk, "forward", "send_activation");
  }
  // Full recompute (Chen et al. 2016; Korthikanti et al. 2022): keep only the chunk input.
  if (plan_.recompute == models::Recompute::kFull) acts->layers.clear();
  if (zero3()) release_chunk_weights(chunk);
}

void RankRunner::run_chunk_forward(ChunkActs& acts, int micro_batch, int chunk) {
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
  if (zero3()) gather_chunk_weights(micro_batch, chunk, "backward");
  if (plan_.recompute == models::Recompute::kFull) {
    forward_phase_ = "backward";  // the rerun belongs to the backward pass
    run_chunk_forward(acts, micro_batch, chunk);
    forward_phase_ = "forward";
    if (zero3()) {  // released after the rerun and gathered again for the backward (zero3.cpp)
      release_chunk_weights(chunk);
      gather_chunk_weights(micro_batch, chunk, "backward");
    }
  }
  const std::size_t n = acts.input.size();
  DeviceArray<float> dout(backend_, n), din(backend_, n);
  if (cp.has_head) {
    head_backward(acts, dout.get(), micro_batch, chunk);
  } else {
    recv_boundary(dout.get(), layout_.stage_of_model_chunk(place_.replica, cp.model_chunk + 1),
                  RankLayout::gradient_tag(cp.model_chunk), micro_batch, chunk, "backward", "recv_gradient");
  }
  for (int l = cp.layers - 1; l >= 0; --l) {
    layer_backward(cp.first_layer + l, acts.layers[l], dout.get(), din.get(), micro_batch, chunk);
    std::swap(dout, din);
  }
  // dout now holds the gradient of the chunk input.
  if (cp.has_embedding) {
    const int t = tokens_per_micro_batch_;
    DeviceArray<float> full;
    const float* d = dout.get();
    if (sequence_parallel(place_.stage)) {
      full = DeviceArray<float>(backend_, static_cast<std::size_t>(t) * model_.hidden);
      tp_all_gather_rows(dout.get(), full.get(), micro_batch, chunk, "backward", "tp_ag_embedding");
      d = full.get();
    }
    OpTimer timer(*this, "backward", "embedding", OpClass::kCompute, micro_batch, chunk,
                  gemm_shape(t, model_.hidden, 1));
    backend_.embedding_backward(acts.tokens.get(), t, model_.seq_len, model_.hidden, d, grad("embed.wte"),
                                grad("embed.wpe"));
  } else {
    send_boundary(dout.get(), layout_.stage_of_model_chunk(place_.replica, cp.model_chunk - 1),
                  RankLayout::gradient_tag(cp.model_chunk - 1), micro_batch, chunk, "backward", "send_gradient");
  }
  if (reduces_in_backward(micro_batch)) reduce_chunk_gradients(micro_batch, chunk);
  if (zero3()) release_chunk_weights(chunk);
  delete it->second;
  saved_.erase(it);
}

}  // namespace hetsim::exec
