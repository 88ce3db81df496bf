// SPDX-License-Identifier: Apache-2.0
// Memory per GPU against Korthikanti et al. 2022 (Table 2, §4-5) and the ZeRO paper's state bytes
// (Rajbhandari et al. 2020, §3.1 and §5).
#include <gtest/gtest.h>

#include <variant>

#include "cost_test_util.hpp"
#include "memory_cost.hpp"
#include "predictor.hpp"
#include "stage_cost.hpp"
#include "step_cost.hpp"

namespace hetsim::models {
namespace {

using testing::cluster_of;
using testing::node_type;
using testing::round_gpu;

ModelSpec gpt(int hidden, int heads, int seq) {
  ModelSpec m;
  m.layers = 1;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.seq_len = seq;
  m.vocab = 51200;
  return m;
}

TEST(MemoryCost, ActivationsMatchKorthikantiTable2) {
  const ModelSpec m = gpt(12288, 96, 2048);
  const double s = 2048, b = 1, h = 12288, a = 96;
  const double sbh = s * b * h;
  for (int t : {1, 2, 8}) {
    // No parallelism / TP without SP: sbh(10 + 24/t + 5as/(ht)).
    EXPECT_NEAR(layer_activation_bytes(m, b, t, false, Recompute::kNone, false, 2),
                sbh * (10 + 24.0 / t + 5 * a * s / (h * t)), 1.0);
    // TP with SP: (sbh/t)(34 + 5as/h).
    EXPECT_NEAR(layer_activation_bytes(m, b, t, true, Recompute::kNone, false, 2), sbh / t * (34 + 5 * a * s / h), 1.0);
    // Selective recompute + SP: 34 sbh/t; full recompute: 2sbh (÷t with SP).
    EXPECT_NEAR(layer_activation_bytes(m, b, t, true, Recompute::kSelective, false, 2), 34 * sbh / t, 1.0);
    EXPECT_NEAR(layer_activation_bytes(m, b, t, false, Recompute::kFull, false, 2), 2 * sbh, 1.0);
    EXPECT_NEAR(layer_activation_bytes(m, b, t, true, Recompute::kFull, false, 2), 2 * sbh / t, 1.0);
  }
  // fp32 activations double the 16-bit terms; the one-byte dropout masks stay (34 + 5as/h -> 66 + 9as/h).
  EXPECT_NEAR(layer_activation_bytes(m, b, 1, false, Recompute::kNone, false, 4), sbh * (66 + 9 * a * s / h), 1.0);
}

TEST(MemoryCost, WithoutDropoutTheMasksAreGone) {
  // Korthikanti et al. 2022 §4.1 counts 2 sbh bytes of hidden-dropout masks and as^2b of
  // attention-dropout mask plus 2as^2b of dropout output: without dropout, 32 sbh + 2as^2b.
  ModelSpec m = gpt(12288, 96, 2048);
  m.dropout = 0;
  const double s = 2048, b = 1, h = 12288, a = 96;
  const double sbh = s * b * h;
  EXPECT_NEAR(layer_activation_bytes(m, b, 1, false, Recompute::kNone, false, 2), sbh * (32 + 2 * a * s / h), 1.0);
  EXPECT_NEAR(layer_activation_bytes(m, b, 1, false, Recompute::kNone, true, 2), sbh * 32, 1.0);  // flash
}

TEST(MemoryCost, LastStageKeepsTheFp32SoftmaxAndOneCastGradient) {
  // Last of three stages, no layers of its own: only the head's terms. Per token: the final LN
  // and head inputs (2 x 2h bytes) and the fp32 softmax over the vocabulary (4v; Korthikanti
  // §4.3); the loss gradient is computed in place in it and cast to 16 bit for the head's
  // backward (2v more, one micro-batch; Megatron-LM _VocabParallelCrossEntropy.backward).
  const ModelSpec m = gpt(4096, 32, 2048);
  StageMemoryInput in;
  in.model = &m;
  in.dtype = Dtype::kBf16;
  in.pp = 3;
  in.stage = 2;
  in.micro = 2;
  in.micro_batches = 8;
  in.tp = 2;
  const double tokens = 2048.0 * 2;
  EXPECT_NEAR(stage_memory(in).activations, tokens * (2 * 2 * 4096 + 4 * 51200 / 2) + tokens * 2 * 51200 / 2, 1.0);
  in.dtype = Dtype::kFp32;  // fp32 training: the cast gradient is 4 bytes a logit
  EXPECT_NEAR(stage_memory(in).activations, tokens * (2 * 4 * 4096 + 4 * 51200 / 2) + tokens * 4 * 51200 / 2, 1.0);
  // The execution engine computes the whole vocabulary's logits on every TP rank and keeps its
  // fp32 probabilities, then the logits' gradient beside them (exec/runner/block_passes.cpp).
  in.whole_vocab = true;
  EXPECT_NEAR(stage_memory(in).activations, tokens * (2 * 4 * 4096 + 4 * 51200) + tokens * 4 * 51200, 1.0);
}

TEST(MemoryCost, CpuDevicesCarryNoFrameworkReserve) {
  // The same plan on a GPU and on a CPU device of the same figures: the GPU stage carries the
  // 2 GiB reserve (CUDA context, NCCL buffers, allocator slack), the CPU stage none.
  const Workload w = testing::gpt_workload(2, 256, 4, 128, 8);
  double peak[2];
  for (int cpu = 0; cpu < 2; ++cpu) {
    const GpuType g = round_gpu("dev", 1e12, 4e9, cpu ? Vendor::kCpu : Vendor::kNvidia);
    const Cluster c = cluster_of({node_type("box", g, 2, 10e9, 1e9)}, {{0, 1}});
    const auto plan = make_uniform_plan(c, w, 1, 1, 2, UniformPlanOptions{});
    ASSERT_TRUE(std::holds_alternative<Plan>(plan));
    const Report r = predict(c, w, std::get<Plan>(plan));
    ASSERT_TRUE(r.feasible) << r.infeasible_reason;
    peak[cpu] = r.memory_peak_bytes;
  }
  EXPECT_DOUBLE_EQ(peak[0] - peak[1], kFrameworkReserveBytes);
  EXPECT_LT(peak[1], 0.5e9);  // 13 M parameters (mostly the 51200 x 256 embedding) x 16 B + logits
}

TEST(MemoryCost, InFlightMicroBatchesPerSchedule) {
  EXPECT_EQ(in_flight_chunks(Schedule::k1f1b, 0, 4, 8, 1), 4);
  EXPECT_EQ(in_flight_chunks(Schedule::k1f1b, 3, 4, 8, 1), 1);
  EXPECT_EQ(in_flight_chunks(Schedule::k1f1b, 0, 4, 2, 1), 2);
  EXPECT_EQ(in_flight_chunks(Schedule::kGpipe, 0, 4, 8, 1), 8);
  // Interleaved, p = 4, v = 2: warm-up (p - 1) * 2 + (v - 1) * p = 10 chunks, + 1.
  EXPECT_EQ(in_flight_chunks(Schedule::kInterleaved, 0, 4, 8, 2), 11);
}

/// A 1e9-parameter fp16 stage of 100 layers over `dp` replicas, for the ZeRO tests.
StageMemoryInput zero_test_stage(const ModelSpec& m, int dp) {
  StageMemoryInput in;
  in.model = &m;
  in.dtype = Dtype::kFp16;
  in.layers = 100;
  in.params = 1e9;
  in.dp = dp;
  return in;
}

// One replica: ZeRO shards over a group of one, so every stage keeps what ZeRO-0 keeps; ZeRO-3
// gathered nothing but was charged the gathered-weights buffer (s51 plausibility hunt F6).
TEST(MemoryCost, ZeroWithOneReplicaKeepsWhatZeroZeroKeeps) {
  const ModelSpec m = gpt(4096, 32, 2048);
  StageMemoryInput in = zero_test_stage(m, 1);
  in.zero = 0;
  const StageMemory none = stage_memory(in);
  for (int z = 1; z <= 3; ++z) {
    in.zero = z;
    const StageMemory mem = stage_memory(in);
    EXPECT_DOUBLE_EQ(mem.weights + mem.grads + mem.optimizer, none.weights + none.grads + none.optimizer) << z;
  }
}

TEST(MemoryCost, ZeroShardsStatesGradientsWeights) {
  const ModelSpec m = gpt(4096, 32, 2048);
  StageMemoryInput in = zero_test_stage(m, 8);
  double previous = 1e30;
  for (int z = 0; z <= 3; ++z) {
    in.zero = z;
    const StageMemory mem = stage_memory(in);
    const double states = mem.weights + mem.grads + mem.optimizer;
    EXPECT_LT(states, previous);
    previous = states;
    if (z == 0) {
      EXPECT_DOUBLE_EQ(states, 16e9);  // 2 + 2 + 12 bytes per parameter (ZeRO §3.1)
    } else if (z == 1) {
      EXPECT_DOUBLE_EQ(states, 4e9 + 12e9 / 8);
    } else if (z == 2) {
      EXPECT_DOUBLE_EQ(states, 2e9 + 14e9 / 8);
    }
  }
  in.dtype = Dtype::kFp32;
  in.zero = 0;
  const StageMemory f32 = stage_memory(in);
  EXPECT_DOUBLE_EQ(f32.weights + f32.grads + f32.optimizer, 16e9);
  // bf16 keeps fp32 gradients (Megatron-LM's main_grad; its distributed-optimizer docs: 18 bytes a
  // parameter, 6 + 12/d sharded), as does fp16 reduced in fp32. The planner's #1 plan for a 70B
  // model had 1.6 GiB of headroom with 2-byte gradients and needed 86 of 80 GiB with these (s26).
  in.dtype = Dtype::kBf16;
  const StageMemory b16 = stage_memory(in);
  EXPECT_DOUBLE_EQ(b16.weights + b16.grads + b16.optimizer, 18e9);
  in.zero = 1;
  const StageMemory b16_sharded = stage_memory(in);
  EXPECT_DOUBLE_EQ(b16_sharded.weights + b16_sharded.grads + b16_sharded.optimizer, 6e9 + 12e9 / 8);
  in.dtype = Dtype::kFp16;
  in.fp32_grad_allreduce = true;
  EXPECT_DOUBLE_EQ(stage_memory(in).grads, 4e9);
}

TEST(MemoryCost, ZeroThreeKeepsTheLiveGatheredWeightsOnly) {
  StageMemoryInput in;
  in.dtype = Dtype::kBf16;
  in.zero = 3;
  in.dp = 640;
  in.pp = 1;
  // 530B-like: 105 layers of 12h^2 = 5.03B parameters (h 20480). Live: the largest tensor (the
  // MLP's h x 4h = 1.68B) in use and the next prefetched, not two whole 5B layers.
  const ModelSpec big = gpt(20480, 128, 2048);
  in.model = &big;
  in.layers = 105;
  in.params = 105 * 12.0 * 20480 * 20480;
  const double shard = in.params * 2 / 640;
  EXPECT_DOUBLE_EQ(stage_memory(in).weights, shard + 2 * (20480.0 * 4 * 20480) * 2);
  // A small model: two whole layers (below DeepSpeed's 1e9 live-parameter cap).
  const ModelSpec small = gpt(1024, 16, 2048);
  in.model = &small;
  in.layers = 24;
  in.params = 24 * 12.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(stage_memory(in).weights, in.params * 2 / 640 + 2 * 12.0 * 1024 * 1024 * 2);
  // In between (h 8192): two layers (1.6B) exceed the 1e9 cap, twice the largest tensor (the
  // 51200 x 8192 embedding on this end stage, 0.42B; the MLP's 0.27B) does not: the cap holds.
  const ModelSpec mid = gpt(8192, 64, 2048);
  in.model = &mid;
  in.layers = 48;
  in.params = 48 * 12.0 * 8192 * 8192;
  EXPECT_DOUBLE_EQ(stage_memory(in).weights, in.params * 2 / 640 + 1e9 * 2);
}

// A ZeRO-3 stage holds its shard and, gathered beside it, at most its whole weights: a stage of
// one layer and the embedding was charged two copies of the pair (s62 sanity hunt: 1,459,200 B
// against ZeRO-2's 1,048,704 B, where one gathered copy is 136,832 B more at most).
TEST(MemoryCost, ZeroThreeGathersAtMostTheStagesWholeWeights) {
  const ModelSpec m = gpt(64, 4, 128);
  StageMemoryInput in;
  in.model = &m;
  in.dtype = Dtype::kFp16;
  in.layers = 1;
  in.params = stage_params(m, 1, 1, true, false, 2);
  in.pp = 2;
  in.dp = 2;
  in.zero = 2;
  const StageMemory two = stage_memory(in);
  in.zero = 3;
  const StageMemory three = stage_memory(in);
  EXPECT_DOUBLE_EQ(three.weights, in.params * 2 / 2 + in.params * 2);
  EXPECT_LE(three.weights + three.grads + three.optimizer, two.weights + two.grads + two.optimizer + in.params * 2);
}

// Full recompute keeps each layer's input and, for the layer being recomputed, its working set,
// whose input is that checkpoint (read in place): one layer under full recompute holds what it
// holds without recompute, not one input more (s62 sanity hunt: 5.368 against 5.360 GiB).
TEST(MemoryCost, FullRecomputeOfOneLayerHoldsWhatNoRecomputeHolds) {
  const ModelSpec m = gpt(2048, 16, 2048);
  StageMemoryInput in;
  in.model = &m;
  in.dtype = Dtype::kFp16;
  in.layers = 1;
  in.micro = 1;
  in.micro_batches = 8;
  for (const bool sp : {false, true}) {
    in.tp = sp ? 4 : 1;
    in.sequence_parallel = sp;
    in.recompute = Recompute::kNone;
    const double none = stage_memory(in).activations;
    in.recompute = Recompute::kFull;
    EXPECT_NEAR(stage_memory(in).activations, none, 1.0) << sp;
    in.layers = 4;  // and each further layer adds its checkpointed input only: 2sbh (÷t with SP)
    const double four = stage_memory(in).activations;
    in.layers = 1;
    EXPECT_NEAR(four - none, 3 * 2.0 * 2048 * 2048 / in.tp, 1.0) << sp;
  }
}

}  // namespace
}  // namespace hetsim::models
