// SPDX-License-Identifier: Apache-2.0
// Memory per GPU of a pipeline stage: weights, gradients, optimizer states (ZeRO 0-3),
// activations of the in-flight micro-batches (recompute none/selective/full, sequence
// parallel, flash attention), LM-head logits, framework reserve.
#pragma once
#include "gpu_type.hpp"
#include "plan.hpp"
#include "workload.hpp"

namespace hetsim::models {

/// CUDA/HIP context, NCCL/RCCL channel buffers, cuBLAS workspace and caching-allocator
/// fragmentation: ~0.5-0.8 GiB context on A100 (CUDA C++ Programming Guide, "Lazy loading"),
/// plus allocator slack; Megatron users budget 2-4 GiB (Korthikanti et al. 2022 §6 report 80 GB
/// devices filled to ~75 GB). Taken as 2 GiB per GPU.
inline constexpr double kFrameworkReserveBytes = 2.0 * 1024 * 1024 * 1024;

/// The reserve of a device of `vendor`: none on a CPU device, whose ranks allocate their tensors
/// from the host heap with no device context, communication buffers or caching allocator (exec's
/// CPU backend measures a tiny-gpt rank at 1.4 MiB).
inline double framework_reserve_bytes(Vendor vendor) { return vendor == Vendor::kCpu ? 0.0 : kFrameworkReserveBytes; }

/// Bytes per parameter for weights, gradients and optimizer states (Rajbhandari et al.,
/// "ZeRO", SC'20 §3.1: mixed-precision Adam = 2 + 2 + 12 bytes; fp32 Adam 4 + 4 + 8;
/// SGD with momentum keeps one state, plus the fp32 master copy in mixed precision).
/// The gradient buffer is the one the data-parallel reduction runs on: 16-bit for fp16, fp32
/// for bf16 and fp8 (Megatron-LM accumulates bf16 gradients in an fp32 `main_grad` buffer:
/// its distributed-optimizer docs give 18 bytes a parameter for bf16 Adam, 6 + 12/d sharded)
/// and for fp16 reduced in fp32 (`fp32_grad_allreduce`).
struct StateBytes {
  double weights = 0, grads = 0, optimizer = 0;
};
StateBytes state_bytes_per_param(Dtype dtype, Optimizer optimizer, bool fp32_grad_allreduce);
inline StateBytes state_bytes_per_param(const TrainingSpec& t) {
  return state_bytes_per_param(t.dtype, t.optimizer, t.fp32_grad_allreduce);
}

/// Bytes of the activation crossing a pipeline stage boundary per micro-batch, s*b*h
/// (Narayanan et al. SC'21 §4.1), in the activations' dtype (fp8 training keeps them 16-bit):
/// the one figure the predictor, the planner's estimates and the simulator send.
double boundary_activation_bytes(const ModelSpec& m, int micro_batch, Dtype dtype);

/// Activation bytes of one transformer block per micro-batch on one TP rank (Korthikanti et
/// al., "Reducing activation recomputation in large transformer models", 2022, Table 2 and
/// §4.2: 16-bit sbh(34 + 5as/h) without parallelism; 10 sbh replicated across TP without SP;
/// selective recompute drops the 5as^2b attention term; full keeps the 2sbh layer input).
/// Generalised to ffn != 4h, SwiGLU and GQA term by term, and scaled by act_bytes/2.
double layer_activation_bytes(const ModelSpec& m, double micro, int tp, bool sequence_parallel,
                              Recompute recompute, bool flash, double act_bytes);
/// Activations of the layer whose backward is running, re-materialised under full recompute.
double layer_working_bytes(const ModelSpec& m, double micro, int tp, bool sequence_parallel, bool flash,
                           double act_bytes);

/// Micro-batches (in units of one chunk of layers/interleave) whose activations stage `stage`
/// of `pp` holds at its peak: GPipe m*v; 1F1B min(pp - stage, m); interleaved 1F1B
/// (pp - stage - 1)*2 + (v - 1)*pp + 1 chunks, at most m*v (Megatron-LM schedules.py warm-up
/// count; Narayanan et al. SC'21 §2.2).
double in_flight_chunks(Schedule schedule, int stage, int pp, int micro_batches, int interleave);

struct StageMemoryInput {
  const ModelSpec* model = nullptr;
  Dtype dtype = Dtype::kBf16;
  Optimizer optimizer = Optimizer::kAdam;
  bool fp32_grad_allreduce = false;  ///< TrainingSpec::fp32_grad_allreduce
  bool flash = false;
  int layers = 0, tp = 1, stage = 0, pp = 1, dp = 1, micro_batches = 1, interleave = 1, zero = 0;
  double micro = 1;
  Schedule schedule = Schedule::k1f1b;
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;
  /// The execution engine's LM head (TrainingSpec::engine_kernels): every TP rank computes the
  /// whole vocabulary's logits and keeps their whole probabilities, and holds the whole embedding.
  bool whole_vocab = false;
  double params = 0;  ///< parameters held per GPU (before ZeRO sharding)
  double reserve_bytes = kFrameworkReserveBytes;  ///< framework_reserve_bytes() of the stage's devices
};

struct StageMemory {
  double weights = 0, grads = 0, optimizer = 0, activations = 0, reserve = 0;
  double total() const { return weights + grads + optimizer + activations + reserve; }
};
StageMemory stage_memory(const StageMemoryInput& in);

}  // namespace hetsim::models
