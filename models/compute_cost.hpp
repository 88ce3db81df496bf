// SPDX-License-Identifier: Apache-2.0
// Compute cost of the ops of a decoder layer, the embedding and the LM head (forward and
// backward, every dtype), as a sequence of ops emitted into an OpSink. This is the single
// source of op costs: the predictor sums the ops, build_plan_work() stores them for the simulator.
#pragma once
#include "gpu_type.hpp"
#include "plan.hpp"
#include "plan_work.hpp"

namespace hetsim::models {


/// The host-time and GEMM main-loop constants (kFrameworkOpHost_s, kFrameworkPassHost_s, kGemmK0)
/// are the defaults of EfficiencyModel, in gpu_type.hpp.

/// FlashAttention's efficiency relative to a GEMM of the same work, as it runs inside a training
/// step. Kernel benchmarks of FlashAttention-2 reach 50-73% of A100 peak forward and 40-63%
/// backward (Dao, "FlashAttention-2", ICLR 2024, Fig. 5-7; FlashAttention-1 and the Triton kernel:
/// 25-40%), but end-to-end runs measure much less: MosaicML's llm-foundry A100-80GB table (MPT
/// 125M-30B, FSDP, seq 512-65536; validation/mpt-llm-foundry-a100-80gb.yaml) implies ~105
/// TFLOP/s for the causal attention of the 16k-65k rows, where it is 60-85% of the work, and the
/// GPT3-1.3B/2.7B 8k rows of FlashAttention-2's Table 1 (~220 TFLOP/s model FLOPs) ~120 TFLOP/s.
/// One global factor, 0.6 of the kernel-benchmark figures (0.85, 0.72), fitted once on the MPT
/// table: forward ~39% and backward ~33% of peak with the A100's 0.77 GEMM efficiency. Only
/// rows with flash_attention use it (the Megatron-LM suites predate FlashAttention).
inline constexpr double kFlashForwardRelEfficiency = 0.51;
inline constexpr double kFlashBackwardRelEfficiency = 0.43;


/// Peak rates of a device in the training dtype.
struct DeviceRates {
  double peak_flops = 0;         ///< dense peak in the GEMM dtype
  /// Peak of the ops that stay in 16-bit under FP8 training: Transformer Engine runs only the
  /// transformer blocks' linear layers in FP8; the attention core (FlashAttention / cuDNN) and the
  /// output layer stay in BF16 (NVIDIA Transformer Engine docs, "Using FP8 with Transformer
  /// Engine": te.Linear, te.LayerNormLinear, te.LayerNormMLP; Megatron-Core keeps its output
  /// layer outside TE). Equal to peak_flops for every other dtype; 0 (hand-built rates) reads as it.
  double unquantized_peak_flops = 0;
  bool fp8 = false;              ///< the block linears run in FP8 (casts and transposes added)
  double memory_Bps = 0;         ///< memory bandwidth
  EfficiencyModel eff;
  /// The same device at unquantized_peak_flops (for the attention core and the LM head).
  DeviceRates unquantized() const;
  /// Throws std::out_of_range when the device has no peak for the dtype.
  static DeviceRates of(const GpuType& gpu, Dtype dtype);
};

/// GEMM efficiency: eff(W) = gemm_efficiency * W / (W + gemm_half_work_flop): a saturating
/// ramp in the work W, the shape of measured cuBLAS efficiency versus size (NVIDIA "Matrix
/// Multiplication Background User's Guide", 2023, Fig. 2-4; Calculon, Isaev et al. SC'23 §3).
double gemm_efficiency(const DeviceRates& d, double work_flop);
/// Fraction of the device a GEMM of `outputs` output elements keeps busy:
/// min(1, outputs / full_outputs), 1 when full_outputs is 0 (EfficiencyModel::gemm_full_outputs).
double gemm_grid_fill(double outputs, double full_outputs);
/// Time of `batch` GEMMs (m x k) * (k x n): roofline max(flops / (peak eff(W)), bytes / (bw eff_mem))
/// plus one kernel's GPU-side launch gap (Williams et al., "Roofline", CACM 2009).
double gemm_time(const DeviceRates& d, double m, double n, double k, double batch, double elem_bytes);
/// Memory-bound kernel moving `bytes`: bytes / (bw eff_mem) + launch gap.
double memory_time(const DeviceRates& d, double bytes, int kernels = 1);

/// Shapes of one micro-batch on one TP rank.
struct LayerShape {
  double seq = 0, micro = 0, hidden = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0;
  int tp = 1;
  double act_bytes = 2;      ///< bytes per activation element (fp32 4, fp16/bf16/fp8 2)
  double gemm_bytes = 2;     ///< bytes per GEMM input element (fp8 1)
  bool swiglu = false;
  bool flash = false;
  bool sequence_parallel = false;
  bool dropout = true;       ///< dropout after attention, projection, MLP and embedding (masks of 1 byte)
  bool engine_kernels = false;  ///< hetsim's execution engine's kernels (TrainingSpec::engine_kernels)
  double tokens() const { return seq * micro; }
};

/// Receives the ops in execution order.
class OpSink {
 public:
  virtual ~OpSink() = default;
  /// A local kernel group: modelled GPU time, kernels launched, FLOPs executed.
  virtual void compute(const char* name, double gpu_s, int kernels, double flop) = 0;
  /// A TP collective of size_bytes per rank (see OpKind). `beside_gemm`: a sequence-parallel
  /// all-gather whose next compute op is the GEMM it feeds, or a reduce-scatter whose previous
  /// compute op is the GEMM it reduces (the pairs Plan::tp_comm_overlap hides; not the
  /// embedding's and the LM head's collectives).
  virtual void collective(OpKind kind, const char* name, double size_bytes, bool beside_gemm = false) = 0;
  /// Ops emitted between begin and end are a recompute of the forward.
  virtual void set_recompute(bool on) { recompute_ = on; }
  bool recompute() const { return recompute_; }

 protected:
  bool recompute_ = false;
};

/// One transformer block (Megatron-LM GPT layer: LN, QKV, attention core, projection,
/// bias-dropout-add, LN, MLP/SwiGLU, bias-dropout-add; Shoeybi et al. 2019 Fig. 3 for the TP
/// collectives; Korthikanti et al. 2022 §4.2.2 for sequence parallel).
void emit_layer_forward(const LayerShape& s, const DeviceRates& d, OpSink& sink);
/// Backward of one block; with recompute full the forward is re-run first (Chen et al. 2016,
/// "Training deep nets with sublinear memory cost"), with selective only the attention core
/// (Korthikanti et al. 2022 §5).
void emit_layer_backward(const LayerShape& s, const DeviceRates& d, Recompute recompute, OpSink& sink);
/// Word + position embedding (vocab-parallel with its all-reduce; Shoeybi et al. 2019 §3).
void emit_embedding_forward(const LayerShape& s, const DeviceRates& d, OpSink& sink);
void emit_embedding_backward(const LayerShape& s, const DeviceRates& d, OpSink& sink);
/// Final LN + LM head GEMM + vocab-parallel cross-entropy in fp32 (Megatron-LM).
void emit_head_forward(const LayerShape& s, const DeviceRates& d, OpSink& sink);
void emit_head_backward(const LayerShape& s, const DeviceRates& d, OpSink& sink);

}  // namespace hetsim::models
