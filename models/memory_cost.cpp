// SPDX-License-Identifier: Apache-2.0
// Memory per GPU of a pipeline stage.
#include "memory_cost.hpp"

#include <algorithm>

namespace hetsim::models {

StateBytes state_bytes_per_param(Dtype dtype, Optimizer optimizer, bool fp32_grad_allreduce) {
  const bool fp32 = dtype == Dtype::kFp32 || dtype == Dtype::kTf32;
  StateBytes b;
  if (fp32) {
    b.weights = 4;
    b.grads = 4;
    b.optimizer = optimizer == Optimizer::kAdam ? 8 : 4;
  } else {
    b.weights = 2;
    b.grads = dtype == Dtype::kFp16 && !fp32_grad_allreduce ? 2 : 4;
    b.optimizer = optimizer == Optimizer::kAdam ? 12 : 8;  // fp32 master + (m, v) or momentum
    if (dtype == Dtype::kFp8) b.weights += 1;            // fp8 copy of the weights (Transformer Engine)
  }
  return b;
}

double boundary_activation_bytes(const ModelSpec& m, int micro_batch, Dtype dtype) {
  return static_cast<double>(m.seq_len) * micro_batch * m.hidden * activation_bytes(dtype);
}

namespace {

struct Terms {
  double replicated = 0;  ///< bytes per token kept whole on every TP rank without SP
  double sharded = 0;     ///< bytes per token split across TP ranks
  double scores = 0;      ///< attention-score bytes per token (5as/h * h = 5as)
};

/// Per token, 16-bit, Korthikanti et al. 2022 §4.1 term by term.
Terms layer_terms(const ModelSpec& m, double act_bytes) {
  const double h = m.hidden, f = m.ffn_hidden, s = m.seq_len;
  const double kv = (m.kv_heads > 0 ? m.kv_heads : m.heads) * (h / m.heads);
  const double e = act_bytes;
  const double mask = m.has_dropout() ? 1.0 : 0.0;  // bytes of a dropout mask element
  Terms t;
  // LN inputs (2 x e h), dropout masks (2 x h bytes), inputs of QKV and of the MLP (2 x e h).
  t.replicated = 2 * e * h + 2 * mask * h + 2 * e * h;
  // Q, K, V (e(h + 2kv)), input of the projection (e h), MLP intermediates.
  const double mlp = m.activation == Activation::kSwiglu ? 3.0 * e * f : 2.0 * e * f;
  t.sharded = e * (h + 2 * kv) + e * h + mlp;
  // softmax output (e), dropout mask (1), dropout output (e) per score, a*s scores per token;
  // without dropout the context GEMM reads the softmax output itself.
  t.scores = (m.has_dropout() ? 2 * e + 1 : e) * m.heads * s;
  return t;
}

}  // namespace

double layer_working_bytes(const ModelSpec& m, double micro, int tp, bool sequence_parallel, bool flash,
                           double act_bytes) {
  const Terms t = layer_terms(m, act_bytes);
  const double tokens = m.seq_len * micro;
  const double repl = sequence_parallel ? t.replicated / tp : t.replicated;
  const double scores = flash ? 0 : t.scores / tp;
  return tokens * (repl + t.sharded / tp + scores);
}

double layer_activation_bytes(const ModelSpec& m, double micro, int tp, bool sequence_parallel,
                              Recompute recompute, bool flash, double act_bytes) {
  const double tokens = m.seq_len * micro;
  if (recompute == Recompute::kFull) {
    const double input = act_bytes * m.hidden * tokens;  // the checkpointed layer input
    return sequence_parallel ? input / tp : input;
  }
  return layer_working_bytes(m, micro, tp, sequence_parallel, flash || recompute == Recompute::kSelective,
                             act_bytes);
}

double in_flight_chunks(Schedule schedule, int stage, int pp, int micro_batches, int interleave) {
  const int v = std::max(1, interleave);
  switch (schedule) {
    case Schedule::kGpipe: return static_cast<double>(micro_batches) * v;
    case Schedule::k1f1b: return std::min(pp - stage, micro_batches);
    case Schedule::kInterleaved: {
      const int warmup = (pp - stage - 1) * 2 + (v - 1) * pp;
      return std::min(static_cast<double>(warmup) + 1, static_cast<double>(micro_batches) * v);  // no int product
    }
  }
  return micro_batches;
}

StageMemory stage_memory(const StageMemoryInput& in) {
  const ModelSpec& m = *in.model;
  StageMemory mem;
  const StateBytes sb = state_bytes_per_param(in.dtype, in.optimizer, in.fp32_grad_allreduce);
  const double dp = std::max(1, in.dp);
  const double vocab_per_rank = in.whole_vocab ? m.vocab : 1.0 * m.vocab / std::max(1, in.tp);  // embedding, head rows
  // ZeRO-1 shards optimizer states, ZeRO-2 also gradients, ZeRO-3 also weights (ZeRO §5).
  mem.optimizer = in.params * sb.optimizer / (in.zero >= 1 ? dp : 1.0);
  mem.grads = in.params * sb.grads / (in.zero >= 2 ? dp : 1.0);
  mem.weights = in.params * sb.weights / (in.zero >= 3 ? dp : 1.0);
  if (in.zero >= 3 && dp > 1) {
    // With one replica the weights are whole and nothing is gathered (the plan note says
    // ZeRO-3 changes nothing there; s51 plausibility hunt F6). Else gathered weights live beside the shard: the layer in use and the next one prefetched,
    // but DeepSpeed releases gathered weights beyond stage3_max_live_parameters (default 1e9;
    // DeepSpeed configuration docs, "ZeRO optimizations") and can only gather a tensor whole,
    // so the largest weight tensor (the MLP's, or the embedding on the end stages) in use and
    // the next one prefetched bound what is live from below.
    constexpr double kMaxLiveParameters = 1e9;
    const double layer_params = in.params / std::max(1, in.layers);
    const bool has_embedding = in.stage == 0 || in.stage == in.pp - 1;
    const double largest_tensor = std::max(1.0 * m.hidden * m.ffn_hidden / std::max(1, in.tp),
                                           has_embedding ? 1.0 * m.hidden * vocab_per_rank : 0.0);
    // Never more than the stage's whole weights: a stage of one layer and the embedding would
    // count the pair twice (s62 sanity hunt: ZeRO-3 above ZeRO-2 by two copies of its weights).
    const double live = std::min({2.0 * layer_params, std::max(kMaxLiveParameters, 2.0 * largest_tensor), in.params});
    mem.weights += live * sb.weights;
  }

  const double e = activation_bytes(in.dtype);
  const int v = std::max(1, in.interleave);
  const double per_layer =
      layer_activation_bytes(m, in.micro, in.tp, in.sequence_parallel, in.recompute, in.flash, e);
  const double chunks = in_flight_chunks(in.schedule, in.stage, in.pp, in.micro_batches, v);
  const double layers_per_chunk = static_cast<double>(in.layers) / v;
  double act = chunks * layers_per_chunk * per_layer;
  // Full recompute: the layer being recomputed holds its working set (Korthikanti et al. 2022,
  // §5), whose input is the checkpoint already counted above (the recompute reads it in place).
  if (in.recompute == Recompute::kFull && in.layers > 0)
    act += layer_working_bytes(m, in.micro, in.tp, in.sequence_parallel, in.flash, e) - per_layer;
  const double tokens = m.seq_len * in.micro;
  const double shard = in.sequence_parallel ? in.tp : 1.0;
  if (in.stage == 0)  // embedding output + dropout mask
    act += chunks * tokens * m.hidden * (e + (m.has_dropout() ? 1 : 0)) / shard;
  if (in.stage == in.pp - 1) {
    // Final LN input and head input, and the fp32 softmax of the logits kept for the backward
    // (Korthikanti §4.3: 4sbv/t). At the start of the backward, the loss gradient is computed in
    // place in that fp32 buffer (Megatron-LM tensor_parallel/cross_entropy.py,
    // _VocabParallelCrossEntropy.backward) and cast to the activation dtype for the LM head's
    // backward: e more bytes per logit for one micro-batch. The execution engine keeps the same
    // (its fp32 probabilities, then the logits' gradient beside them) for the whole vocabulary.
    const double last_in_flight = in.schedule == Schedule::kGpipe ? in.micro_batches : 1;
    act += last_in_flight * tokens * (2 * e * m.hidden / shard + 4.0 * vocab_per_rank) + tokens * e * vocab_per_rank;
  }
  mem.activations = act;
  mem.reserve = in.reserve_bytes;
  return mem;
}

}  // namespace hetsim::models
