// SPDX-License-Identifier: Apache-2.0
// Compute cost of the ops of a decoder layer, embedding and LM head, forward and backward.
#include "compute_cost.hpp"

#include <algorithm>
#include <cmath>

namespace hetsim::models {

DeviceRates DeviceRates::of(const GpuType& gpu, Dtype dtype) {
  DeviceRates d;
  d.peak_flops = gpu.peak(dtype);
  d.fp8 = dtype == Dtype::kFp8;
  d.unquantized_peak_flops = d.fp8 && gpu.supports(Dtype::kBf16) ? gpu.peak(Dtype::kBf16) : d.peak_flops;
  d.memory_Bps = gpu.memory_bandwidth_Bps;
  d.eff = gpu.efficiency;
  d.eff.gemm_efficiency = gpu.gemm_efficiency_in(dtype);
  return d;
}

DeviceRates DeviceRates::unquantized() const {
  DeviceRates u = *this;
  if (unquantized_peak_flops > 0) u.peak_flops = unquantized_peak_flops;
  u.fp8 = false;
  return u;
}

double gemm_efficiency(const DeviceRates& d, double work_flop) {
  return d.eff.gemm_efficiency * work_flop / (work_flop + d.eff.gemm_half_work_flop);
}

double gemm_grid_fill(double outputs, double full_outputs) {
  return full_outputs > 0 ? std::min(1.0, outputs / full_outputs) : 1.0;
}

double gemm_time(const DeviceRates& d, double m, double n, double k, double batch, double elem_bytes) {
  const double flop = 2.0 * m * n * k * batch;
  if (flop <= 0) return 0;
  const double rate = d.peak_flops * gemm_efficiency(d, flop) * k / (k + d.eff.gemm_k0) *
                      gemm_grid_fill(m * n * batch, d.eff.gemm_full_outputs);
  const double compute_s = flop / rate;
  const double bytes = (m * k + k * n + m * n) * batch * elem_bytes;
  const double memory_s = bytes / (d.memory_Bps * d.eff.gemm_memory());
  return std::max(compute_s, memory_s) + d.eff.kernel_launch_s;
}

double memory_time(const DeviceRates& d, double bytes, int kernels) {
  return bytes / (d.memory_Bps * d.eff.memory_efficiency) + kernels * d.eff.kernel_launch_s;
}

namespace {

/// Emits a GEMM (m x k)(k x n) times batch: its time, 1 kernel, its FLOPs.
void gemm(OpSink& sink, const char* name, const DeviceRates& d, const LayerShape& s, double m, double n,
          double k, double batch = 1) {
  sink.compute(name, gemm_time(d, m, n, k, batch, s.gemm_bytes), 1, 2.0 * m * n * k * batch);
}

/// Backward of a GEMM y = x W: dgrad dx = dy W^T (m x n)(n x k) and wgrad dW = x^T dy (k x m)(m x n),
/// twice the forward FLOPs (Narayanan et al. SC'21 §5.1); `bias` adds the bias-gradient reduction.
double gemm_backward_time(const DeviceRates& d, const LayerShape& s, double m, double n, double k, double batch = 1) {
  return gemm_time(d, m, k, n, batch, s.gemm_bytes) + gemm_time(d, k, n, m, batch, s.gemm_bytes);
}
void gemm_backward(OpSink& sink, const char* name, const DeviceRates& d, const LayerShape& s, double m,
                   double n, double k, double batch = 1, bool bias = false) {
  double t = gemm_backward_time(d, s, m, n, k, batch);
  int kernels = 2;
  if (bias && !s.engine_kernels) {  // the engine's linears have no bias (exec/runner/block_passes.cpp)
    t += memory_time(d, m * n * batch * s.act_bytes);
    ++kernels;
  }
  sink.compute(name, t, kernels, 4.0 * m * n * k * batch);
}

void memory_op(OpSink& sink, const char* name, const DeviceRates& d, double bytes, int kernels = 1) {
  sink.compute(name, memory_time(d, bytes, kernels), kernels, 0);
}

/// A pure stream (an add or a copy, no per-element arithmetic beyond it): the execution engine's
/// residual adds, residual-gradient copies and embedding loops (exec/cpu/cpu_norm_embedding.cpp,
/// exec/runner/block_passes.cpp), at the rate of the stream reference that `hetsim calibrate`
/// times (its axpy: EfficiencyModel::gemm_memory), not at the elementwise kernels' (LayerNorm,
/// GeLU: compute-bound loops on a CPU, several times slower). On a GPU both are the HBM rate.
void stream_op(OpSink& sink, const char* name, const DeviceRates& d, double bytes) {
  DeviceRates stream = d;
  stream.eff.memory_efficiency = d.eff.gemm_memory();
  memory_op(sink, name, stream, bytes);
}

/// Tokens of the local shard of norms/dropouts: all of them, or 1/t with sequence parallel.
double sp_tokens(const LayerShape& s) { return s.sequence_parallel ? s.tokens() / s.tp : s.tokens(); }

/// TP collective after a row-parallel GEMM (g in Shoeybi et al.): all-reduce, or reduce-scatter
/// with sequence parallel (Korthikanti et al. 2022 Fig. 5). `after_gemm`: the compute op just
/// emitted is that GEMM (OpSink::collective, beside_gemm).
void tp_reduce(OpSink& sink, const char* name, const LayerShape& s, bool after_gemm = true) {
  if (s.tp <= 1) return;
  const double bytes = s.tokens() * s.hidden * s.act_bytes;
  sink.collective(s.sequence_parallel ? OpKind::kTpReduceScatter : OpKind::kTpAllReduce, name, bytes, after_gemm);
}

/// Before a column-parallel GEMM (f): nothing forward, all-gather with sequence parallel.
/// `before_gemm`: the next compute op is that GEMM.
void tp_gather(OpSink& sink, const char* name, const LayerShape& s, bool before_gemm = true) {
  if (s.tp <= 1 || !s.sequence_parallel) return;
  sink.collective(OpKind::kTpAllGather, name, s.tokens() * s.hidden * s.act_bytes, before_gemm);
}

double qkv_width(const LayerShape& s) {
  const double head_dim = s.hidden / s.heads;
  return (s.hidden + 2.0 * s.kv_heads * head_dim) / s.tp;
}

/// Output widths of the separate GEMMs the execution engine runs where Megatron-LM multiplies by
/// one fused weight (exec/runner/block_passes.cpp: Q, K and V; SwiGLU's W1 and Wup). The same
/// FLOPs; the times differ where a narrower grid does not fill the device (gemm_grid_fill). A
/// fixed array: this is on the planner's per-evaluation path, which allocates nothing.
struct LinearParts {
  double widths[3] = {0, 0, 0};
  int count = 0;
};
LinearParts engine_qkv_parts(const LayerShape& s) {
  const double head_dim = s.hidden / s.heads, kv = s.kv_heads * head_dim / s.tp;
  return {{s.hidden / s.tp, kv, kv}, 3};
}
LinearParts engine_mlp_in_parts(const LayerShape& s) {
  if (s.swiglu) return {{s.ffn / s.tp, s.ffn / s.tp}, 2};
  return {{s.ffn / s.tp}, 1};
}

/// One op of the engine's GEMMs (m x k)(k x n_i) of `parts`, which share their input, forward or
/// backward (each backward: dgrad and wgrad, as gemm_backward; the engine's linears have no bias).
void engine_gemm_parts(OpSink& sink, const char* name, const DeviceRates& d, const LayerShape& s, double m,
                       const LinearParts& parts, double k, bool backward) {
  double t = 0, flop = 0;
  for (int i = 0; i < parts.count; ++i) {
    const double n = parts.widths[i];
    t += backward ? gemm_backward_time(d, s, m, n, k) : gemm_time(d, m, n, k, 1, s.gemm_bytes);
    flop += (backward ? 4.0 : 2.0) * m * n * k;
  }
  sink.compute(name, t, parts.count * (backward ? 2 : 1), flop);
}

/// The shape and rates of the 16-bit ops under FP8 training (attention core, LM head); the
/// shape and rates themselves otherwise.
LayerShape unquantized(const LayerShape& s) {
  LayerShape u = s;
  u.gemm_bytes = s.act_bytes;
  return u;
}

/// Transformer Engine's FP8 casts around the block linears (NVIDIA Transformer Engine docs,
/// "Using FP8 with Transformer Engine"; formats: Micikevicius et al., "FP8 Formats for Deep
/// Learning", 2022). Forward: the casts of QKV's and FC1's inputs are fused into the LayerNorms
/// and FC2's into the GeLU, leaving the projection's input (read 16-bit, write 1 byte). Backward:
/// each linear's output gradient is cast and transposed (read 16-bit, write 2 x 1 byte: Hopper's
/// FP8 GEMMs take only the TN layout) and its saved FP8 input transposed for wgrad (1 + 1 bytes).
void fp8_casts_forward(OpSink& sink, const DeviceRates& d, const LayerShape& s) {
  if (!d.fp8) return;
  memory_op(sink, "fp8_cast", d, s.tokens() * s.hidden / s.tp * (s.act_bytes + 1.0));
}

void fp8_casts_backward(OpSink& sink, const DeviceRates& d, const LayerShape& s) {
  if (!d.fp8) return;
  const double T = s.tokens(), h = s.hidden, t = s.tp;
  const double ffn_in = s.swiglu ? 2.0 * s.ffn : s.ffn;
  const double grad_outputs = T * (qkv_width(s) + h + ffn_in / t + h);  // QKV, proj, FC1, FC2
  const double inputs = T * (h + h / t + h + s.ffn / t);
  memory_op(sink, "fp8_cast_transpose", d, grad_outputs * (s.act_bytes + 2.0) + inputs * 2.0, 8);
}

/// Megatron-LM's fused scale-mask-softmax kernel runs only where
/// FusedScaleMaskSoftmax.is_kernel_available (megatron/model/fused_softmax.py) allows it: 16-bit
/// input, 16 < sk <= 4096, sq and sk multiples of 4, and attn_batches = b x heads per TP rank a
/// multiple of 4 and (causal mask) of the kernel's batches per block (get_batch_per_block in
/// scaled_upper_triang_masked_softmax.h: 128 threads a block, a warp of min(32, 2^ceil(log2 sk))
/// threads per row, two rows a warp when 2^ceil(log2 sk) <= 128). Elsewhere (FP32 training, or
/// e.g. TP 8 of 16 heads at micro-batch 1: b x np = 2) it takes the PyTorch path.
bool fused_softmax_available(const LayerShape& s) {
  if (s.engine_kernels) return true;  // the engine's causal_softmax kernel takes every shape
  if (s.act_bytes >= 4.0) return false;
  const long long sq = std::llround(s.seq), sk = sq;
  const long long attn_batches = std::llround(s.micro * s.heads / s.tp);
  if (!(16 < sk && sk <= 4096) || sq % 4 != 0 || attn_batches % 4 != 0) return false;
  int pow2 = 1;
  while (pow2 < sk) pow2 *= 2;
  const int warp = std::min(pow2, 32);
  const int batches_per_block = (128 / warp) * (pow2 <= 128 ? 2 : 1);
  return attn_batches % batches_per_block == 0;
}

/// Passes over the scores (bytes per score element) and kernels of the softmax step.
struct SoftmaxCost {
  double bytes_per_score;
  int kernels;
};

/// Fused: read the scores, write the probabilities. PyTorch path (forward_torch_softmax): FP32
/// input runs scale, masked_fill and softmax, a read and a write each (3 kernels); 16-bit input
/// runs them in FP32 (Megatron-LM sets attention_softmax_in_fp32 with its default
/// apply_query_key_layer_scaling) between a cast up and a cast down (5 kernels).
SoftmaxCost softmax_forward_cost(const LayerShape& s) {
  const double e = s.act_bytes;
  if (fused_softmax_available(s)) return {2.0 * e, 1};
  if (e >= 4.0) return {6.0 * e, 3};
  return {(e + 4.0) + 3 * 8.0 + (4.0 + e), 5};
}

/// Fused: read the probabilities and their gradient, write the input gradient. PyTorch path:
/// the autograd of each forward op: softmax backward (read output and gradient, write), the
/// masked_fill and scale gradients (read, write), and for 16-bit input the two casts.
SoftmaxCost softmax_backward_cost(const LayerShape& s) {
  const double e = s.act_bytes;
  if (fused_softmax_available(s)) return {3.0 * e, 1};
  if (e >= 4.0) return {7.0 * e, 3};
  return {(e + 4.0) + 12.0 + 2 * 8.0 + (4.0 + e), 5};
}

/// Attention core forward: QK^T, fused scale-mask-softmax, dropout, AV (Megatron-LM, non-flash;
/// Vaswani et al. 2017), or one FlashAttention kernel (causal: half the s^2 blocks; Dao 2022).
void attention_core_forward(const LayerShape& s, const DeviceRates& d, OpSink& sink) {
  const double heads = s.heads / s.tp, head_dim = s.hidden / s.heads;
  const double bh = s.micro * heads;
  if (s.flash) {
    const double flop = 4.0 * s.micro * s.seq * s.seq * s.hidden / s.tp * 0.5;
    const double rel = kFlashForwardRelEfficiency * d.eff.flash_scale;
    const double t = flop / (d.peak_flops * gemm_efficiency(d, flop) * rel) + d.eff.kernel_launch_s;
    sink.compute("flash_attn", t, 1, flop);
    return;
  }
  const double scores = bh * s.seq * s.seq;
  // Megatron-LM copies Q, K, V into the [b*np, s, hn] layout of its batched GEMMs and the
  // context back to [s, b, h]; the engine's strided batched GEMMs read and write them in place.
  if (!s.engine_kernels) memory_op(sink, "qkv_layout", d, 2.0 * s.tokens() * qkv_width(s) * s.act_bytes, 2);
  gemm(sink, "attn_scores", d, s, s.seq, s.seq, head_dim, bh);
  const SoftmaxCost softmax = softmax_forward_cost(s);
  memory_op(sink, "softmax", d, softmax.bytes_per_score * scores, softmax.kernels);
  if (s.dropout) memory_op(sink, "attn_dropout", d, scores * (2.0 * s.act_bytes + 1.0));
  gemm(sink, "attn_context", d, s, s.seq, head_dim, s.seq, bh);
  if (!s.engine_kernels) memory_op(sink, "context_layout", d, 2.0 * s.tokens() * s.hidden / s.tp * s.act_bytes);
}

void attention_core_backward(const LayerShape& s, const DeviceRates& d, OpSink& sink) {
  const double heads = s.heads / s.tp, head_dim = s.hidden / s.heads;
  const double bh = s.micro * heads;
  if (s.flash) {
    // Backward: 5 GEMM-like products against 2 forward, with the recomputation of the scores
    // (Dao, FlashAttention-2, §3.2): 2.5x the forward work.
    const double flop = 2.5 * 4.0 * s.micro * s.seq * s.seq * s.hidden / s.tp * 0.5;
    const double rel = kFlashBackwardRelEfficiency * d.eff.flash_scale;
    const double t = flop / (d.peak_flops * gemm_efficiency(d, flop) * rel) + 2 * d.eff.kernel_launch_s;
    sink.compute("flash_attn_bwd", t, 2, flop);
    return;
  }
  const double scores = bh * s.seq * s.seq;
  if (!s.engine_kernels) memory_op(sink, "context_layout_bwd", d, 2.0 * s.tokens() * s.hidden / s.tp * s.act_bytes);
  gemm_backward(sink, "attn_context_bwd", d, s, s.seq, head_dim, s.seq, bh);
  if (s.dropout) memory_op(sink, "attn_dropout_bwd", d, scores * (2.0 * s.act_bytes + 1.0));
  const SoftmaxCost softmax = softmax_backward_cost(s);
  memory_op(sink, "softmax_bwd", d, softmax.bytes_per_score * scores, softmax.kernels);
  gemm_backward(sink, "attn_scores_bwd", d, s, s.seq, s.seq, head_dim, bh);
  if (!s.engine_kernels) memory_op(sink, "qkv_layout_bwd", d, 2.0 * s.tokens() * qkv_width(s) * s.act_bytes, 2);
}

/// The residual add after attention and after the MLP: Megatron-LM's fused bias-dropout-add
/// reads the branch and the residual (and writes the dropout mask) and writes the sum; the
/// engine adds the branch in place (axpy, no bias, no dropout).
void residual_forward(OpSink& sink, const char* megatron_name, const DeviceRates& d, const LayerShape& s) {
  const double elements = sp_tokens(s) * s.hidden, e = s.act_bytes;
  if (s.engine_kernels) return stream_op(sink, "residual", d, 3.0 * elements * e);
  memory_op(sink, megatron_name, d, elements * (3.0 * e + (s.dropout ? 1.0 : 0.0)));
}

/// Its backward: the gradient passes to both the branch and the residual path (through the
/// dropout mask in Megatron-LM); the engine copies it once (the LayerNorm backward then adds the
/// branch's part to it).
void residual_backward(OpSink& sink, const char* megatron_name, const DeviceRates& d, const LayerShape& s) {
  const double elements = sp_tokens(s) * s.hidden, e = s.act_bytes;
  if (s.engine_kernels) return stream_op(sink, "residual_bwd", d, 2.0 * elements * e);
  memory_op(sink, megatron_name, d, elements * (2.0 * e + (s.dropout ? 1.0 : 0.0)));
}

}  // namespace

void emit_layer_forward(const LayerShape& s, const DeviceRates& d, OpSink& sink) {
  const double T = s.tokens(), Tl = sp_tokens(s), h = s.hidden, e = s.act_bytes;
  memory_op(sink, "ln_attn", d, 2.0 * Tl * h * e);                       // apex fused LayerNorm
  tp_gather(sink, "tp_ag_attn", s);
  if (s.engine_kernels) engine_gemm_parts(sink, "qkv", d, s, T, engine_qkv_parts(s), h, false);
  else gemm(sink, "qkv", d, s, T, qkv_width(s), h);
  attention_core_forward(unquantized(s), d.unquantized(), sink);
  fp8_casts_forward(sink, d, s);
  gemm(sink, "attn_proj", d, s, T, h, h / s.tp);
  tp_reduce(sink, "tp_attn", s);
  residual_forward(sink, "bias_dropout_add_attn", d, s);
  memory_op(sink, "ln_mlp", d, 2.0 * Tl * h * e);
  tp_gather(sink, "tp_ag_mlp", s);
  if (s.engine_kernels) engine_gemm_parts(sink, "mlp_in", d, s, T, engine_mlp_in_parts(s), h, false);
  else gemm(sink, "mlp_in", d, s, T, (s.swiglu ? 2.0 : 1.0) * s.ffn / s.tp, h);
  // fused bias-GeLU reads and writes the f/t activations; SwiGLU reads 2f/t and writes f/t.
  memory_op(sink, s.swiglu ? "swiglu" : "bias_gelu", d, T * s.ffn / s.tp * e * (s.swiglu ? 3.0 : 2.0));
  gemm(sink, "mlp_out", d, s, T, h, s.ffn / s.tp);
  tp_reduce(sink, "tp_mlp", s);
  residual_forward(sink, "bias_dropout_add_mlp", d, s);
}

void emit_layer_backward(const LayerShape& s, const DeviceRates& d, Recompute recompute, OpSink& sink) {
  if (recompute == Recompute::kFull) {
    sink.set_recompute(true);
    emit_layer_forward(s, d, sink);
    sink.set_recompute(false);
  }
  const double T = s.tokens(), Tl = sp_tokens(s), h = s.hidden, e = s.act_bytes;
  fp8_casts_backward(sink, d, s);
  residual_backward(sink, "bias_dropout_add_mlp_bwd", d, s);
  tp_gather(sink, "tp_ag_mlp_bwd", s);   // backward of the reduce-scatter
  gemm_backward(sink, "mlp_out_bwd", d, s, T, h, s.ffn / s.tp, 1, true);
  memory_op(sink, s.swiglu ? "swiglu_bwd" : "bias_gelu_bwd", d, T * s.ffn / s.tp * e * (s.swiglu ? 5.0 : 3.0));
  if (s.engine_kernels) engine_gemm_parts(sink, "mlp_in_bwd", d, s, T, engine_mlp_in_parts(s), h, true);
  else gemm_backward(sink, "mlp_in_bwd", d, s, T, (s.swiglu ? 2.0 : 1.0) * s.ffn / s.tp, h, 1, true);
  tp_reduce(sink, "tp_mlp_bwd", s);      // backward of f: all-reduce (reduce-scatter with SP)
  memory_op(sink, "ln_mlp_bwd", d, 3.0 * Tl * h * e, 2);
  residual_backward(sink, "bias_dropout_add_attn_bwd", d, s);
  tp_gather(sink, "tp_ag_attn_bwd", s);
  gemm_backward(sink, "attn_proj_bwd", d, s, T, h, h / s.tp, 1, true);
  if (recompute == Recompute::kSelective) {
    sink.set_recompute(true);
    attention_core_forward(unquantized(s), d.unquantized(), sink);
    sink.set_recompute(false);
  }
  attention_core_backward(unquantized(s), d.unquantized(), sink);
  if (s.engine_kernels) engine_gemm_parts(sink, "qkv_bwd", d, s, T, engine_qkv_parts(s), h, true);
  else gemm_backward(sink, "qkv_bwd", d, s, T, qkv_width(s), h, 1, true);
  tp_reduce(sink, "tp_attn_bwd", s);
  memory_op(sink, "ln_attn_bwd", d, 3.0 * Tl * h * e, 2);
}

void emit_embedding_forward(const LayerShape& s, const DeviceRates& d, OpSink& sink) {
  const double T = s.tokens(), h = s.hidden, e = s.act_bytes;
  // word lookup (masked for vocab-parallel) + position embedding add; the engine keeps the whole
  // table on every TP rank (exec/runner/transformer_passes.cpp): no mask and no all-reduce.
  const bool vocab_parallel = s.tp > 1 && !s.engine_kernels;
  if (s.engine_kernels)  // one loop: read the word and position rows, write their sum
    stream_op(sink, "embedding", d, 3.0 * T * h * e);
  else
    memory_op(sink, "embedding", d, 5.0 * T * h * e, vocab_parallel ? 4 : 2);
  if (vocab_parallel) tp_reduce(sink, "tp_embedding", s, false);
  if (s.dropout) memory_op(sink, "embedding_dropout", d, sp_tokens(s) * h * (2.0 * e + 1.0));
}

void emit_embedding_backward(const LayerShape& s, const DeviceRates& d, OpSink& sink) {
  const double T = s.tokens(), h = s.hidden, e = s.act_bytes;
  if (s.dropout) memory_op(sink, "embedding_dropout_bwd", d, sp_tokens(s) * h * (2.0 * e + 1.0));
  tp_gather(sink, "tp_ag_embedding_bwd", s, false);
  // scatter-add of the token gradients into the fp32 word/position gradient rows; the engine's
  // one loop reads each token's gradient once and adds it to both rows in place
  if (s.engine_kernels)
    stream_op(sink, "embedding_bwd", d, T * h * (e + 2.0 * 2.0 * 4.0));
  else
    memory_op(sink, "embedding_bwd", d, T * h * (e + 2.0 * 4.0) * 2.0, 3);
}

/// Vocabulary columns of the LM head on one TP rank: Megatron-LM splits them; the engine
/// computes the whole head on every rank of the last stage (exec/runner/block_passes.cpp), so
/// its loss and the head's input gradient need no TP collective.
namespace {
double head_vocab(const LayerShape& s) { return s.engine_kernels ? s.vocab : s.vocab / s.tp; }
}  // namespace

void emit_head_forward(const LayerShape& s, const DeviceRates& d, OpSink& sink) {
  const double T = s.tokens(), h = s.hidden, e = s.act_bytes;
  const double v = head_vocab(s);
  memory_op(sink, "ln_final", d, 2.0 * sp_tokens(s) * h * e);
  // The output layer is no Transformer Engine linear: its collectives are never overlapped.
  tp_gather(sink, "tp_ag_head", s, false);
  gemm(sink, "lm_head", d.unquantized(), unquantized(s), T, v, h);
  // Vocab-parallel cross-entropy, unfused, in fp32 (Megatron-LM cross_entropy.py): the cast of
  // the logits (read e, write 4) then max, subtract, exp, sum, log/normalise, each reading and
  // writing T*V/t fp32 values (8 bytes): e + 4 + 5 * 8 bytes per logit; three small all-reduces.
  if (s.engine_kernels)  // one kernel: max (read e), exp (read e, write 4), normalise (read, write 4)
    memory_op(sink, "cross_entropy", d, T * v * (2.0 * e + 3.0 * 4.0), 1);
  else
    memory_op(sink, "cross_entropy", d, T * v * (e + 4.0 + 5.0 * 8.0), 8);
  if (s.tp > 1 && !s.engine_kernels) sink.collective(OpKind::kTpAllReduce, "tp_cross_entropy", 3.0 * T * 4.0);
}

void emit_head_backward(const LayerShape& s, const DeviceRates& d, OpSink& sink) {
  const double T = s.tokens(), h = s.hidden, e = s.act_bytes;
  const double v = head_vocab(s);
  // softmax - one-hot, scale by the loss gradient, cast back: ~5 fp32 read+write passes + cast.
  if (s.engine_kernels)  // one stream: read the fp32 probabilities, write them scaled (less one at the target)
    stream_op(sink, "cross_entropy_bwd", d, T * v * (4.0 + e));
  else
    memory_op(sink, "cross_entropy_bwd", d, T * v * (5.0 * 8.0 + 4.0 + e), 5);
  gemm_backward(sink, "lm_head_bwd", d.unquantized(), unquantized(s), T, v, h);
  if (!s.engine_kernels) tp_reduce(sink, "tp_head_bwd", s, false);
  memory_op(sink, "ln_final_bwd", d, 3.0 * sp_tokens(s) * h * e, 2);
}

}  // namespace hetsim::models
