// SPDX-License-Identifier: Apache-2.0
// Per-op compute cost: roofline GEMM and memory ops, layer FLOPs, TP collectives per layer.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "catalog.hpp"
#include "compute_cost.hpp"
#include "cost_test_util.hpp"

namespace hetsim::models {
namespace {

DeviceRates rates() {
  DeviceRates d;
  d.peak_flops = 100e12;
  d.memory_Bps = 1e12;
  d.eff = {0.8, 1e9, 0.5, 5e-6};
  return d;
}

/// Sums what a pass emits; with a prefix, only the compute ops whose name starts with it.
struct CountingSink : OpSink {
  std::string prefix;
  double flop = 0, recompute_flop = 0, gpu_s = 0;
  int kernels = 0;
  std::vector<std::pair<OpKind, double>> collectives;
  CountingSink() = default;
  explicit CountingSink(std::string only) : prefix(std::move(only)) {}
  void compute(const char* name, double g, int k, double f) override {
    if (std::string(name).rfind(prefix, 0) != 0) return;
    gpu_s += g;
    kernels += k;
    (recompute() ? recompute_flop : flop) += f;
  }
  void collective(OpKind kind, const char*, double bytes, bool) override { collectives.emplace_back(kind, bytes); }
};

TEST(ComputeCost, LargeGemmRunsAtEfficientPeak) {
  const DeviceRates d = rates();
  const double n = 8192, w = 2 * n * n * n;
  const double eff = 0.8 * w / (w + 1e9) * n / (n + kGemmK0);
  EXPECT_NEAR(gemm_time(d, n, n, n, 1, 2), w / (100e12 * eff) + 5e-6, 1e-12);
}

TEST(ComputeCost, ThinGemmIsMemoryBound) {
  const DeviceRates d = rates();
  // (1e6 x 64)(64 x 1): reads 64e6 + 64 elements, writes 1e6, 2 bytes each, at 0.5 TB/s.
  const double bytes = (1e6 * 64 + 64 + 1e6) * 2;
  EXPECT_NEAR(gemm_time(d, 1e6, 1, 64, 1, 2), bytes / 0.5e12 + 5e-6, 1e-12);
}

TEST(ComputeCost, GemmMemoryEfficiencySetsTheGemmRoofOnly) {
  DeviceRates d = rates();
  d.eff.gemm_memory_efficiency = 0.9;  // e.g. a CPU: GEMM operands stream faster than its elementwise loops run
  const double bytes = (1e6 * 64 + 64 + 1e6) * 2;
  EXPECT_NEAR(gemm_time(d, 1e6, 1, 64, 1, 2), bytes / 0.9e12 + 5e-6, 1e-12);
  EXPECT_NEAR(memory_time(d, 1e9, 1), 1e9 / 0.5e12 + 5e-6, 1e-12);  // elementwise: still `memory`
}

TEST(ComputeCost, GemmK0IsTheDevicesHalfSpeedReduction) {
  DeviceRates d = rates();
  d.memory_Bps = 1e15;  // far from the memory roof: the k term alone
  const double n = 8192, k = 64, w = 2 * n * n * k;
  const double ramp = 0.8 * w / (w + 1e9);
  EXPECT_NEAR(gemm_time(d, n, n, k, 1, 2), w / (100e12 * ramp * 0.5) + 5e-6, 1e-12);  // default K0 = 64: half speed
  d.eff.gemm_k0 = 0;  // a CPU's blocked kernels: no k prologue
  EXPECT_NEAR(gemm_time(d, n, n, k, 1, 2), w / (100e12 * ramp) + 5e-6, 1e-12);
}

TEST(ComputeCost, GridFillSlowsGemmsTooSmallToFillTheDevice) {
  DeviceRates d = rates();
  d.memory_Bps = 1e15;
  d.eff.gemm_k0 = 0;
  const double k = 4096;
  auto compute_s = [&](double m, double n, double batch, double fill) {
    const double w = 2 * m * n * k * batch;
    return w / (100e12 * 0.8 * w / (w + 1e9) * fill) + 5e-6;
  };
  EXPECT_NEAR(gemm_time(d, 1000, 1000, k, 1, 4), compute_s(1000, 1000, 1, 1.0), 1e-12);  // 0: not modelled
  d.eff.gemm_full_outputs = 4e6;  // e.g. 244 output tiles of 128 x 128
  EXPECT_NEAR(gemm_grid_fill(1e6, d.eff.gemm_full_outputs), 0.25, 1e-15);
  EXPECT_NEAR(gemm_time(d, 1000, 1000, k, 1, 4), compute_s(1000, 1000, 1, 0.25), 1e-12);
  EXPECT_NEAR(gemm_time(d, 1000, 1000, k, 8, 4), compute_s(1000, 1000, 8, 1.0), 1e-12);  // a batch fills it
  EXPECT_NEAR(gemm_time(d, 4000, 2000, k, 1, 4), compute_s(4000, 2000, 1, 1.0), 1e-12);  // never above 1
}

TEST(ComputeCost, MemoryOpIsBytesOverBandwidthPlusLaunches) {
  EXPECT_NEAR(memory_time(rates(), 1e9, 3), 1e9 / 0.5e12 + 3 * 5e-6, 1e-12);
}

LayerShape shape(int tp, bool sp = false) {
  LayerShape s;
  s.seq = 2048;
  s.micro = 2;
  s.hidden = 4096;
  s.heads = 32;
  s.kv_heads = 32;
  s.ffn = 4 * 4096;
  s.vocab = 51200;
  s.tp = tp;
  s.sequence_parallel = sp;
  return s;
}

TEST(ComputeCost, LayerForwardFlopsAreNarayananPerRank) {
  // Forward of one GPT layer: 24 s b h^2 + 4 s^2 b h FLOPs (Narayanan et al. SC'21 §5.1), split over t.
  for (int tp : {1, 4}) {
    CountingSink sink;
    const LayerShape s = shape(tp);
    emit_layer_forward(s, rates(), sink);
    const double expected = (24.0 * s.seq * s.micro * s.hidden * s.hidden + 4.0 * s.seq * s.seq * s.micro * s.hidden) / tp;
    EXPECT_NEAR(sink.flop / expected, 1.0, 1e-9) << "tp " << tp;
  }
}

TEST(ComputeCost, BackwardIsTwiceForwardPlusRecompute) {
  const LayerShape s = shape(2);
  CountingSink fwd;
  emit_layer_forward(s, rates(), fwd);
  CountingSink none, full, selective;
  emit_layer_backward(s, rates(), Recompute::kNone, none);
  emit_layer_backward(s, rates(), Recompute::kFull, full);
  emit_layer_backward(s, rates(), Recompute::kSelective, selective);
  EXPECT_NEAR(none.flop / fwd.flop, 2.0, 1e-9);
  EXPECT_NEAR(full.recompute_flop / fwd.flop, 1.0, 1e-9);
  // Selective recomputes only QK^T and attention x V: 4 s^2 b h / t.
  EXPECT_NEAR(selective.recompute_flop, 4.0 * s.seq * s.seq * s.micro * s.hidden / s.tp, 1.0);
  EXPECT_GT(full.gpu_s, selective.gpu_s);
  EXPECT_GT(selective.gpu_s, none.gpu_s);
}

TEST(ComputeCost, TensorParallelCollectivesPerLayer) {
  const double bytes = 2048.0 * 2 * 4096 * 2;  // s b h, 16-bit
  CountingSink tp_fwd, tp_bwd, sp_fwd, one;
  emit_layer_forward(shape(4), rates(), tp_fwd);
  emit_layer_backward(shape(4), rates(), Recompute::kNone, tp_bwd);
  emit_layer_forward(shape(4, true), rates(), sp_fwd);
  emit_layer_forward(shape(1), rates(), one);
  ASSERT_EQ(tp_fwd.collectives.size(), 2u);  // g after attention and after the MLP (Shoeybi et al. 2019)
  ASSERT_EQ(tp_bwd.collectives.size(), 2u);  // f before QKV and before the MLP
  for (auto& [kind, size] : tp_fwd.collectives) {
    EXPECT_EQ(kind, OpKind::kTpAllReduce);
    EXPECT_DOUBLE_EQ(size, bytes);
  }
  int gathers = 0, scatters = 0;
  for (auto& [kind, size] : sp_fwd.collectives) {
    gathers += kind == OpKind::kTpAllGather;
    scatters += kind == OpKind::kTpReduceScatter;
  }
  EXPECT_EQ(gathers, 2);  // Korthikanti et al. 2022 Fig. 5: g -> reduce-scatter, f -> all-gather
  EXPECT_EQ(scatters, 2);
  EXPECT_TRUE(one.collectives.empty());
}

/// The forward pass of a layer of shape(1), as it is and with one flag set to `value`.
std::pair<CountingSink, CountingSink> forward_before_after(bool LayerShape::*flag, bool value) {
  LayerShape s = shape(1);
  std::pair<CountingSink, CountingSink> out;
  emit_layer_forward(s, rates(), out.first);
  s.*flag = value;
  emit_layer_forward(s, rates(), out.second);
  return out;
}

TEST(ComputeCost, NoDropoutRemovesTheMaskTrafficAndKernels) {
  const auto [with, without] = forward_before_after(&LayerShape::dropout, false);
  EXPECT_EQ(with.kernels - without.kernels, 1);  // the attention-score dropout kernel
  EXPECT_LT(without.gpu_s, with.gpu_s);
  EXPECT_EQ(without.flop, with.flop);  // dropout is memory-bound work only
}

/// The softmax op of one pass of a layer of `s`.
CountingSink softmax_of(const LayerShape& s, bool backward) {
  CountingSink sink(backward ? "softmax_bwd" : "softmax");
  if (backward) emit_layer_backward(s, rates(), Recompute::kNone, sink);
  else emit_layer_forward(s, rates(), sink);
  return sink;
}

TEST(ComputeCost, Fp32TakesTheUnfusedSoftmax) {
  // Megatron's fused scale-mask-softmax takes 16-bit inputs only: FP32 runs scale, masked_fill
  // and softmax as three kernels over the scores (6 passes forward, 7 backward, against 2 and 3).
  LayerShape s = shape(1);
  const double scores = s.micro * s.heads * s.seq * s.seq;
  s.act_bytes = 4;
  const CountingSink fwd32 = softmax_of(s, false), bwd32 = softmax_of(s, true);
  EXPECT_EQ(fwd32.kernels, 3);
  EXPECT_NEAR(fwd32.gpu_s, 6 * scores * 4 / 0.5e12 + 3 * 5e-6, 1e-12);
  EXPECT_NEAR(bwd32.gpu_s, 7 * scores * 4 / 0.5e12 + 3 * 5e-6, 1e-12);
  s.act_bytes = 2;
  const CountingSink fwd16 = softmax_of(s, false), bwd16 = softmax_of(s, true);
  EXPECT_EQ(fwd16.kernels, 1);
  EXPECT_NEAR(fwd16.gpu_s, 2 * scores * 2 / 0.5e12 + 5e-6, 1e-12);
  EXPECT_NEAR(bwd16.gpu_s, 3 * scores * 2 / 0.5e12 + 5e-6, 1e-12);
}

TEST(ComputeCost, FusedSoftmaxNeedsItsKernelShape) {
  // FusedScaleMaskSoftmax.is_kernel_available: b x heads per TP rank a multiple of 4 (and of 4
  // batches per block at sk > 128, 8 at sk <= 128), 16 < sk <= 4096. Otherwise the 16-bit path
  // casts to FP32, scales, masks, softmaxes and casts back: 5 kernels, 2+4 + 3 x 8 + 4+2 = 36
  // bytes per score forward; backward 6 + 12 + 16 + 6 = 40.
  LayerShape s = shape(8);  // 32 heads: 4 per rank
  s.micro = 1;
  EXPECT_EQ(softmax_of(s, false).kernels, 1);  // 1 x 4
  s.heads = s.kv_heads = 16;                   // 2 per rank: b x np = 2
  const double scores = s.micro * s.heads / s.tp * s.seq * s.seq;
  const CountingSink fwd = softmax_of(s, false), bwd = softmax_of(s, true);
  EXPECT_EQ(fwd.kernels, 5);
  EXPECT_NEAR(fwd.gpu_s, 36 * scores / 0.5e12 + 5 * 5e-6, 1e-12);
  EXPECT_EQ(bwd.kernels, 5);
  EXPECT_NEAR(bwd.gpu_s, 40 * scores / 0.5e12 + 5 * 5e-6, 1e-12);
  s.micro = 2;  // b x np = 4
  EXPECT_EQ(softmax_of(s, false).kernels, 1);
  s.seq = 8192;  // beyond the kernel's 4096
  EXPECT_EQ(softmax_of(s, false).kernels, 5);
  s.seq = 128;  // 8 batches per block at sk <= 128: b x np = 4 is not enough
  EXPECT_EQ(softmax_of(s, false).kernels, 5);
  s.micro = 4;
  EXPECT_EQ(softmax_of(s, false).kernels, 1);
}

TEST(ComputeCost, FlashAttentionRemovesScoreTraffic) {
  const auto [plain, flash] = forward_before_after(&LayerShape::flash, true);
  EXPECT_LT(flash.gpu_s, plain.gpu_s);
  EXPECT_LT(flash.kernels, plain.kernels);
}

TEST(ComputeCost, FlashScaleDividesOnlyTheAttentionKernel) {
  LayerShape s = shape(1);
  s.flash = true;
  DeviceRates half = rates();
  half.eff.flash_scale = 0.5;
  CountingSink base("flash_attn"), scaled("flash_attn"), gemm_base("qkv"), gemm_scaled("qkv");
  emit_layer_forward(s, rates(), base);
  emit_layer_forward(s, half, scaled);
  emit_layer_forward(s, rates(), gemm_base);
  emit_layer_forward(s, half, gemm_scaled);
  // t = flop / (peak eff rel scale) + launch: halving the scale doubles the non-launch part.
  EXPECT_NEAR(scaled.gpu_s - 5e-6, 2.0 * (base.gpu_s - 5e-6), 1e-12);
  EXPECT_DOUBLE_EQ(gemm_scaled.gpu_s, gemm_base.gpu_s);
}

/// A device with a BF16 peak and twice it in FP8, as the Hopper datasheets give.
GpuType fp8_gpu() {
  GpuType g;
  g.name = "fp8-gpu";
  g.peak_flops = {{Dtype::kBf16, 100e12}, {Dtype::kFp8, 200e12}};
  g.memory_bytes = 80e9;
  g.memory_bandwidth_Bps = 1e12;
  g.efficiency = {0.8, 1e9, 0.5, 5e-6};
  return g;
}

TEST(ComputeCost, Fp8RunsOnlyTheBlockLinearsInFp8) {
  const DeviceRates bf16 = DeviceRates::of(fp8_gpu(), Dtype::kBf16);
  const DeviceRates fp8 = DeviceRates::of(fp8_gpu(), Dtype::kFp8);
  EXPECT_DOUBLE_EQ(fp8.peak_flops, 200e12);
  EXPECT_DOUBLE_EQ(fp8.unquantized_peak_flops, 100e12);
  EXPECT_FALSE(bf16.fp8);
  LayerShape s16 = shape(1), s8 = shape(1);
  s8.gemm_bytes = 1;
  s16.flash = s8.flash = true;
  // The attention core stays in 16-bit: the same time under both dtypes.
  CountingSink attn16("flash_attn"), attn8("flash_attn");
  emit_layer_forward(s16, bf16, attn16);
  emit_layer_forward(s8, fp8, attn8);
  EXPECT_DOUBLE_EQ(attn8.gpu_s, attn16.gpu_s);
  // The block linears run at the FP8 peak: QKV (compute-bound at this shape) takes half the time.
  CountingSink qkv16("qkv"), qkv8("qkv");
  emit_layer_forward(s16, bf16, qkv16);
  emit_layer_forward(s8, fp8, qkv8);
  EXPECT_NEAR(qkv8.gpu_s - 5e-6, 0.5 * (qkv16.gpu_s - 5e-6), 1e-12);
  // So does the LM head stay in 16-bit.
  CountingSink head16("lm_head"), head8("lm_head");
  emit_head_forward(s16, bf16, head16);
  emit_head_forward(s8, fp8, head8);
  EXPECT_DOUBLE_EQ(head8.gpu_s, head16.gpu_s);
  // Transformer Engine's casts appear under FP8 only: one forward, the backward cast-transposes.
  CountingSink cast16("fp8_cast"), cast8("fp8_cast"), castb16("fp8_cast"), castb8("fp8_cast");
  emit_layer_forward(s16, bf16, cast16);
  emit_layer_forward(s8, fp8, cast8);
  emit_layer_backward(s16, bf16, Recompute::kNone, castb16);
  emit_layer_backward(s8, fp8, Recompute::kNone, castb8);
  EXPECT_EQ(cast16.kernels + castb16.kernels, 0);
  EXPECT_EQ(cast8.kernels, 1);
  EXPECT_EQ(castb8.kernels, 8);
  // Forward cast: the projection's input, T h / t elements, read 2 bytes and written 1.
  const double forward_bytes = s8.tokens() * s8.hidden * 3.0;
  EXPECT_NEAR(cast8.gpu_s, forward_bytes / 0.5e12 + 5e-6, 1e-12);
}

/// The named ops of both passes of a layer, the embedding and the head of `s`: name -> (time,
/// kernels) for compute ops, (bytes, count) for collectives.
std::map<std::string, std::pair<double, int>> ops_of(const LayerShape& s, const DeviceRates& d = rates()) {
  struct Named : OpSink {
    std::map<std::string, std::pair<double, int>> ops;
    void compute(const char* name, double g, int k, double) override {
      ops[name].first += g;
      ops[name].second += k;
    }
    void collective(OpKind, const char* name, double bytes, bool) override {
      ops[name].first += bytes;
      ++ops[name].second;
    }
  } sink;
  emit_embedding_forward(s, d, sink);
  emit_layer_forward(s, d, sink);
  emit_head_forward(s, d, sink);
  emit_head_backward(s, d, sink);
  emit_layer_backward(s, d, Recompute::kNone, sink);
  emit_embedding_backward(s, d, sink);
  return sink.ops;
}

TEST(ComputeCost, EngineKernelsAreTheExecutionEnginesOwn) {
  // exec/: strided batched GEMMs on the QKV buffer (no layout copies), one fused softmax kernel
  // for every shape (here FP32 and b x np = 2, where Megatron takes the 3-kernel PyTorch path),
  // a one-kernel cross-entropy each way, linears without bias, the embedding and the LM head
  // whole on every TP rank (no vocab-parallel collectives). Its pure streams (residual add and
  // copy, embedding loops, the cross-entropy's backward) run at the stream reference's rate
  // (gemm_memory: 0.9 of 1 TB/s here), its other elementwise kernels at memory_efficiency (0.5).
  LayerShape s = shape(8);
  s.micro = 1;
  s.heads = s.kv_heads = 16;
  s.act_bytes = s.gemm_bytes = 4;
  DeviceRates d = rates();
  d.eff.gemm_memory_efficiency = 0.9;
  const auto megatron = ops_of(s, d);
  s.engine_kernels = true;
  const auto engine = ops_of(s, d);
  for (const char* layout : {"qkv_layout", "context_layout", "qkv_layout_bwd", "context_layout_bwd"}) {
    EXPECT_EQ(megatron.count(layout), 1u) << layout;
    EXPECT_EQ(engine.count(layout), 0u) << layout;
  }
  const double scores = s.micro * s.heads / s.tp * s.seq * s.seq, logits = s.tokens() * s.vocab;  // whole head
  EXPECT_EQ(megatron.at("softmax").second, 3);
  EXPECT_NEAR(engine.at("softmax").first, 2 * scores * 4 / 0.5e12 + 5e-6, 1e-12);
  EXPECT_NEAR(engine.at("softmax_bwd").first, 3 * scores * 4 / 0.5e12 + 5e-6, 1e-12);
  // max (read 4), exp (read 4, write 4), normalise (read 4, write 4); backward read 4, write 4.
  EXPECT_NEAR(engine.at("cross_entropy").first, 20 * logits / 0.5e12 + 5e-6, 1e-12);
  EXPECT_NEAR(engine.at("cross_entropy_bwd").first, 8 * logits / 0.9e12 + 5e-6, 1e-12);
  // The residual: Megatron's fused bias-dropout-add (with its mask byte), the engine's in-place
  // add (read 2, write 1: 12 bytes an element) and, backward, one copy of the gradient (8 bytes);
  // two of each per layer. Its embedding: one loop each way (read the word and position rows,
  // write the sum; read the gradient, add it into both fp32 gradient rows: 4 + 2 x 8 bytes).
  const double elements = s.tokens() * s.hidden;
  EXPECT_EQ(engine.count("bias_dropout_add_attn") + engine.count("bias_dropout_add_mlp_bwd"), 0u);
  EXPECT_NEAR(megatron.at("bias_dropout_add_attn").first, 13 * elements / 0.5e12 + 5e-6, 1e-12);
  EXPECT_NEAR(engine.at("residual").first, 2 * (12 * elements / 0.9e12 + 5e-6), 1e-12);
  EXPECT_NEAR(engine.at("residual_bwd").first, 2 * (8 * elements / 0.9e12 + 5e-6), 1e-12);
  EXPECT_NEAR(engine.at("embedding").first, 12 * elements / 0.9e12 + 5e-6, 1e-12);
  EXPECT_NEAR(engine.at("embedding_bwd").first, 20 * elements / 0.9e12 + 5e-6, 1e-12);
  EXPECT_EQ(engine.at("embedding").second + engine.at("embedding_bwd").second, 2);
  EXPECT_EQ(megatron.at("cross_entropy").second, 8);
  // The bias-gradient pass of gemm_backward: one kernel fewer, and no time of its own.
  EXPECT_EQ(megatron.at("mlp_in_bwd").second, 3);
  EXPECT_EQ(engine.at("mlp_in_bwd").second, 2);
  EXPECT_NEAR(engine.at("mlp_in_bwd").first,
              megatron.at("mlp_in_bwd").first - (s.tokens() * s.ffn / s.tp * 4 / 0.5e12 + 5e-6), 1e-12);
  EXPECT_EQ(engine.at("mlp_out").first, megatron.at("mlp_out").first);  // GEMMs are priced alike
  for (const char* vocab_parallel : {"tp_embedding", "tp_cross_entropy", "tp_head_bwd"}) {
    EXPECT_EQ(megatron.count(vocab_parallel), 1u) << vocab_parallel;
    EXPECT_EQ(engine.count(vocab_parallel), 0u) << vocab_parallel;
  }
  EXPECT_EQ(engine.at("tp_attn").second, 1);  // the blocks' TP collectives stay
  EXPECT_GT(engine.at("lm_head").first, 4 * megatron.at("lm_head").first);  // 8x the columns
}

TEST(ComputeCost, EngineLinearsAreSeparateGemmsOfTheSameWork) {
  // exec/runner/block_passes.cpp multiplies Q, K and V (and SwiGLU's W1 and Wup) by separate
  // weights: the same FLOPs as Megatron-LM's fused weight in more, narrower GEMMs, which on a
  // device whose grid they do not fill (gemm_full_outputs) take longer.
  LayerShape s = shape(1);
  s.heads = 16;
  s.kv_heads = 4;  // grouped-query: K and V a quarter of Q's width
  s.swiglu = true;
  s.act_bytes = s.gemm_bytes = 4;
  DeviceRates d = rates();
  d.memory_Bps = 1e15;
  d.eff.gemm_full_outputs = 1e12;  // nothing fills it: time is proportional to 1 / outputs
  const auto fused = ops_of(s, d);
  s.engine_kernels = true;
  const auto engine = ops_of(s, d);
  const double T = s.tokens(), h = s.hidden, kv = h / 4;
  EXPECT_EQ(engine.at("qkv").second, 3);
  EXPECT_EQ(engine.at("qkv_bwd").second, 6);
  EXPECT_EQ(engine.at("mlp_in").second, 2);
  EXPECT_NEAR(engine.at("qkv").first,
              gemm_time(d, T, h, h, 1, 4) + 2 * gemm_time(d, T, kv, h, 1, 4), 1e-12);
  EXPECT_NEAR(engine.at("mlp_in").first, 2 * gemm_time(d, T, s.ffn, h, 1, 4), 1e-12);
  EXPECT_NEAR(fused.at("mlp_in").first, gemm_time(d, T, 2 * s.ffn, h, 1, 4), 1e-12);
  EXPECT_GT(engine.at("qkv").first, fused.at("qkv").first);
  d.eff.gemm_full_outputs = 0;  // without the fill term the parts cost what the fused GEMM costs, up to the ramp
  s.engine_kernels = false;
  const double fused_s = ops_of(s, d).at("qkv").first;
  s.engine_kernels = true;
  EXPECT_NEAR(ops_of(s, d).at("qkv").first / fused_s, 1.0, 0.05);
}

TEST(ComputeCost, HeadFlopsAreLogitsGemm) {
  CountingSink f, b;
  const LayerShape s = shape(2);
  emit_head_forward(s, rates(), f);
  emit_head_backward(s, rates(), b);
  const double logits = 2.0 * s.seq * s.micro * s.hidden * s.vocab / s.tp;
  EXPECT_NEAR(f.flop, logits, 1.0);
  EXPECT_NEAR(b.flop, 2 * logits, 1.0);
}

// The bundled T4 reproduces the sustained, power-capped cuBLAS FP16 GEMM throughput that its
// catalog entry cites (~24 TFLOP/s on 4096^3; NVIDIA Developer Forums thread 264462), not the
// 65 TFLOP/s boost-clock datasheet peak.
TEST(ComputeCost, T4SustainsItsPowerCappedGemmThroughput) {
  const DeviceRates d = DeviceRates::of(Catalog::builtin().by_name("t4"), Dtype::kFp16);
  const double n = 4096, w = 2 * n * n * n;
  const double tflops = w / gemm_time(d, n, n, n, 1, 2) / 1e12;
  EXPECT_NEAR(tflops, 24.0, 1.0);
}

}  // namespace
}  // namespace hetsim::models
